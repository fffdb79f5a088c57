import type { Executor } from '@keel/core';
import type { Insertable, Selectable, Updateable } from 'kysely';
import { param, preparedQuery } from '../db/prepared.ts';
import type { EngineDb } from '../db/schema.ts';
import type { FlowFixtureTable, FlowTable, FlowVersionTable } from './flow-tables.ts';

export type FlowRow = Selectable<FlowTable>;
export type FlowVersionRow = Selectable<FlowVersionTable>;
export type FlowFixtureRow = Selectable<FlowFixtureTable>;

const flowById = preparedQuery((db) =>
  db.selectFrom('flow').selectAll().where('realm_id', '=', param('realmId')).where('id', '=', param('id')),
);

/** A flow of the realm (undefined for an unknown id and for another realm's flow alike); compiled once (hot path). */
export async function findFlow(db: Executor<EngineDb>, realmId: string, id: string): Promise<FlowRow | undefined> {
  return (await flowById(db, { realmId, id }))[0];
}

export function findFlowByNameKey(db: Executor<EngineDb>, realmId: string, nameKey: string) {
  return db
    .selectFrom('flow')
    .select(['id'])
    .where('realm_id', '=', realmId)
    .where('name_key', '=', nameKey)
    .executeTakeFirst();
}

/** Flows of a realm, newest first, after the `before` id; `limit + 1` rows. */
export function listFlowRows(
  db: Executor<EngineDb>,
  realmId: string,
  query: { limit: number; before?: string | undefined; status?: string | undefined; isActive?: boolean | undefined },
) {
  let q = db.selectFrom('flow').selectAll().where('realm_id', '=', realmId);
  if (query.before !== undefined) q = q.where('id', '<', query.before);
  if (query.status !== undefined) q = q.where('status', '=', query.status);
  else q = q.where('status', '!=', 'archived');
  if (query.isActive !== undefined) q = q.where('is_active', '=', query.isActive);
  return q
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
}

export async function insertFlow(db: Executor<EngineDb>, row: Insertable<FlowTable>): Promise<void> {
  await db.insertInto('flow').values(row).execute();
}

export async function updateFlowRow(db: Executor<EngineDb>, id: string, set: Updateable<FlowTable>): Promise<void> {
  await db.updateTable('flow').set(set).where('id', '=', id).execute();
}

export async function deleteFlowRow(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('flow_fixture').where('flow_id', '=', id).execute();
  await db.deleteFrom('flow_version').where('flow_id', '=', id).execute();
  await db.deleteFrom('flow').where('id', '=', id).execute();
}

export function findFlowVersion(db: Executor<EngineDb>, realmId: string, flowId: string, version: number) {
  return db
    .selectFrom('flow_version')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('flow_id', '=', flowId)
    .where('version', '=', version)
    .executeTakeFirst();
}

/** Versions of a flow, newest first, below `below`; `limit + 1` rows. */
export function listFlowVersionRows(
  db: Executor<EngineDb>,
  flowId: string,
  query: { limit: number; below?: number | undefined },
) {
  let q = db.selectFrom('flow_version').selectAll().where('flow_id', '=', flowId);
  if (query.below !== undefined) q = q.where('version', '<', query.below);
  return q
    .orderBy('version', 'desc')
    .limit(query.limit + 1)
    .execute();
}

/** The newest published version of a flow below `below` (any when absent). */
export function findPublishedVersionBelow(db: Executor<EngineDb>, flowId: string, below?: number) {
  let q = db.selectFrom('flow_version').selectAll().where('flow_id', '=', flowId).where('status', '=', 'published');
  if (below !== undefined) q = q.where('version', '<', below);
  return q.orderBy('version', 'desc').limit(1).executeTakeFirst();
}

export async function insertFlowVersion(db: Executor<EngineDb>, row: Insertable<FlowVersionTable>): Promise<void> {
  await db.insertInto('flow_version').values(row).execute();
}

export async function updateFlowVersion(
  db: Executor<EngineDb>,
  flowId: string,
  version: number,
  set: Updateable<FlowVersionTable>,
): Promise<void> {
  await db.updateTable('flow_version').set(set).where('flow_id', '=', flowId).where('version', '=', version).execute();
}

/** Forgets the test verdicts of a flow's unpublished versions (a fixture was added: they must be tested again). */
export async function clearDraftVerdicts(db: Executor<EngineDb>, flowId: string): Promise<void> {
  await db
    .updateTable('flow_version')
    .set({ test_passed: null, tested_at: null })
    .where('flow_id', '=', flowId)
    .where('status', '=', 'draft')
    .execute();
}

export async function insertFixture(db: Executor<EngineDb>, row: Insertable<FlowFixtureTable>): Promise<void> {
  await db.insertInto('flow_fixture').values(row).execute();
}

export async function countFixtures(db: Executor<EngineDb>, flowId: string): Promise<number> {
  const row = await db
    .selectFrom('flow_fixture')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('flow_id', '=', flowId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Fixtures of a flow, oldest first, after the `after` id; `limit + 1` rows. */
export function listFixtureRows(
  db: Executor<EngineDb>,
  flowId: string,
  query: { limit: number; after?: string | undefined },
) {
  let q = db.selectFrom('flow_fixture').selectAll().where('flow_id', '=', flowId);
  if (query.after !== undefined) q = q.where('id', '>', query.after);
  return q
    .orderBy('id', 'asc')
    .limit(query.limit + 1)
    .execute();
}

export function findFixturesByIds(db: Executor<EngineDb>, flowId: string, ids: readonly string[]) {
  return db
    .selectFrom('flow_fixture')
    .selectAll()
    .where('flow_id', '=', flowId)
    .where('id', 'in', [...ids])
    .orderBy('id', 'asc')
    .execute();
}

/** Every published, active flow of a realm with its active version's config (published flows as tools, routing). */
export function listActiveFlowVersions(db: Executor<EngineDb>, realmId: string) {
  return db
    .selectFrom('flow as f')
    .innerJoin('flow_version as v', (join) =>
      join.onRef('v.flow_id', '=', 'f.id').onRef('v.version', '=', 'f.active_version'),
    )
    .select(['f.id', 'f.name', 'f.description', 'v.version', 'v.config'])
    .where('f.realm_id', '=', realmId)
    .where('f.is_active', '=', true)
    .orderBy('f.name_key', 'asc')
    .execute();
}

/** Deletes every fixture of a flow (a configuration deploy replaces the set). */
export async function deleteFixtureRows(db: Executor<EngineDb>, flowId: string): Promise<void> {
  await db.deleteFrom('flow_fixture').where('flow_id', '=', flowId).execute();
}
