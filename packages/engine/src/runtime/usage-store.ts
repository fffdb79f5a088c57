import type { Executor } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';

/** The realm's executions since `since` (agent, kind, status, usage JSON), newest first, at most `limit` rows. */
export function listExecutionUsage(
  db: Executor<EngineDb>,
  realmId: string,
  since: string,
  limit: number,
): Promise<{ agent_id: string; kind: string; status: string; usage: unknown }[]> {
  return db
    .selectFrom('execution')
    .select(['agent_id', 'kind', 'status', 'usage'])
    .where('realm_id', '=', realmId)
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}
