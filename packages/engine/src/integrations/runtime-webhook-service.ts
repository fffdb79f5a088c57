import { checkOutboundUrlResolves, fromJsonColumn, generateSigningSecret, toBoolean, toIsoString } from '@keel/core';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { isUuid, newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { listAttemptsOf, listDestinationMessages } from '../webhooks/destination-store.ts';
import { RUNTIME_EVENTS } from '../webhooks/events.ts';
import { inTransaction } from '../write.ts';
import {
  countRuntimeWebhooks,
  deleteRuntimeWebhookRow,
  findRuntimeWebhook,
  insertRuntimeWebhook,
  listRuntimeWebhooks,
  RUNTIME_TARGET_PREFIX,
  type RuntimeWebhookRow,
} from './runtime-webhook-store.ts';

/** Webhooks a realm may hold. */
export const MAX_RUNTIME_WEBHOOKS = 20;

export interface RuntimeWebhookInput {
  url: string;
  events: string[];
  description?: string | undefined;
}

function toWebhookView(row: RuntimeWebhookRow) {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: fromJsonColumn<string[]>(row.events),
    active: toBoolean(row.active),
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
  };
}

function checkEvents(events: string[]): string[] {
  const known = new Set<string>([...RUNTIME_EVENTS, '*']);
  const unknown = events.filter((event) => !known.has(event));
  if (unknown.length > 0)
    throw RuntimeErrors.invalid(
      `unknown events: ${unknown.slice(0, 5).join(', ')} (known: * or ${RUNTIME_EVENTS.join(', ')})`,
    );
  return [...new Set(events)];
}

async function webhookOf(rt: RuntimeContext, realmId: string, id: string): Promise<RuntimeWebhookRow> {
  const row = isUuid(id) ? await findRuntimeWebhook(rt.db, realmId, id.toLowerCase()) : undefined;
  if (!row) throw RuntimeErrors.notFound('Runtime webhook', id);
  return row;
}

/**
 * Creates a signed runtime webhook (developer+): public HTTPS only (loopback and http only with
 * KEEL_ALLOW_PRIVATE_URLS=true), checked before anything is stored; answers its Standard Webhooks signing secret
 * (`whsec_…`) once. At most 20 per realm.
 */
export async function createRuntimeWebhook(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: RuntimeWebhookInput,
) {
  const realmId = requirePermission(principal, 'config:write');
  const events = checkEvents(input.events);
  const url = (
    await checkOutboundUrlResolves(input.url, { allowPrivate: rt.engine.config.core.allowPrivateUrls })
  ).toString();
  const signingSecret = generateSigningSecret();
  const now = nowIso(rt);
  const row: RuntimeWebhookRow = {
    id: newId(),
    realm_id: realmId,
    url,
    description: input.description ?? null,
    events: JSON.stringify(events),
    signing_secret_sealed: rt.engine.secrets.encrypt(signingSecret),
    active: true,
    created_by: principal.identityId,
    created_at: now,
    updated_at: now,
  };
  await inTransaction(rt.engine, async (trx) => {
    if ((await countRuntimeWebhooks(trx, realmId)) >= MAX_RUNTIME_WEBHOOKS)
      throw RuntimeErrors.limit(`a realm has at most ${MAX_RUNTIME_WEBHOOKS} runtime webhooks`);
    await insertRuntimeWebhook(trx, row);
  });
  await rt.engine.destinations.invalidate();
  return { ...toWebhookView(row), signing_secret: signingSecret };
}

/** The realm's runtime webhooks (any role), newest first; never a secret. */
export async function listRuntimeWebhookPage(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const rows = await listRuntimeWebhooks(
    rt.db,
    realmId,
    cursorAfterId('runtime-webhooks', query.cursor),
    query.limit + 1,
  );
  return idPage('runtime-webhooks', rows, query.limit, toWebhookView);
}

export async function getRuntimeWebhook(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  return toWebhookView(await webhookOf(rt, requirePermission(principal, 'config:read'), id));
}

/** Deletes a webhook (developer+); its undelivered messages are cancelled when their turn comes. */
export async function deleteRuntimeWebhook(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  await inTransaction(rt.engine, async (trx) => {
    const row = isUuid(id) ? await findRuntimeWebhook(trx, realmId, id.toLowerCase()) : undefined;
    if (!row) throw RuntimeErrors.notFound('Runtime webhook', id);
    await deleteRuntimeWebhookRow(trx, row.id);
  });
  await rt.engine.destinations.invalidate();
}

/** A webhook's delivery log (any role): its messages, newest first, each with every attempt. */
export async function listRuntimeWebhookDeliveries(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  query: { limit: number; cursor?: string | undefined },
) {
  const webhook = await webhookOf(rt, requirePermission(principal, 'config:read'), id);
  const rows = await listDestinationMessages(rt.db, {
    destinationId: `${RUNTIME_TARGET_PREFIX}${webhook.id}`,
    before: cursorAfterId('runtime-webhook-deliveries', query.cursor),
    limit: query.limit,
  });
  const attempts = await listAttemptsOf(
    rt.db,
    rows.slice(0, query.limit).map((row) => row.id),
  );
  return idPage('runtime-webhook-deliveries', rows, query.limit, (row) => ({
    id: row.id,
    event: row.topic,
    status: row.status,
    attempts: Number(row.attempts),
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: toIsoString(row.created_at),
    delivered_at: row.delivered_at === null ? null : toIsoString(row.delivered_at),
    next_attempt_at: row.status === 'pending' ? toIsoString(row.next_attempt_at) : null,
    log: attempts
      .filter((attempt) => attempt.message_id === row.id)
      .map((attempt) => ({
        attempt: Number(attempt.attempt),
        attempted_at: toIsoString(attempt.attempted_at),
        duration_ms: Number(attempt.duration_ms),
        status_code: attempt.status_code,
        success: toBoolean(attempt.success),
        error: attempt.error,
      })),
  }));
}
