import { dialectOf, type Executor } from '@keel/core';
import type { Insertable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { AgentConfigTable } from '../runtime/db-tables.ts';

/** An agent identity of the realm with its configuration (configuration columns null when never configured). */
export function findAgentWithConfig(db: Executor<EngineDb>, realmId: string, agentId: string) {
  return db
    .selectFrom('identity as i')
    .leftJoin('agent_config as c', 'c.agent_id', 'i.id')
    .select([
      'i.id',
      'i.username',
      'i.status',
      'c.system_prompt_id',
      'c.ai_provider_id',
      'c.default_flow_id',
      'c.allowed_mcp_servers',
      'c.metadata',
      'c.settings',
      'c.profile',
      'c.is_default',
      'c.updated_at',
    ])
    .where('i.id', '=', agentId.toLowerCase())
    .where('i.realm_id', '=', realmId)
    .where('i.user_type', '=', 'agent')
    .executeTakeFirst();
}

export type AgentWithConfigRow = NonNullable<Awaited<ReturnType<typeof findAgentWithConfig>>>;

/** Creates or replaces an agent's configuration (`created_at` is kept on replace). */
export async function upsertAgentConfig(
  db: Executor<EngineDb>,
  row: Omit<Insertable<AgentConfigTable>, 'created_at'>,
  now: string,
): Promise<void> {
  await db
    .insertInto('agent_config')
    .values({ ...row, created_at: now })
    .onConflict((oc) => oc.column('agent_id').doUpdateSet(row))
    .execute();
}

/** Clears the default flag of every agent configuration of the realm but `keepAgentId`'s. */
export async function clearOtherDefaultAgents(
  db: Executor<EngineDb>,
  realmId: string,
  keepAgentId: string,
  now: string,
): Promise<void> {
  await db
    .updateTable('agent_config')
    .set({ is_default: false, updated_at: now })
    .where('realm_id', '=', realmId)
    .where('agent_id', '!=', keepAgentId)
    .where('is_default', '=', true)
    .execute();
}

/** Active agents of the realm with a profile rule or the default flag, by agent id (at most 1,000). */
export function listAgentProfileRows(db: Executor<EngineDb>, realmId: string) {
  return db
    .selectFrom('agent_config as c')
    .innerJoin('identity as i', 'i.id', 'c.agent_id')
    .select(['c.agent_id', 'c.profile', 'c.is_default'])
    .where('c.realm_id', '=', realmId)
    .where('i.status', '=', 'active')
    .where((eb) => eb.or([eb('c.profile', 'is not', null), eb('c.is_default', '=', true)]))
    .orderBy('c.agent_id')
    .limit(1000)
    .execute();
}

/**
 * Locks an agent's identity row for the rest of the transaction (PostgreSQL; SQLite writes are serialised), so a
 * read-modify-write of its configuration cannot lose a concurrent one.
 */
export async function lockAgentIdentity(trx: Executor<EngineDb>, agentId: string): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await trx.selectFrom('identity').select('id').where('id', '=', agentId.toLowerCase()).forUpdate().execute();
}

/**
 * Sets one column of the agent's configuration (its attached tool servers, or its default flow), creating an
 * otherwise empty configuration when it has none.
 */
export async function setAgentConfigColumns(
  db: Executor<EngineDb>,
  target: { agentId: string; realmId: string; now: string },
  columns: { allowed_mcp_servers: string } | { default_flow_id: string },
): Promise<void> {
  const { agentId, realmId, now } = target;
  await db
    .insertInto('agent_config')
    .values({
      agent_id: agentId,
      realm_id: realmId,
      system_prompt_id: null,
      ai_provider_id: null,
      default_flow_id: null,
      allowed_mcp_servers: '[]',
      metadata: null,
      settings: '{}',
      profile: null,
      is_default: false,
      created_at: now,
      updated_at: now,
      ...columns,
    })
    .onConflict((oc) => oc.column('agent_id').doUpdateSet({ ...columns, updated_at: now }))
    .execute();
}
