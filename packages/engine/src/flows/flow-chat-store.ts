import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { FlowSessionContextTable } from './flow-chat-tables.ts';

export type SessionContextRow = Selectable<FlowSessionContextTable>;

export function findSessionContext(db: Executor<EngineDb>, realmId: string, sessionId: string) {
  return db
    .selectFrom('flow_session_context')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
}

/** Replaces a session's continuation context (one row per session). */
export async function saveSessionContext(
  db: Executor<EngineDb>,
  row: Insertable<FlowSessionContextTable>,
): Promise<void> {
  await db
    .insertInto('flow_session_context')
    .values(row)
    .onConflict((oc) =>
      oc.column('session_id').doUpdateSet({
        flow_id: row.flow_id,
        offer: row.offer,
        products: row.products,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function deleteSessionContext(db: Executor<EngineDb>, sessionId: string): Promise<void> {
  await db.deleteFrom('flow_session_context').where('session_id', '=', sessionId).execute();
}
