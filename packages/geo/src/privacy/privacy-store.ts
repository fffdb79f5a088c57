import type { Executor } from '@keel/core';
import type { Insertable, Updateable } from 'kysely';
import type { GeoDb, PrivacyRequestTable } from '../db/schema.ts';

export async function insertPrivacyRequest(db: Executor<GeoDb>, row: Insertable<PrivacyRequestTable>): Promise<void> {
  await db.insertInto('privacy_request').values(row).execute();
}

export async function findPrivacyRequest(db: Executor<GeoDb>, id: string) {
  return db.selectFrom('privacy_request').selectAll().where('id', '=', id).executeTakeFirst();
}

/** One page of a workspace's privacy requests, newest first (ids are time-ordered). */
export async function pagePrivacyRequests(
  db: Executor<GeoDb>,
  workspaceId: string,
  limit: number,
  before: string | undefined,
) {
  let query = db.selectFrom('privacy_request').selectAll().where('workspace_id', '=', workspaceId);
  if (before) query = query.where('id', '<', before);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

export async function updatePrivacyRequest(
  db: Executor<GeoDb>,
  id: string,
  set: Updateable<PrivacyRequestTable>,
): Promise<void> {
  await db.updateTable('privacy_request').set(set).where('id', '=', id).execute();
}

/** Deletes a subject's tracking events and derived records of a workspace; returns how many of each went. */
export async function deleteSubjectRows(db: Executor<GeoDb>, workspaceId: string, subjectHash: string) {
  const events = await db
    .deleteFrom('tracking_event')
    .where('workspace_id', '=', workspaceId)
    .where('subject_hash', '=', subjectHash)
    .executeTakeFirst();
  const records = await db
    .deleteFrom('dataset_record')
    .where('workspace_id', '=', workspaceId)
    .where('subject_hash', '=', subjectHash)
    .executeTakeFirst();
  return { events: Number(events.numDeletedRows), records: Number(records.numDeletedRows) };
}
