import {
  checkOutboundUrlResolves,
  decodeCursor,
  type Executor,
  generateSigningSecret,
  keysetPage,
  toBoolean,
  toIsoString,
} from '@keel/core';
import type { EngineContext } from '../context.ts';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors, invalidCursor } from '../errors.ts';
import { isUuid, newId } from '../ids.ts';
import type { Principal } from '../merchants/principal.ts';
import { inTransaction } from '../write.ts';
import {
  countDestinations,
  type DestinationRow,
  deleteDestinationRow,
  findMerchantDestination,
  insertDestination,
  listAttemptsOf,
  listDestinationMessages,
  listMerchantDestinations,
  updateDestinationRow,
} from './destination-store.ts';
import { OUTBOUND_EVENTS } from './events.ts';

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

async function findDestination(db: Executor<EngineDb>, principal: Principal, id: string): Promise<DestinationRow> {
  if (!isUuid(id)) throw EngineErrors.invalidId('destinationId');
  const row = await findMerchantDestination(db, principal.merchantId, id.toLowerCase());
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

/**
 * Saves a destination after the URL check (a DNS lookup, before the write path opens a transaction); returns it with
 * its Standard Webhooks signing secret (shown only here). Destination writes invalidate the cache after the commit.
 */
export async function createDestination(
  ctx: EngineContext,
  principal: Principal,
  input: DestinationInput,
): Promise<DestinationView & { signingSecret: string }> {
  const url = await checkUrl(ctx, input.url);
  const events = checkEvents(input.events);
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
  await inTransaction(ctx, async (trx) => {
    if ((await countDestinations(trx, principal.merchantId)) >= 50)
      throw EngineErrors.invalidField('a merchant has at most 50 webhook destinations');
    await insertDestination(trx, row);
  });
  await ctx.destinations.invalidate();
  return { ...toDestinationView(row), signingSecret };
}

export async function listDestinations(ctx: EngineContext, principal: Principal): Promise<DestinationView[]> {
  return (await listMerchantDestinations(ctx.db, principal.merchantId)).map(toDestinationView);
}

export async function getDestination(ctx: EngineContext, principal: Principal, id: string): Promise<DestinationView> {
  return toDestinationView(await findDestination(ctx.db, principal, id));
}

export async function updateDestination(
  ctx: EngineContext,
  principal: Principal,
  id: string,
  patch: Partial<DestinationInput>,
): Promise<DestinationView> {
  await findDestination(ctx.db, principal, id); // an unknown id is a 404 before any URL check
  const changes: Partial<DestinationRow> = { updated_at: new Date().toISOString() };
  if (patch.url !== undefined) changes.url = await checkUrl(ctx, patch.url);
  if (patch.events !== undefined) changes.events = JSON.stringify(checkEvents(patch.events));
  if (patch.secret !== undefined) changes.secret_sealed = patch.secret ? ctx.secrets.encrypt(patch.secret) : null;
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.active !== undefined) changes.active = patch.active;
  const row = await inTransaction(ctx, async (trx) =>
    updateDestinationRow(trx, (await findDestination(trx, principal, id)).id, changes),
  );
  await ctx.destinations.invalidate();
  return toDestinationView(row);
}

export async function rotateSigningSecret(
  ctx: EngineContext,
  principal: Principal,
  id: string,
): Promise<{ signingSecret: string }> {
  const signingSecret = generateSigningSecret();
  await inTransaction(ctx, async (trx) =>
    updateDestinationRow(trx, (await findDestination(trx, principal, id)).id, {
      signing_secret_sealed: ctx.secrets.encrypt(signingSecret),
      updated_at: new Date().toISOString(),
    }),
  );
  await ctx.destinations.invalidate();
  return { signingSecret };
}

/** Deletes a destination; its undelivered messages are cancelled when their turn comes. */
export async function deleteDestination(ctx: EngineContext, principal: Principal, id: string): Promise<void> {
  await inTransaction(ctx, async (trx) => deleteDestinationRow(trx, (await findDestination(trx, principal, id)).id));
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
  const destination = await findDestination(ctx.db, principal, id);
  const rows = await listDestinationMessages(ctx.db, {
    destinationId: destination.id,
    status: query.status,
    before: decodeCursor('deliveries', query.cursor, ['string'], invalidCursor)?.[0],
    limit: query.limit,
  });
  const { rows: page, next } = keysetPage('deliveries', rows, query.limit, (last) => [last.id]);
  const attempts = await listAttemptsOf(
    ctx.db,
    page.map((r) => r.id),
  );
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
    nextCursor: next,
  };
}
