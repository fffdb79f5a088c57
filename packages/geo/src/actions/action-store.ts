import type { Executor } from '@keel/core';
import type { Insertable } from 'kysely';
import type { ActionTransitionTable, GeoDb } from '../db/schema.ts';

/** An action's recorded transitions, oldest first (ids are time-ordered), at most 100. */
export async function listTransitions(db: Executor<GeoDb>, actionId: string) {
  return db
    .selectFrom('action_transition')
    .selectAll()
    .where('action_id', '=', actionId)
    .orderBy('id')
    .limit(100)
    .execute();
}

/**
 * Moves an action record to a new status if it is still in `expected` (compare-and-set), with its update time and
 * stored API JSON. False when another writer moved it first.
 */
export async function compareAndSetActionStatus(
  db: Executor<GeoDb>,
  id: string,
  expected: string,
  set: { status: string; updated_at: string; api_json: string },
): Promise<boolean> {
  const updated = await db
    .updateTable('dataset_record')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', expected)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

export async function insertTransition(db: Executor<GeoDb>, row: Insertable<ActionTransitionTable>): Promise<void> {
  await db.insertInto('action_transition').values(row).execute();
}
