import type { Executor } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';

/** The realm's providers by name (at most `limit` rows). */
export function listRealmProviders(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('ai_provider')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('name')
    .limit(limit)
    .execute();
}

/** The realm's prompt versions by key and version (at most `limit` rows). */
export function listRealmPrompts(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('prompt')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('key')
    .orderBy('version')
    .limit(limit)
    .execute();
}

/** The realm's tool servers by name (at most `limit` rows). */
export function listRealmToolServers(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('tool_server')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('name')
    .limit(limit)
    .execute();
}

/** The realm's agent identities with their role and configuration (configuration columns null when never set). */
export function listRealmAgents(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('identity as i')
    .innerJoin('realm_member as m', (join) => join.onRef('m.identity_id', '=', 'i.id').on('m.realm_id', '=', realmId))
    .leftJoin('agent_config as c', 'c.agent_id', 'i.id')
    .select([
      'i.id',
      'i.username',
      'i.display_name',
      'm.role',
      'c.system_prompt_id',
      'c.ai_provider_id',
      'c.default_flow_id',
      'c.allowed_mcp_servers',
      'c.metadata',
      'c.settings',
      'c.profile',
      'c.is_default',
    ])
    .where('i.realm_id', '=', realmId)
    .where('i.user_type', '=', 'agent')
    .orderBy('i.username')
    .limit(limit)
    .execute();
}

export type RealmAgentRow = Awaited<ReturnType<typeof listRealmAgents>>[number];

/** The realm's flows that are not archived, by name (at most `limit` rows). */
export function listRealmFlows(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('flow')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('status', '!=', 'archived')
    .orderBy('name_key')
    .limit(limit)
    .execute();
}

/** Ids and names of every flow of the realm (archived ones too: references resolve against all of them). */
export function listRealmFlowNames(db: Executor<EngineDb>, realmId: string) {
  return db.selectFrom('flow').select(['id', 'name', 'status']).where('realm_id', '=', realmId).execute();
}

/** The realm's runtime webhooks by URL (at most `limit` rows). */
export function listRealmRuntimeWebhooks(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('runtime_webhook')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('url')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The realm's integration clients by name (at most `limit` rows). */
export function listRealmIntegrationClients(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('integration_client')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('name')
    .limit(limit)
    .execute();
}

/** Agent configurations of the realm whose default flow is `flowId`. */
export async function countAgentsUsingFlow(db: Executor<EngineDb>, realmId: string, flowId: string) {
  const row = await db
    .selectFrom('agent_config')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('default_flow_id', '=', flowId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Sets the default flow of an agent's configuration (a deploy's second phase: the flow is written after the agent). */
export async function setAgentDefaultFlow(
  db: Executor<EngineDb>,
  agentId: string,
  flowId: string,
  now: string,
): Promise<void> {
  await db
    .updateTable('agent_config')
    .set({ default_flow_id: flowId, updated_at: now })
    .where('agent_id', '=', agentId)
    .execute();
}

/** The triggers of the realm's flows that are not archived, with their flow's name (at most `limit` rows). */
export function listRealmTriggers(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('flow_trigger as t')
    .innerJoin('flow as f', 'f.id', 't.flow_id')
    .selectAll('t')
    .select('f.name as flow_name')
    .where('t.realm_id', '=', realmId)
    .where('f.status', '!=', 'archived')
    .orderBy('t.id')
    .limit(limit)
    .execute();
}
