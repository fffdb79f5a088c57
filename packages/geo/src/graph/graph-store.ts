import type { Executor } from '@keel/core';
import type { Insertable } from 'kysely';
import { insertMany } from '../db/bulk-insert.ts';
import type { GeoDb, GraphMutationTable, RelationTable, TargetTable } from '../db/schema.ts';

const CHUNK = 400; // rows per multi-row INSERT (13 columns × 400 stays under every engine's parameter limit)

export async function loadTargets(db: Executor<GeoDb>, workspaceId: string, projectId: string) {
  return db
    .selectFrom('target')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
}

export async function loadRelations(db: Executor<GeoDb>, workspaceId: string, projectId: string) {
  return db
    .selectFrom('relation')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
}

const TARGET_COLUMNS = [
  'id',
  'workspace_id',
  'project_id',
  'target_key',
  'name',
  'kind',
  'url',
  'aliases',
  'attributes',
  'merged_into',
  'version',
  'created_at',
  'updated_at',
] as const;
const RELATION_COLUMNS = [
  'id',
  'workspace_id',
  'project_id',
  'from_target_id',
  'to_target_id',
  'kind',
  'created_at',
] as const;

export async function insertTargets(db: Executor<GeoDb>, rows: Insertable<TargetTable>[]): Promise<void> {
  await insertMany(db, 'target', TARGET_COLUMNS, rows as Record<string, unknown>[], CHUNK);
}

export async function insertRelations(db: Executor<GeoDb>, rows: Insertable<RelationTable>[]): Promise<void> {
  await insertMany(db, 'relation', RELATION_COLUMNS, rows as Record<string, unknown>[], CHUNK);
}

export async function deleteRelations(db: Executor<GeoDb>, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK)
    await db
      .deleteFrom('relation')
      .where('id', 'in', ids.slice(i, i + CHUNK))
      .execute();
}

export async function updateTarget(
  db: Executor<GeoDb>,
  id: string,
  changes: Partial<
    Pick<TargetTable, 'name' | 'kind' | 'url' | 'aliases' | 'attributes' | 'merged_into' | 'version' | 'updated_at'>
  >,
): Promise<void> {
  await db.updateTable('target').set(changes).where('id', '=', id).execute();
}

export async function insertMutation(db: Executor<GeoDb>, row: Insertable<GraphMutationTable>): Promise<void> {
  await db.insertInto('graph_mutation').values(row).execute();
}

export async function countMutations(db: Executor<GeoDb>, workspaceId: string, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('graph_mutation')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function listMutations(db: Executor<GeoDb>, workspaceId: string, projectId: string, limit: number) {
  return db
    .selectFrom('graph_mutation')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('project_id', '=', projectId)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Serializes graph mutations of one workspace: a row lock on PostgreSQL, the write lock on SQLite. */
export async function lockWorkspaceGraph(db: Executor<GeoDb>, workspaceId: string): Promise<void> {
  await db
    .updateTable('workspace')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', workspaceId)
    .execute();
}
