import { checkIdempotencyKey, type IdempotentResponse, runIdempotent } from '@keel/core';
import type { Transaction } from 'kysely';
import { retryOnUniqueViolation } from './catalog/product-service.ts';
import type { EngineContext } from './context.ts';
import type { EngineDb } from './db/schema.ts';
import type { Principal } from './merchants/principal.ts';
import { createEventSink, type EventSink } from './webhooks/events.ts';

export type WriteWork<T> = (trx: Transaction<EngineDb>, sink: EventSink) => Promise<T>;

/**
 * Runs one write in a transaction with its outbound events (flushed into the outbox inside the same
 * transaction), retried when it lost a unique-index race, then wakes the delivery worker when it queued messages
 * (a wake-up costs the worker a claim query, which is a write; writes with no receivers skip it).
 */
export async function inTransaction<T>(ctx: EngineContext, work: WriteWork<T>): Promise<T> {
  let queued = 0;
  const result = await retryOnUniqueViolation(() =>
    ctx.writes.run(async (trx) => {
      const sink = createEventSink();
      const value = await work(trx, sink);
      queued = await sink.flush(trx);
      return value;
    }),
  );
  if (queued > 0) ctx.notifyOutbox();
  return result;
}

/**
 * A write that honours an `Idempotency-Key` (required or optional): the business write, its events and the
 * stored response commit together; a retry with the same key and payload replays the first response.
 */
export async function idempotentWrite<T>(
  ctx: EngineContext,
  principal: Principal,
  operation: string,
  rawKey: unknown,
  required: boolean,
  payload: unknown,
  work: WriteWork<{ statusCode: number; body: T }>,
): Promise<IdempotentResponse<T>> {
  const key = checkIdempotencyKey(rawKey, required);
  if (key === undefined) {
    const outcome = await inTransaction(ctx, work);
    return { ...outcome, replayed: false };
  }
  let queued = 0;
  const outcome = await retryOnUniqueViolation(() =>
    runIdempotent(ctx.db, { scope: `${principal.keyId}|${operation}`, key, payload }, async (trx) => {
      const sink = createEventSink();
      const value = await work(trx, sink);
      queued = await sink.flush(trx);
      return value;
    }),
  );
  if (queued > 0) ctx.notifyOutbox();
  return outcome;
}
