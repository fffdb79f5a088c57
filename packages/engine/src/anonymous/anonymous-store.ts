import type { Executor } from '@keel/core';
import type { Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';

type Timestamp = string | Date;

export interface AnonymousEventTable {
  id: string;
  realm_id: string;
  /** Event name, e.g. `product_view`. */
  type: string;
  /** `api`, `catalog` or `runtime`. */
  source: string;
  occurred_at: Timestamp;
  /** `YYYY-MM-DDTHH:00:00.000Z` and `YYYY-MM-DD` (UTC) of occurred_at: the summary buckets. */
  occurred_hour: string;
  occurred_day: string;
  /** Pseudonyms (keyed HMAC) of the subject and session identifiers; the identifiers are never stored. */
  subject: string | null;
  session: string | null;
  /** Flat JSON object of the properties after PII removal. */
  properties: unknown;
  redactions: number;
  idempotency_hash: string | null;
  payload_hash: string | null;
  received_at: Timestamp;
}

export interface AnonymousPseudonymKeyTable {
  realm_id: string;
  version: number;
  /** The realm's current 256-bit HMAC key, sealed with the engine's secret box. */
  key_sealed: string;
  created_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    anonymous_event: AnonymousEventTable;
    anonymous_pseudonym_key: AnonymousPseudonymKeyTable;
  }
}

export type AnonymousEventRow = Selectable<AnonymousEventTable>;
export type PseudonymKeyRow = Selectable<AnonymousPseudonymKeyTable>;

/** Stores events (one multi-row insert). */
export async function insertAnonymousEvents(db: Executor<EngineDb>, rows: readonly AnonymousEventRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('anonymous_event').values(rows).execute();
}

/** The realm's events recorded under these idempotency hashes. */
export function findEventsByIdempotency(
  db: Executor<EngineDb>,
  realmId: string,
  hashes: readonly string[],
): Promise<AnonymousEventRow[]> {
  if (hashes.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('anonymous_event')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('idempotency_hash', 'in', hashes)
    .execute();
}

export interface AnonymousEventFilter {
  afterId?: string | undefined;
  type?: string | undefined;
  source?: string | undefined;
  subject?: string | undefined;
  session?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** The realm's events matching the filter (occurred_at in [from, to)), newest id first, at most `limit`. */
export function listAnonymousEvents(
  db: Executor<EngineDb>,
  realmId: string,
  filter: AnonymousEventFilter,
  limit: number,
): Promise<AnonymousEventRow[]> {
  let q = db.selectFrom('anonymous_event').selectAll().where('realm_id', '=', realmId);
  if (filter.afterId) q = q.where('id', '<', filter.afterId);
  if (filter.type) q = q.where('type', '=', filter.type);
  if (filter.source) q = q.where('source', '=', filter.source);
  if (filter.subject) q = q.where('subject', '=', filter.subject);
  if (filter.session) q = q.where('session', '=', filter.session);
  if (filter.from) q = q.where('occurred_at', '>=', filter.from);
  if (filter.to) q = q.where('occurred_at', '<', filter.to);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** Event counts of the realm with occurred_at in [from, to), by bucket and type, oldest bucket first, at most `limit` groups. */
export async function countAnonymousEvents(
  db: Executor<EngineDb>,
  realmId: string,
  filter: { from: string; to: string; type?: string | undefined; source?: string | undefined },
  bucket: 'hour' | 'day',
  limit: number,
): Promise<{ bucket: string; type: string; count: number }[]> {
  const column = bucket === 'hour' ? 'occurred_hour' : 'occurred_day';
  let q = db
    .selectFrom('anonymous_event')
    .select([`${column} as bucket`, 'type', (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('realm_id', '=', realmId)
    .where('occurred_at', '>=', filter.from)
    .where('occurred_at', '<', filter.to);
  if (filter.type) q = q.where('type', '=', filter.type);
  if (filter.source) q = q.where('source', '=', filter.source);
  const rows = await q.groupBy([column, 'type']).orderBy(column).orderBy('type').limit(limit).execute();
  return rows.map((r) => ({ bucket: r.bucket, type: r.type, count: Number(r.count) }));
}

/** The realm's current pseudonymization key, if it has one. */
export function findPseudonymKey(db: Executor<EngineDb>, realmId: string): Promise<PseudonymKeyRow | undefined> {
  return db.selectFrom('anonymous_pseudonym_key').selectAll().where('realm_id', '=', realmId).executeTakeFirst();
}

/** Creates the realm's first key; does nothing when another writer created one first. */
export async function insertPseudonymKey(db: Executor<EngineDb>, row: PseudonymKeyRow): Promise<void> {
  await db
    .insertInto('anonymous_pseudonym_key')
    .values(row)
    .onConflict((oc) => oc.column('realm_id').doNothing())
    .execute();
}

/** Replaces key version `fromVersion` by `row` (the old key is overwritten); false when it was already replaced. */
export async function replacePseudonymKey(
  db: Executor<EngineDb>,
  fromVersion: number,
  row: PseudonymKeyRow,
): Promise<boolean> {
  const result = await db
    .updateTable('anonymous_pseudonym_key')
    .set({ version: row.version, key_sealed: row.key_sealed, created_at: row.created_at })
    .where('realm_id', '=', row.realm_id)
    .where('version', '=', fromVersion)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
