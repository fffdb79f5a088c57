import type { Executor } from '@keel/core';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { FlowTriggerFireTable, FlowTriggerTable } from './flow-chat-tables.ts';

export type TriggerRow = Selectable<FlowTriggerTable>;
export type TriggerFireRow = Selectable<FlowTriggerFireTable>;

export async function insertTrigger(db: Executor<EngineDb>, row: Insertable<FlowTriggerTable>): Promise<void> {
  await db.insertInto('flow_trigger').values(row).execute();
}

/** A trigger of a realm's flow (undefined for an unknown id, another flow's or another realm's alike). */
export function findTrigger(db: Executor<EngineDb>, realmId: string, flowId: string, id: string) {
  return db
    .selectFrom('flow_trigger')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('flow_id', '=', flowId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Triggers of a flow, oldest first, after the `after` id; `limit + 1` rows. */
export function listTriggerRows(db: Executor<EngineDb>, flowId: string, limit: number, after?: string) {
  let q = db.selectFrom('flow_trigger').selectAll().where('flow_id', '=', flowId);
  if (after !== undefined) q = q.where('id', '>', after);
  return q
    .orderBy('id', 'asc')
    .limit(limit + 1)
    .execute();
}

export async function countTriggers(db: Executor<EngineDb>, flowId: string): Promise<number> {
  const row = await db
    .selectFrom('flow_trigger')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('flow_id', '=', flowId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteTriggerRow(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('flow_trigger_fire').where('trigger_id', '=', id).execute();
  await db.deleteFrom('flow_trigger').where('id', '=', id).execute();
}

/**
 * Records a fire of an event id (or a schedule slot) unless one is recorded: answers true when this call recorded it.
 * The primary key (trigger, event id) makes concurrent fires of one id race to one row: the loser inserts nothing.
 */
export async function claimFire(db: Executor<EngineDb>, row: Insertable<FlowTriggerFireTable>): Promise<boolean> {
  const inserted = await db
    .insertInto('flow_trigger_fire')
    .values(row)
    .onConflict((oc) => oc.columns(['trigger_id', 'event_id']).doNothing())
    .returning('execution_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export function findFire(db: Executor<EngineDb>, triggerId: string, eventId: string) {
  return db
    .selectFrom('flow_trigger_fire')
    .selectAll()
    .where('trigger_id', '=', triggerId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
}

/** Active schedule triggers whose slot is due at `now` (oldest slot first). */
export function listDueSchedules(db: Executor<EngineDb>, now: string, limit: number) {
  return db
    .selectFrom('flow_trigger')
    .selectAll()
    .where('kind', '=', 'schedule')
    .where('is_active', '=', true)
    .where('next_run_at', '<=', now)
    .orderBy('next_run_at', 'asc')
    .limit(limit)
    .execute();
}

/** Moves a schedule to its next slot only while it is still at `slot` (compare-and-set). */
export async function advanceSchedule(
  db: Executor<EngineDb>,
  id: string,
  slot: string,
  set: Updateable<FlowTriggerTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('flow_trigger')
    .set(set)
    .where('id', '=', id)
    .where('next_run_at', '=', slot)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
