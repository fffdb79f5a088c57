import {
  checkIdempotencyKey,
  type IdempotentRequest,
  type IdempotentResponse,
  isUniqueViolation,
  runIdempotent,
  spanOrigin,
} from '@keel/core';
import type { Transaction } from 'kysely';
import type { EngineContext } from './context.ts';
import type { EngineDb } from './db/schema.ts';
import type { Principal } from './merchants/principal.ts';
import { createEventSink, type EventSink } from './webhooks/events.ts';

/** What the write path needs: the database, its group commit and the delivery worker's wake-up. */
export type WriteContext = Pick<EngineContext, 'db' | 'writes' | 'notifyOutbox' | 'catalogActivity'>;

/** A business write: its statements run on `trx`; the events it emits on `sink` reach the outbox with it. */
export type WriteWork<T> = (trx: Transaction<EngineDb>, sink: EventSink) => Promise<T>;

/** Runs `work` again when a concurrent writer won a unique-index race (it then finds the row and updates it). */
export async function retryOnUniqueViolation<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await work();
    } catch (error) {
      if (i >= attempts || !isUniqueViolation(error)) throw error;
    }
  }
}

/**
 * The engine's one write path, for every business write (REST, MCP, ingress, CLI, workers): `work` runs in a
 * transaction of `ctx.writes` (group commit on SQLite, its own transaction on PostgreSQL), its events are flushed
 * into the outbox in that transaction, a lost unique-index race is retried, and the delivery worker is woken only
 * when messages were queued (a wake-up costs the worker a claim query). With `idempotency`, the same path plus the
 * stored answer: the answer commits with the write, and the same key and payload replay it.
 */
export async function runWrite<T>(
  ctx: WriteContext,
  idempotency: IdempotentRequest | undefined,
  work: WriteWork<{ statusCode: number; body: T }>,
): Promise<IdempotentResponse<T>> {
  let queued = 0;
  let sink: EventSink | undefined;
  // The span of the request or job making this write: its outbox messages continue that trace.
  const origin = spanOrigin();
  const withEvents = async (trx: Transaction<EngineDb>) => {
    queued = 0;
    sink = createEventSink(origin);
    const value = await work(trx, sink);
    queued = await sink.flush(trx);
    return value;
  };
  const outcome = await retryOnUniqueViolation(async () =>
    idempotency === undefined
      ? { ...(await ctx.writes.run(withEvents)), replayed: false }
      : runIdempotent(ctx.db, idempotency, withEvents, { transact: (inner) => ctx.writes.run(inner) }),
  );
  if (queued > 0) ctx.notifyOutbox();
  // The catalog's anonymous events of this write, once it committed (a replay wrote nothing).
  if (ctx.catalogActivity && sink && !outcome.replayed) ctx.catalogActivity.committed(sink.emitted());
  return outcome;
}

/** A write without an idempotency key, on the write path (`runWrite`); answers what `work` returns. */
export async function inTransaction<T>(ctx: WriteContext, work: WriteWork<T>): Promise<T> {
  const outcome = await runWrite(ctx, undefined, async (trx, sink) => ({
    statusCode: 200,
    body: await work(trx, sink),
  }));
  return outcome.body;
}

/**
 * A REST write that honours an `Idempotency-Key` header (required or optional), on the write path (`runWrite`):
 * the key is scoped to the calling key and the operation.
 */
export async function idempotentWrite<T>(
  ctx: WriteContext,
  principal: Principal,
  operation: string,
  rawKey: unknown,
  required: boolean,
  payload: unknown,
  work: WriteWork<{ statusCode: number; body: T }>,
): Promise<IdempotentResponse<T>> {
  const key = checkIdempotencyKey(rawKey, required);
  return runWrite(
    ctx,
    key === undefined ? undefined : { scope: `${principal.keyId}|${operation}`, key, payload },
    work,
  );
}
