import { checkOutboundUrlResolves, generateSigningSecret, toBoolean, toIsoString } from '@keel/core';
import type { Selectable } from 'kysely';
import type { EngineContext } from '../context.ts';
import type { WebhookDestinationTable } from '../db/schema.ts';
import { EngineErrors } from '../errors.ts';
import { isUuid, newId } from '../ids.ts';
import type { Principal } from '../merchants/principal.ts';
import { OUTBOUND_EVENTS } from './events.ts';

type DestinationRow = Selectable<WebhookDestinationTable>;

export interface DestinationView {
  id: string;
  merchantId: string;
  url: string;
  description: string | null;
  events: string[];
  hasSecret: boolean;
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

export function toDestinationView(row: DestinationRow): DestinationView {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    url: row.url,
    description: row.description,
    events: JSON.parse(row.events) as string[],
    hasSecret: row.secret_sealed !== null,
    active: toBoolean(row.active),
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}

function checkEvents(events: string[]): string[] {
  const known = new Set<string>([...OUTBOUND_EVENTS, '*']);
  const unknown = events.filter((e) => !known.has(e));
  if (unknown.length > 0)
    throw EngineErrors.invalidField(
      `unknown events: ${unknown.slice(0, 5).join(', ')} (known: * or ${OUTBOUND_EVENTS.join(', ')})`,
    );
  return [...new Set(events)];
}

/** Public HTTPS with a publicly resolving host (loopback and http only with KEEL_ALLOW_PRIVATE_URLS=true). */
async function checkUrl(ctx: EngineContext, url: string): Promise<string> {
  return (await checkOutboundUrlResolves(url, { allowPrivate: ctx.config.core.allowPrivateUrls })).toString();
}

async function findDestination(ctx: EngineContext, principal: Principal, id: string): Promise<DestinationRow> {
  if (!isUuid(id)) throw EngineErrors.invalidId('destinationId');
  const row = await ctx.db
    .selectFrom('webhook_destination')
    .selectAll()
    .where('id', '=', id.toLowerCase())
    .where('merchant_id', '=', principal.merchantId)
    .executeTakeFirst();
  if (!row) throw EngineErrors.destinationNotFound(id);
  return row;
}

export interface DestinationInput {
  url: string;
  events: string[];
  secret?: string | null | undefined;
  description?: string | null | undefined;
  active?: boolean | undefined;
}

/** Saves a destination after the URL check; returns it with its Standard Webhooks signing secret (shown only here). */
export async function createDestination(
  ctx: EngineContext,
  principal: Principal,
  input: DestinationInput,
): Promise<DestinationView & { signingSecret: string }> {
  const url = await checkUrl(ctx, input.url);
  const events = checkEvents(input.events);
  const count = await ctx.db
    .selectFrom('webhook_destination')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', principal.merchantId)
    .executeTakeFirstOrThrow();
  if (Number(count.n) >= 50) throw EngineErrors.invalidField('a merchant has at most 50 webhook destinations');
  const signingSecret = generateSigningSecret();
  const now = new Date().toISOString();
  const row: DestinationRow = {
    id: newId(),
    merchant_id: principal.merchantId,
    url,
    description: input.description ?? null,
    events: JSON.stringify(events),
    secret_sealed: input.secret ? ctx.secrets.encrypt(input.secret) : null,
    signing_secret_sealed: ctx.secrets.encrypt(signingSecret),
    active: input.active ?? true,
    created_at: now,
    updated_at: now,
  };
  await ctx.db.insertInto('webhook_destination').values(row).execute();
  await ctx.destinations.invalidate();
  return { ...toDestinationView(row), signingSecret };
}

export async function listDestinations(ctx: EngineContext, principal: Principal): Promise<DestinationView[]> {
  const rows = await ctx.db
    .selectFrom('webhook_destination')
    .selectAll()
    .where('merchant_id', '=', principal.merchantId)
    .orderBy('created_at')
    .limit(50)
    .execute();
  return rows.map(toDestinationView);
}

export async function getDestination(ctx: EngineContext, principal: Principal, id: string): Promise<DestinationView> {
  return toDestinationView(await findDestination(ctx, principal, id));
}

export async function updateDestination(
  ctx: EngineContext,
  principal: Principal,
  id: string,
  patch: Partial<DestinationInput>,
): Promise<DestinationView> {
  const existing = await findDestination(ctx, principal, id);
  const changes: Partial<DestinationRow> = { updated_at: new Date().toISOString() };
  if (patch.url !== undefined) changes.url = await checkUrl(ctx, patch.url);
  if (patch.events !== undefined) changes.events = JSON.stringify(checkEvents(patch.events));
  if (patch.secret !== undefined) changes.secret_sealed = patch.secret ? ctx.secrets.encrypt(patch.secret) : null;
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.active !== undefined) changes.active = patch.active;
  const row = (await ctx.db
    .updateTable('webhook_destination')
    .set(changes)
    .where('id', '=', existing.id)
    .returningAll()
    .executeTakeFirst())!;
  await ctx.destinations.invalidate();
  return toDestinationView(row);
}

