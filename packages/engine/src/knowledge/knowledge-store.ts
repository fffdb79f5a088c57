import type { Executor } from '@keel/core';
import type { Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { KnowledgeItemTable } from '../runtime/db-tables.ts';

export type KnowledgeRow = Selectable<KnowledgeItemTable>;

/** Who may retrieve: the realm, one agent, one session or one user. */
export interface KnowledgeAudience {
  agentId?: string | undefined;
  sessionId?: string | undefined;
  userId?: string | undefined;
}

/** Stores a knowledge item. */
export async function insertKnowledgeItem(db: Executor<EngineDb>, row: KnowledgeRow): Promise<void> {
  await db.insertInto('knowledge_item').values(row).execute();
}

function visible(db: Executor<EngineDb>, realmId: string, now: string) {
  return db
    .selectFrom('knowledge_item')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('forgotten_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
}

/**
 * Unforgotten, unexpired items of the realm, newest id first, at most `limit`: of `scope`, or of every scope but
 * `session` when none is given.
 */
export function listKnowledgeRows(
  db: Executor<EngineDb>,
  realmId: string,
  filter: {
    now: string;
    afterId?: string | undefined;
    scope?: string | undefined;
    agentId?: string | undefined;
    userId?: string | undefined;
  },
  limit: number,
): Promise<KnowledgeRow[]> {
  let q = visible(db, realmId, filter.now);
  if (filter.afterId) q = q.where('id', '<', filter.afterId);
  q = filter.scope ? q.where('scope', '=', filter.scope) : q.where('scope', '!=', 'session');
  if (filter.agentId) q = q.where('agent_id', '=', filter.agentId);
  if (filter.userId) q = q.where('user_id', '=', filter.userId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/**
 * Unforgotten, unexpired items the audience may retrieve (realm items, plus the named agent's, session's and user's)
 * whose search text holds at least one of `terms` (letters, digits and spaces only), newest first, at most `limit`.
 */
export function findKnowledgeCandidates(
  db: Executor<EngineDb>,
  realmId: string,
  audience: KnowledgeAudience,
  terms: readonly string[],
  now: string,
  limit: number,
): Promise<KnowledgeRow[]> {
  return visible(db, realmId, now)
    .where((eb) => {
      const allowed = [eb('scope', '=', 'realm')];
      if (audience.agentId) allowed.push(eb.and([eb('scope', '=', 'agent'), eb('agent_id', '=', audience.agentId)]));
      if (audience.sessionId)
        allowed.push(eb.and([eb('scope', '=', 'session'), eb('session_id', '=', audience.sessionId)]));
      if (audience.userId) allowed.push(eb.and([eb('scope', '=', 'user'), eb('user_id', '=', audience.userId)]));
      return eb.or(allowed);
    })
    .where((eb) =>
      // Terms and search_text hold only letters, digits and spaces, so no LIKE wildcard needs escaping.
      eb.or(terms.map((term) => eb('search_text', 'like', `%${term}%`))),
    )
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * Forgets unforgotten items of the realm — the one item `id`, or every item of session `sessionId`: their text is
 * erased, the rows stay as audit evidence. The number of items forgotten.
 */
export async function forgetKnowledgeItems(
  db: Executor<EngineDb>,
  realmId: string,
  which: { id: string } | { sessionId: string },
  forgotten: { at: string; by: string },
): Promise<number> {
  let q = db
    .updateTable('knowledge_item')
    .set({ content: null, search_text: null, forgotten_at: forgotten.at, forgotten_by: forgotten.by })
    .where('realm_id', '=', realmId)
    .where('forgotten_at', 'is', null);
  q = 'id' in which ? q.where('id', '=', which.id) : q.where('session_id', '=', which.sessionId);
  const changed = await q.executeTakeFirst();
  return Number(changed.numUpdatedRows);
}

/** Whether the realm has any unforgotten knowledge item. */
export async function realmHasKnowledgeItems(db: Executor<EngineDb>, realmId: string): Promise<boolean> {
  const row = await db
    .selectFrom('knowledge_item')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('forgotten_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
