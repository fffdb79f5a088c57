import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { DatasetRecordTable, GeoDb, TrackingEventTable } from '../db/schema.ts';

const INSERT_CHUNK = 200; // 18 columns × 200 rows stays below every engine's bound-parameter limit

export async function insertRecords(db: Executor<GeoDb>, rows: Insertable<DatasetRecordTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db
      .insertInto('dataset_record')
      .values(rows.slice(i, i + INSERT_CHUNK))
      .execute();
  }
}

/** One page of a dataset, newest first, strictly after the cursor's id (keyset; served by `dataset_record_page`). */
export async function pageRecords(
  db: Executor<GeoDb>,
  query: { workspaceId: string; dataset: string; mode: string; limit: number; beforeId: string | undefined },
): Promise<Selectable<DatasetRecordTable>[]> {
  let q = db
    .selectFrom('dataset_record')
    .selectAll()
    .where('workspace_id', '=', query.workspaceId)
    .where('dataset', '=', query.dataset)
    .where('mode', '=', query.mode);
  if (query.beforeId !== undefined) q = q.where('id', '<', query.beforeId);
  return q.orderBy('id', 'desc').limit(query.limit).execute();
}

export async function findRecord(db: Executor<GeoDb>, workspaceId: string, dataset: string, id: string) {
  return db
    .selectFrom('dataset_record')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('dataset', '=', dataset)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The newest record of a dataset with this `key` in a workspace (keys are not unique: the latest wins). */
export async function findRecordByKey(db: Executor<GeoDb>, workspaceId: string, dataset: string, key: string) {
  return db
    .selectFrom('dataset_record')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('dataset', '=', dataset)
    .where('record_key', '=', key)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** A run's record with this key among its `metrics` and `experiments` records, or undefined. */
export async function findRunMetricRecord(db: Executor<GeoDb>, workspaceId: string, runId: string, recordKey: string) {
  return db
    .selectFrom('dataset_record')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('run_id', '=', runId)
    .where('record_key', '=', recordKey)
    .where('dataset', 'in', ['metrics', 'experiments'])
    .executeTakeFirst();
}

/** A run's run-wide metric records (keys ending in `:all`): id, key and 95% interval. */
export async function overallMetricRecords(db: Executor<GeoDb>, workspaceId: string, runId: string) {
  return db
    .selectFrom('dataset_record')
    .select(['id', 'record_key', 'confidence_value', 'confidence_low', 'confidence_high'])
    .where('workspace_id', '=', workspaceId)
    .where('dataset', '=', 'metrics')
    .where('mode', '=', '')
    .where('run_id', '=', runId)
    .where('record_key', 'like', '%:all')
    .execute();
}

/** The same page as `pageRecords`, but only each row's stored API JSON (the hot analytics read). */
export async function pageRecordJson(
  db: Executor<GeoDb>,
  query: { workspaceId: string; dataset: string; mode: string; limit: number; beforeId: string | undefined },
): Promise<{ id: string; api_json: string }[]> {
  let q = db
    .selectFrom('dataset_record')
    .select(['id', 'api_json'])
    .where('workspace_id', '=', query.workspaceId)
    .where('dataset', '=', query.dataset)
    .where('mode', '=', query.mode);
  if (query.beforeId !== undefined) q = q.where('id', '<', query.beforeId);
  return q.orderBy('id', 'desc').limit(query.limit).execute();
}

/** One page of tracking events, newest first (keyset on the integer id). */
export async function pageEvents(
  db: Executor<GeoDb>,
  query: { workspaceId: string; limit: number; beforeId: number | undefined },
): Promise<Selectable<TrackingEventTable>[]> {
  let q = db.selectFrom('tracking_event').selectAll().where('workspace_id', '=', query.workspaceId);
  if (query.beforeId !== undefined) q = q.where('id', '<', query.beforeId);
  return q.orderBy('id', 'desc').limit(query.limit).execute();
}

/** One page of a privacy subject's tracking events of a workspace, newest first, strictly before `beforeId`. */
export async function pageSubjectEvents(
  db: Executor<GeoDb>,
  workspaceId: string,
  subjectHash: string,
  limit: number,
  beforeId: number | undefined,
): Promise<Selectable<TrackingEventTable>[]> {
  let q = db
    .selectFrom('tracking_event')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('subject_hash', '=', subjectHash);
  if (beforeId !== undefined) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** Replaces a record's definition in place (its data, definition version, update time and stored API JSON). */
export async function updateRecord(
  db: Executor<GeoDb>,
  where: { workspaceId: string; dataset: string; id: string },
  changes: Pick<Selectable<DatasetRecordTable>, 'data' | 'definition_version' | 'updated_at' | 'api_json'>,
): Promise<boolean> {
  const result = await db
    .updateTable('dataset_record')
    .set(changes)
    .where('workspace_id', '=', where.workspaceId)
    .where('dataset', '=', where.dataset)
    .where('id', '=', where.id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes one record of a dataset in a workspace; false when there was none. */
export async function deleteRecord(db: Executor<GeoDb>, workspaceId: string, dataset: string, id: string) {
  const result = await db
    .deleteFrom('dataset_record')
    .where('workspace_id', '=', workspaceId)
    .where('dataset', '=', dataset)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
