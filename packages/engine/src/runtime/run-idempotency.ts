import {
  AppError,
  type Executor,
  IDEMPOTENCY_TABLE,
  IdempotencyErrors,
  type IdempotentResponse,
  payloadHash,
  toIsoString,
} from '@keel/core';
import type { Kysely } from 'kysely';
import type { EngineDb } from '../db/schema.ts';

const DAY_MS = 24 * 3600 * 1000;
const ABANDONED_MS = 10 * 60 * 1000;

/**
 * `idempotency_key` of chat and execute, on core's idempotency table with its semantics (same key + same body
 * replays, a different body is a 409, a run still in flight is a 409 with Retry-After, 5xx outcomes are not
 * kept). Unlike `runIdempotent`, the claim and the stored answer are separate steps, so the model call runs
 * outside any database transaction (on SQLite a transaction would hold the only connection for the call).
 */
export interface RunClaim {
  /** Stores the answer in the transaction that writes the run's results. */
  complete(trx: Executor<EngineDb>, statusCode: number, body: unknown): Promise<void>;
  /** Frees the key (5xx) or stores a client error (4xx) after a failure. */
  fail(error: unknown): Promise<void>;
}

export async function claimRun(
  db: Kysely<EngineDb>,
  scope: string,
  key: string,
  payload: unknown,
  clock: () => number,
): Promise<{ replay: IdempotentResponse<unknown> } | { claim: RunClaim }> {
  const hash = payloadHash(payload);
  const idb = db as unknown as Kysely<any>;
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = clock();
    const createdAt = new Date(now).toISOString();
    const inserted = await idb
      .insertInto(IDEMPOTENCY_TABLE)
      .values({
        scope,
        key,
        request_hash: hash,
        state: 'in_flight',
        status_code: null,
        response_body: null,
        created_at: createdAt,
        expires_at: new Date(now + DAY_MS).toISOString(),
      })
      .onConflict((oc: any) => oc.columns(['scope', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (inserted) {
      const finish = (executor: Executor<any>, statusCode: number, body: unknown) =>
        executor
          .updateTable(IDEMPOTENCY_TABLE)
          .set({ state: 'done', status_code: statusCode, response_body: JSON.stringify(body) })
          .where('scope', '=', scope)
          .where('key', '=', key)
          .execute();
      return {
        claim: {
          complete: async (trx, statusCode, body) => {
            await finish(trx, statusCode, body);
          },
          fail: async (error) => {
            if (error instanceof AppError && error.statusCode < 500)
              await finish(idb, error.statusCode, { error: { code: error.code, message: error.message } }).catch(
                () => undefined,
              );
            else
              await idb
                .deleteFrom(IDEMPOTENCY_TABLE)
                .where('scope', '=', scope)
                .where('key', '=', key)
                .execute()
                .catch(() => undefined);
          },
        },
      };
    }
    const existing = await idb
      .selectFrom(IDEMPOTENCY_TABLE)
      .selectAll()
      .where('scope', '=', scope)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!existing) continue;
    const expired = new Date(toIsoString(existing.expires_at)).getTime() <= now;
    const abandoned =
      existing.state === 'in_flight' && new Date(toIsoString(existing.created_at)).getTime() <= now - ABANDONED_MS;
    if (expired || abandoned) {
      await idb
        .deleteFrom(IDEMPOTENCY_TABLE)
        .where('scope', '=', scope)
        .where('key', '=', key)
        .where('created_at', '=', existing.created_at)
        .execute();
      continue;
    }
    if (existing.request_hash !== hash) throw IdempotencyErrors.reused();
    if (existing.state !== 'done')
      throw Object.assign(IdempotencyErrors.inFlight(), { headers: { 'retry-after': '1' } });
    return {
      replay: {
        statusCode: existing.status_code ?? 200,
        body: JSON.parse(existing.response_body ?? 'null'),
        replayed: true,
      },
    };
  }
  throw Object.assign(IdempotencyErrors.inFlight(), { headers: { 'retry-after': '1' } });
}
