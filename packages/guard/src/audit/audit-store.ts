import type { Executor } from '@keel/core';
import type { Insertable } from 'kysely';
import type { DetectAuditTable, GuardDb } from '../db/schema.ts';

export type NewAuditRow = Insertable<DetectAuditTable>;

/** Writes a batch of audit entries in one statement. */
export async function insertAuditRows(db: Executor<GuardDb>, rows: readonly NewAuditRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('detect_audit')
    .values([...rows])
    .execute();
}

/** Newest entries first, optionally for one request id. */
export function listAuditRows(db: Executor<GuardDb>, options: { rid?: string; limit: number }) {
  let query = db.selectFrom('detect_audit').selectAll().orderBy('id', 'desc').limit(options.limit);
  if (options.rid) query = query.where('rid', '=', options.rid);
  return query.execute();
}

/** Removes entries older than the cutoff; returns how many went. */
export async function deleteAuditRowsBefore(db: Executor<GuardDb>, cutoffIso: string): Promise<number> {
  const result = await db.deleteFrom('detect_audit').where('created_at', '<', cutoffIso).executeTakeFirst();
  return Number(result.numDeletedRows);
}
