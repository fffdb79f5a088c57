import type { Executor } from '@keel/core';
import type { Selectable } from 'kysely';
import { param, preparedQuery } from '../db/prepared.ts';
import type { EngineDb } from '../db/schema.ts';
import type { RuntimeSessionTable } from '../runtime/db-tables.ts';

export type SessionRow = Selectable<RuntimeSessionTable>;

const sessionQuery = preparedQuery((db) =>
  db.selectFrom('runtime_session').selectAll().where('realm_id', '=', param('realmId')).where('id', '=', param('id')),
);

/** A session of the realm by id (a prepared query: every turn reads it). */
export async function findSessionRow(
  db: Executor<EngineDb>,
  realmId: string,
  id: string,
): Promise<SessionRow | undefined> {
  return (await sessionQuery(db, { realmId, id: id.toLowerCase() }))[0];
}

/** Stores a new session. */
export async function insertSession(db: Executor<EngineDb>, row: SessionRow): Promise<void> {
  await db.insertInto('runtime_session').values(row).execute();
}

export interface SessionFilter {
  afterId?: string | undefined;
  agentId?: string | undefined;
  subjectType?: string | undefined;
  channel?: string | undefined;
  /** `active` and `expired` are told apart by `expires_at` against `now`. */
  status?: string | undefined;
  now: string;
}

/** Sessions of the realm, newest id first, at most `limit`. */
export function listSessionRows(
  db: Executor<EngineDb>,
  realmId: string,
  filter: SessionFilter,
  limit: number,
): Promise<SessionRow[]> {
  let q = db.selectFrom('runtime_session').selectAll().where('realm_id', '=', realmId);
  if (filter.afterId) q = q.where('id', '<', filter.afterId);
  if (filter.agentId) q = q.where('agent_id', '=', filter.agentId);
  if (filter.subjectType) q = q.where('subject_type', '=', filter.subjectType);
  if (filter.channel) q = q.where('channel', '=', filter.channel);
  if (filter.status === 'active') q = q.where('status', '=', 'active').where('expires_at', '>', filter.now);
  else if (filter.status === 'expired') q = q.where('status', '=', 'active').where('expires_at', '<=', filter.now);
  else if (filter.status) q = q.where('status', '=', filter.status);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** Sets fields of a session. */
export async function updateSessionRow(
  db: Executor<EngineDb>,
  id: string,
  changes: Partial<SessionRow>,
): Promise<void> {
  await db.updateTable('runtime_session').set(changes).where('id', '=', id).execute();
}

/** Ends an active session (`completed` or `cancelled`); false when it was no longer active. */
export async function endActiveSession(
  db: Executor<EngineDb>,
  id: string,
  status: string,
  now: string,
): Promise<boolean> {
  const changed = await db
    .updateTable('runtime_session')
    .set({ status, ended_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(changed.numUpdatedRows) === 1;
}

/**
 * Sets a session's new resume token (and `changes`) while its token version is still `version` (compare-and-swap:
 * of two concurrent rotations exactly one wins); false when another rotation came first.
 */
export async function swapResumeToken(
  db: Executor<EngineDb>,
  id: string,
  version: number,
  changes: Partial<SessionRow>,
): Promise<boolean> {
  const changed = await db
    .updateTable('runtime_session')
    .set({ ...changes, resume_token_version: version + 1 })
    .where('id', '=', id)
    .where('resume_token_version', '=', version)
    .executeTakeFirst();
  return Number(changed.numUpdatedRows) === 1;
}

/** Deletes every message of a session. */
export async function deleteSessionMessages(db: Executor<EngineDb>, sessionId: string): Promise<void> {
  await db.deleteFrom('session_message').where('session_id', '=', sessionId).execute();
}

/** Deletes every state value of a session (its audit trail stays). */
export async function deleteSessionState(db: Executor<EngineDb>, sessionId: string): Promise<void> {
  await db.deleteFrom('session_state').where('session_id', '=', sessionId).execute();
}

/** Deletes a session row. */
export async function deleteSessionRow(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('runtime_session').where('id', '=', id).execute();
}
