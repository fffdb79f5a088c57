import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { FlowRoutingPolicyTable, FlowRoutingProfileTable } from './flow-routing-tables.ts';

export type FlowRoutingProfileRow = Selectable<FlowRoutingProfileTable>;
export type FlowRoutingPolicyRow = Selectable<FlowRoutingPolicyTable>;

export function findRoutingProfile(db: Executor<EngineDb>, realmId: string, flowId: string) {
  return db
    .selectFrom('flow_routing_profile')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('flow_id', '=', flowId)
    .executeTakeFirst();
}

export async function upsertRoutingProfile(
  db: Executor<EngineDb>,
  row: Insertable<FlowRoutingProfileTable>,
): Promise<void> {
  await db
    .insertInto('flow_routing_profile')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('flow_id')
        .doUpdateSet({ profile: row.profile, updated_by: row.updated_by, updated_at: row.updated_at }),
    )
    .execute();
}

/** Routing profiles of a realm with their flow's name, by flow id, after `after`; `limit + 1` rows. */
export function listRoutingProfileRows(
  db: Executor<EngineDb>,
  realmId: string,
  query: { limit: number; after?: string | undefined },
) {
  let q = db
    .selectFrom('flow_routing_profile as p')
    .innerJoin('flow as f', 'f.id', 'p.flow_id')
    .select(['p.flow_id', 'p.realm_id', 'p.profile', 'p.updated_by', 'p.updated_at', 'f.name'])
    .where('p.realm_id', '=', realmId);
  if (query.after !== undefined) q = q.where('p.flow_id', '>', query.after);
  return q
    .orderBy('p.flow_id', 'asc')
    .limit(query.limit + 1)
    .execute();
}

/** Every routing profile of the given flows of a realm. */
export function routingProfilesOf(db: Executor<EngineDb>, realmId: string, flowIds: readonly string[]) {
  if (flowIds.length === 0) return Promise.resolve([] as FlowRoutingProfileRow[]);
  return db
    .selectFrom('flow_routing_profile')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('flow_id', 'in', [...flowIds])
    .execute();
}

export function findRoutingPolicy(db: Executor<EngineDb>, realmId: string) {
  return db.selectFrom('flow_routing_policy').selectAll().where('realm_id', '=', realmId).executeTakeFirst();
}

export async function upsertRoutingPolicy(
  db: Executor<EngineDb>,
  row: Insertable<FlowRoutingPolicyTable>,
): Promise<void> {
  const { realm_id: _realm, ...set } = row;
  await db
    .insertInto('flow_routing_policy')
    .values(row)
    .onConflict((oc) => oc.column('realm_id').doUpdateSet(set))
    .execute();
}

/** The newest published version of each given flow (the canary candidates), by flow id. */
export function newestPublishedVersions(db: Executor<EngineDb>, flowIds: readonly string[]) {
  if (flowIds.length === 0) return Promise.resolve([] as { flow_id: string; version: number | null }[]);
  return db
    .selectFrom('flow_version')
    .select((eb) => ['flow_id', eb.fn.max('version').as('version')])
    .where('flow_id', 'in', [...flowIds])
    .where('status', '=', 'published')
    .groupBy('flow_id')
    .execute();
}

/** Removes a flow's routing profile (routing reads the manifest of its config again). */
export async function deleteRoutingProfile(db: Executor<EngineDb>, flowId: string): Promise<void> {
  await db.deleteFrom('flow_routing_profile').where('flow_id', '=', flowId).execute();
}
