import type { Executor } from '@keel/core';
import type { Insertable, Updateable } from 'kysely';
import type { ExportTable, GeoDb } from '../db/schema.ts';

export async function insertExport(db: Executor<GeoDb>, row: Insertable<ExportTable>): Promise<void> {
  await db.insertInto('export_job').values(row).execute();
}

export async function findExport(db: Executor<GeoDb>, id: string) {
  return db.selectFrom('export_job').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A job's status and row count, or undefined. */
export async function findExportStatus(db: Executor<GeoDb>, id: string) {
  return db.selectFrom('export_job').select(['status', 'row_count']).where('id', '=', id).executeTakeFirst();
}

/** One page of a workspace's exports, newest first (ids are time-ordered); privacy access exports are not listed. */
export async function pageExports(db: Executor<GeoDb>, workspaceId: string, limit: number, before: string | undefined) {
  let query = db
    .selectFrom('export_job')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('source', '!=', 'privacy_access');
  if (before) query = query.where('id', '<', before);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

export async function updateExport(db: Executor<GeoDb>, id: string, set: Updateable<ExportTable>): Promise<void> {
  await db.updateTable('export_job').set(set).where('id', '=', id).execute();
}

/** The ids of a workspace's exports of one privacy subject. */
export async function subjectExportIds(db: Executor<GeoDb>, workspaceId: string, subjectHash: string) {
  return db
    .selectFrom('export_job')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('subject_hash', '=', subjectHash)
    .execute();
}

export async function deleteExportChunks(db: Executor<GeoDb>, exportId: string): Promise<void> {
  await db.deleteFrom('export_chunk').where('export_id', '=', exportId).execute();
}

export async function insertExportChunk(db: Executor<GeoDb>, exportId: string, seq: number, data: string) {
  await db.insertInto('export_chunk').values({ export_id: exportId, seq, data }).execute();
}

/** The base64 data of one chunk of an export, or undefined past the last one. */
export async function findExportChunk(db: Executor<GeoDb>, exportId: string, seq: number) {
  return db
    .selectFrom('export_chunk')
    .select('data')
    .where('export_id', '=', exportId)
    .where('seq', '=', seq)
    .executeTakeFirst();
}

/** Up to `limit` ids of expired exports not yet pruned, soonest expiry first (the partial index on `expires_at`). */
export async function expiredExportIds(db: Executor<GeoDb>, now: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('export_job')
    .select('id')
    .where('pruned_at', 'is', null)
    .where('expires_at', '<', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/** Deletes the stored bytes of these exports and marks them pruned (the caller owns the transaction). */
export async function pruneExports(db: Executor<GeoDb>, ids: string[], now: string): Promise<void> {
  await db.deleteFrom('export_chunk').where('export_id', 'in', ids).execute();
  await db.updateTable('export_job').set({ pruned_at: now }).where('id', 'in', ids).execute();
}
