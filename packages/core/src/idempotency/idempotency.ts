import type { Kysely, Transaction } from 'kysely';
import { toIsoString } from '../db/dialect.ts';
import { AppError, createError } from '../errors.ts';
import { payloadHash } from './canonical-json.ts';
import { IDEMPOTENCY_TABLE, type IdempotencyKeyTable } from './idempotency-table.ts';

interface IdempotencyDb {
  [IDEMPOTENCY_TABLE]: IdempotencyKeyTable;
}

export const IdempotencyErrors = {
  reused: createError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request', 409),
  inFlight: createError(
    'IDEMPOTENCY_KEY_IN_FLIGHT',
    'A request with this Idempotency-Key is still being processed',
    409,
  ),
  invalid: createError('IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be 1 to 255 printable ASCII characters', 400),
  missing: createError('IDEMPOTENCY_KEY_REQUIRED', 'This operation requires an Idempotency-Key header', 400),
};

export interface IdempotentRequest {
  /** Who and what: the principal and the operation, e.g. `tenant:1234|POST /graph`. */
  scope: string;
  key: string;
  /** The request as the client sent it; its canonical hash decides "same request". */
  payload: unknown;
}

export interface IdempotentResponse<T> {
  statusCode: number;
  body: T;
  /** True when this is the stored answer to an earlier request with the same key. */
  replayed: boolean;
}

export interface IdempotencyOptions {
  /** How long a key is remembered; at least 24 h by DESIGN.md. */
  ttlMs?: number;
  /** A claim older than this is treated as abandoned (its process died) and may be taken over. */
  abandonAfterMs?: number;
  /** The clock (ms since the epoch); tests move it. */
  now?: () => number;
}

const DAY = 24 * 60 * 60 * 1000;

/** Checks an Idempotency-Key header value: 1–255 printable ASCII characters. */
export function checkIdempotencyKey(value: unknown, required: boolean): string | undefined {
  if (value === undefined || value === '') {
    if (required) throw IdempotencyErrors.missing();
    return undefined;
  }
  if (typeof value !== 'string' || !/^[\x21-\x7E]{1,255}$/.test(value)) throw IdempotencyErrors.invalid();
  return value;
}

/** What a claim of a fresh key lets its holder do: store the answer, or give the key up after a failure. */
export interface IdempotencyClaim {
  /** Stores the answer; call it inside the transaction that writes the business change, so both commit together. */
  complete(trx: Kysely<any> | Transaction<any>, statusCode: number, body: unknown): Promise<void>;
  /** After a failure: a 4xx AppError is stored and replayed like an answer; anything else frees the key for a retry. */
  fail(error: unknown): Promise<void>;
}

/** Either the stored answer to an earlier request with the same key and payload, or the claim of a fresh key. */
export type ClaimOutcome = { replay: IdempotentResponse<unknown> } | { claim: IdempotencyClaim };

/**
 * The idempotency primitive: claims (scope, key) for the request whose canonical hash is `payloadHash(payload)`.
 * A fresh (or expired, or abandoned) key is claimed; the same key with the same payload returns the stored answer;
 * with a different payload it is a 409 (`IDEMPOTENCY_KEY_REUSED`); while the first request still runs, a 409 with
 * Retry-After. The claim is its own statement, so slow work (a model call) can run outside any transaction.
 */
