import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import { param, preparedQuery } from '../db/prepared.ts';
import type { EngineDb } from '../db/schema.ts';
import type { SessionMessageTable, SessionStateAuditTable, SessionStateTable } from '../runtime/db-tables.ts';

export type MessageRow = Selectable<SessionMessageTable>;

// Messages (prepared statements: every turn runs them) ---------------------------------------------------------

const countUpdate = preparedQuery((db) =>
  db
    .updateTable('runtime_session')
    .set((eb) => ({
      message_count: eb('message_count', '+', param<number>('added')),
      updated_at: param('now'),
      expires_at: eb.fn.coalesce(eb.val(param('expiresAt')), eb.ref('expires_at')),
    }))
    .where('id', '=', param('id'))
    .where('message_count', '<=', param('maxBefore'))
    .returning('message_count'),
);

/**
 * Adds `added` to the session's message count while it is at most `maxBefore` (and moves its expiry when
 * `expiresAt` is set); the new count, or undefined when the session is full. Takes the session's row lock.
 */
export async function bumpMessageCount(
  db: Executor<EngineDb>,
  values: { id: string; added: number; maxBefore: number; now: string; expiresAt: string | null },
): Promise<number | undefined> {
  const [updated] = await countUpdate(db, values);
  return updated ? Number(updated.message_count) : undefined;
}

const MESSAGE_COLUMNS = [
  'id',
  'session_id',
  'realm_id',
  'seq',
  'role',
  'content',
  'execution_id',
  'action_type',
  'created_at',
] as const;
const messageInsert = preparedQuery((db) =>
  db.insertInto('session_message').values(Object.fromEntries(MESSAGE_COLUMNS.map((c) => [c, param(c)])) as never),
);

/** Stores one message of a session. */
export async function insertMessage(db: Executor<EngineDb>, row: MessageRow): Promise<void> {
  await messageInsert(db, row);
}

const turnsQuery = preparedQuery((db) =>
  db
    .selectFrom('session_message')
    .select(['role', 'content'])
    .where('session_id', '=', param('sessionId'))
    .orderBy('seq', 'desc')
    .limit(param('limit')),
);

/** The session's latest `limit` messages (role and content), newest first. */
export function listLatestTurns(
  db: Executor<EngineDb>,
  sessionId: string,
  limit: number,
): Promise<{ role: string; content: string }[]> {
  return turnsQuery(db, { sessionId, limit });
}

/** The session's messages after sequence number `after`, in order, `limit + 1` rows. */
export function listMessageRows(
  db: Executor<EngineDb>,
  sessionId: string,
  page: { after?: number | undefined; limit: number },
): Promise<MessageRow[]> {
  let q = db.selectFrom('session_message').selectAll().where('session_id', '=', sessionId);
  if (page.after !== undefined) q = q.where('seq', '>', page.after);
  return q
    .orderBy('seq')
    .limit(page.limit + 1)
    .execute();
}

/** The session's message with this sequence number; it must exist. */
export function getMessageBySeq(db: Executor<EngineDb>, sessionId: string, seq: number): Promise<MessageRow> {
  return db
    .selectFrom('session_message')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('seq', '=', seq)
    .executeTakeFirstOrThrow();
}

// State -----------------------------------------------------------------------------------------------------------

/** The session's state rows by key. */
export function listStateRows(db: Executor<EngineDb>, sessionId: string): Promise<Selectable<SessionStateTable>[]> {
  return db.selectFrom('session_state').selectAll().where('session_id', '=', sessionId).orderBy('key').execute();
}

/** Key, type and version of every state value of the session. */
export function listStateVersions(db: Executor<EngineDb>, sessionId: string) {
  return db
    .selectFrom('session_state')
    .select(['key', 'value_type', 'version'])
    .where('session_id', '=', sessionId)
    .execute();
}

/** Type and version of one state value, if the key is set. */
export function findStateVersion(db: Executor<EngineDb>, sessionId: string, key: string) {
  return db
    .selectFrom('session_state')
    .select(['value_type', 'version'])
    .where('session_id', '=', sessionId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Key and JSON text of every state value of the session. */
export function listStateValues(db: Executor<EngineDb>, sessionId: string) {
  return db.selectFrom('session_state').select(['key', 'value']).where('session_id', '=', sessionId).execute();
}

/** Stores a new state key of a session. */
export async function insertStateValue(db: Executor<EngineDb>, row: Insertable<SessionStateTable>): Promise<void> {
  await db.insertInto('session_state').values(row).execute();
}

/** Replaces a state value (its type stays). */
export async function updateStateValue(
  db: Executor<EngineDb>,
  sessionId: string,
  key: string,
  fields: { value: string; version: number; updated_by: string; updated_at: string },
): Promise<void> {
  await db
    .updateTable('session_state')
    .set(fields)
    .where('session_id', '=', sessionId)
    .where('key', '=', key)
    .execute();
}

/** Deletes one state key of a session. */
export async function deleteStateValue(db: Executor<EngineDb>, sessionId: string, key: string): Promise<void> {
  await db.deleteFrom('session_state').where('session_id', '=', sessionId).where('key', '=', key).execute();
}

/** Appends an entry to the state audit history. */
export async function insertStateAudit(db: Executor<EngineDb>, row: Insertable<SessionStateAuditTable>): Promise<void> {
  await db.insertInto('session_state_audit').values(row).execute();
}

// User context ----------------------------------------------------------------------------------------------------

/** The user's context row in the realm, if any. */
export function findUserContext(db: Executor<EngineDb>, realmId: string, userId: string) {
  return db
    .selectFrom('user_context')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** The user's context column alone, if any. */
export function findUserContextValue(db: Executor<EngineDb>, realmId: string, userId: string) {
  return db
    .selectFrom('user_context')
    .select('context')
    .where('realm_id', '=', realmId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Stores the user's context (JSON text): version 1 when new, else the next version. */
export async function upsertUserContext(
  db: Executor<EngineDb>,
  row: { realm_id: string; user_id: string; context: string; updated_by: string; updated_at: string },
): Promise<void> {
  await db
    .insertInto('user_context')
    .values({ ...row, version: 1 })
    .onConflict((oc) =>
      oc.columns(['realm_id', 'user_id']).doUpdateSet((eb) => ({
        context: row.context,
        version: eb('user_context.version', '+', 1),
        updated_by: row.updated_by,
        updated_at: row.updated_at,
      })),
    )
    .execute();
}

// Summary ---------------------------------------------------------------------------------------------------------

/** Stores the session's summary. */
export async function saveSessionSummary(
  db: Executor<EngineDb>,
  sessionId: string,
  summary: string,
  now: string,
): Promise<void> {
  await db
    .updateTable('runtime_session')
    .set({ summary, summary_updated_at: now, updated_at: now })
    .where('id', '=', sessionId)
    .execute();
}