export async function rotateSigningSecret(
  ctx: EngineContext,
  principal: Principal,
  id: string,
): Promise<{ signingSecret: string }> {
  const existing = await findDestination(ctx, principal, id);
  const signingSecret = generateSigningSecret();
  await ctx.db
    .updateTable('webhook_destination')
    .set({ signing_secret_sealed: ctx.secrets.encrypt(signingSecret), updated_at: new Date().toISOString() })
    .where('id', '=', existing.id)
    .execute();
  await ctx.destinations.invalidate();
  return { signingSecret };
}

/** Deletes a destination; its undelivered messages are cancelled when their turn comes. */
export async function deleteDestination(ctx: EngineContext, principal: Principal, id: string): Promise<void> {
  const existing = await findDestination(ctx, principal, id);
  await ctx.db.deleteFrom('webhook_destination').where('id', '=', existing.id).execute();
  await ctx.destinations.invalidate();
}

export interface DeliveryView {
  id: string;
  event: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
  log: {
    attempt: number;
    attemptedAt: string;
    durationMs: number;
    statusCode: number | null;
    success: boolean;
    error: string | null;
  }[];
}

/** The delivery log of a destination: its messages, newest first, each with its attempts. */
export async function listDeliveries(
  ctx: EngineContext,
  principal: Principal,
  id: string,
  query: { status?: string | undefined; limit: number; cursor?: string | undefined },
): Promise<{ data: DeliveryView[]; nextCursor: string | null }> {
  const destination = await findDestination(ctx, principal, id);
  let q = ctx.db.selectFrom('outbox_message').selectAll().where('target', '=', destination.id);
  if (query.status !== undefined) q = q.where('status', '=', query.status);
  if (query.cursor !== undefined) {
    if (!/^msg_[0-9a-f]{32}$/.test(query.cursor))
      throw EngineErrors.invalidField('cursor is not a cursor this list returned');
    q = q.where('id', '<', query.cursor);
  }
  const rows = await q
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  const page = rows.slice(0, query.limit);
  const attempts = page.length
    ? await ctx.db
        .selectFrom('outbox_attempt')
        .selectAll()
        .where(
          'message_id',
          'in',
          page.map((r) => r.id),
        )
        .orderBy('attempt')
        .execute()
    : [];
  return {
    data: page.map((row) => ({
      id: row.id,
      event: row.topic,
      status: row.status,
      attempts: Number(row.attempts),
      lastStatusCode: row.last_status_code,
      lastError: row.last_error,
      createdAt: toIsoString(row.created_at),
      deliveredAt: row.delivered_at === null ? null : toIsoString(row.delivered_at),
      nextAttemptAt: row.status === 'pending' ? toIsoString(row.next_attempt_at) : null,
      log: attempts
        .filter((a) => a.message_id === row.id)
        .map((a) => ({
          attempt: Number(a.attempt),
          attemptedAt: toIsoString(a.attempted_at),
          durationMs: Number(a.duration_ms),
          statusCode: a.status_code,
          success: toBoolean(a.success),
          error: a.error,
        })),
    })),
    nextCursor: rows.length > query.limit ? page.at(-1)!.id : null,
  };
}