export async function claimIdempotencyKey(
  db: Kysely<any>,
  request: IdempotentRequest,
  options: IdempotencyOptions = {},
): Promise<ClaimOutcome> {
  const settings = {
    ttlMs: options.ttlMs ?? DAY,
    abandonAfterMs: options.abandonAfterMs ?? 60_000,
    now: options.now ?? Date.now,
  };
  const idb = db as Kysely<IdempotencyDb>;
  const hash = payloadHash(request.payload);
  const finish = (executor: Kysely<any> | Transaction<any>, statusCode: number, body: unknown) =>
    (executor as Kysely<IdempotencyDb>)
      .updateTable(IDEMPOTENCY_TABLE)
      .set({ state: 'done', status_code: statusCode, response_body: JSON.stringify(body) })
      .where('scope', '=', request.scope)
      .where('key', '=', request.key)
      .execute();
  const claim: IdempotencyClaim = {
    complete: async (trx, statusCode, body) => {
      await finish(trx, statusCode, body);
    },
    fail: async (error) => {
      if (error instanceof AppError && error.statusCode < 500) {
        await finish(idb, error.statusCode, { error: { code: error.code, message: error.message } }).catch(
          () => undefined,
        );
      } else {
        await idb
          .deleteFrom(IDEMPOTENCY_TABLE)
          .where('scope', '=', request.scope)
          .where('key', '=', request.key)
          .execute()
          .catch(() => undefined);
      }
    },
  };
  // A few rounds: a row deleted or taken over between two statements sends us round again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = settings.now();
    const row = {
      scope: request.scope,
      key: request.key,
      request_hash: hash,
      state: 'in_flight',
      status_code: null,
      response_body: null,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + settings.ttlMs).toISOString(),
    };
    const inserted = await idb
      .insertInto(IDEMPOTENCY_TABLE)
      .values(row)
      .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (inserted) return { claim };

    const existing = await idb
      .selectFrom(IDEMPOTENCY_TABLE)
      .selectAll()
      .where('scope', '=', request.scope)
      .where('key', '=', request.key)
      .executeTakeFirst();
    if (!existing) continue; // deleted between the two statements
    const expired = new Date(toIsoString(existing.expires_at)).getTime() <= now;
    const abandoned =
      existing.state === 'in_flight' &&
      new Date(toIsoString(existing.created_at)).getTime() <= now - settings.abandonAfterMs;
    if (expired || abandoned) {
      // Take the key over only if nobody else did in the meantime (compare-and-swap on the old row).
      const taken = await idb
        .updateTable(IDEMPOTENCY_TABLE)
        .set({
          request_hash: hash,
          state: 'in_flight',
          status_code: null,
          response_body: null,
          created_at: row.created_at,
          expires_at: row.expires_at,
        })
        .where('scope', '=', request.scope)
        .where('key', '=', request.key)
        .where('created_at', '=', existing.created_at)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return { claim };
      continue;
    }
    if (existing.request_hash !== hash) throw IdempotencyErrors.reused();
    if (existing.state !== 'done') break;
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

/**
 * Runs `work` at most once per (scope, key), on `claimIdempotencyKey`: `work` runs in a transaction (`transact`,
 * by default the database's own) and the answer is stored in that same transaction, so the business write and its
 * receipt commit together. A 4xx AppError is stored and replayed like a success; a 5xx or unexpected error
 * releases the key so the client can retry.
 */
export async function runIdempotent<DB, T>(
  db: Kysely<DB>,
  request: IdempotentRequest,
  work: (trx: Transaction<DB>) => Promise<{ statusCode: number; body: T }>,
  options: IdempotencyOptions & {
    transact?: <R>(work: (trx: Transaction<DB>) => Promise<R>) => Promise<R>;
  } = {},
): Promise<IdempotentResponse<T>> {
  const claimed = await claimIdempotencyKey(db as Kysely<any>, request, options);
  if ('replay' in claimed) return claimed.replay as IdempotentResponse<T>;
  const transact = options.transact ?? ((inner) => db.transaction().execute(inner));
  try {
    const result = await transact(async (trx) => {
      const outcome = await work(trx);
      await claimed.claim.complete(trx, outcome.statusCode, outcome.body);
      return outcome;
    });
    return { ...result, replayed: false };
  } catch (error) {
    await claimed.claim.fail(error);
    throw error;
  }
}

/** Deletes keys past their expiry; run it now and then. */
export async function pruneIdempotencyKeys(db: Kysely<any>, now = new Date()): Promise<number> {
  const result = await (db as Kysely<IdempotencyDb>)
    .deleteFrom(IDEMPOTENCY_TABLE)
    .where('expires_at', '<', now.toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
