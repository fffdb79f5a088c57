import { type Executor, toBoolean } from '@keel/core';
import type { SelectQueryBuilder } from 'kysely';
import type { EngineDb } from '../db/schema.ts';

/** What the runtime status of a realm counts: providers, prompts, agents, sessions, defaults. */
export interface RealmRuntimeFacts {
  providers: number;
  activeProviders: number;
  activePrompts: number;
  agents: number;
  configuredAgents: number;
  activeSessions: number;
  agentsWithoutProvider: number;
  defaultProvider: { id: string; is_active: boolean } | undefined;
  defaultAgentId: string | undefined;
}

async function count<T extends keyof EngineDb>(
  query: SelectQueryBuilder<EngineDb, T, Record<never, never>>,
): Promise<number> {
  const row = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number((row as { n: unknown }).n);
}

/** The counts and defaults of a realm's runtime configuration (sessions active at `now`). */
export async function realmRuntimeFacts(
  db: Executor<EngineDb>,
  realmId: string,
  now: string,
): Promise<RealmRuntimeFacts> {
  const [providers, activeProviders, activePrompts, agents, configuredAgents, activeSessions, agentsWithoutProvider] =
    await Promise.all([
      count(db.selectFrom('ai_provider').where('realm_id', '=', realmId)),
      count(db.selectFrom('ai_provider').where('realm_id', '=', realmId).where('is_active', '=', true)),
      count(db.selectFrom('prompt').where('realm_id', '=', realmId).where('is_active', '=', true)),
      count(db.selectFrom('identity').where('realm_id', '=', realmId).where('user_type', '=', 'agent')),
      count(db.selectFrom('agent_config').where('realm_id', '=', realmId)),
      count(
        db
          .selectFrom('runtime_session')
          .where('realm_id', '=', realmId)
          .where('status', '=', 'active')
          .where('expires_at', '>', now),
      ),
      count(db.selectFrom('agent_config').where('realm_id', '=', realmId).where('ai_provider_id', 'is', null)),
    ]);
  const defaultProvider = await db
    .selectFrom('ai_provider')
    .select(['id', 'is_active'])
    .where('realm_id', '=', realmId)
    .where('is_default', '=', true)
    .executeTakeFirst();
  const defaultAgent = await db
    .selectFrom('agent_config')
    .select('agent_id')
    .where('realm_id', '=', realmId)
    .where('is_default', '=', true)
    .executeTakeFirst();
  return {
    providers,
    activeProviders,
    activePrompts,
    agents,
    configuredAgents,
    activeSessions,
    agentsWithoutProvider,
    defaultProvider: defaultProvider && { id: defaultProvider.id, is_active: toBoolean(defaultProvider.is_active) },
    defaultAgentId: defaultAgent?.agent_id,
  };
}
