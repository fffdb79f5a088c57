import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { FlowBindingTable, FlowPromotionTable } from './flow-routing-tables.ts';

export type FlowBindingRow = Selectable<FlowBindingTable>;
export type FlowPromotionRow = Selectable<FlowPromotionTable>;

/** Every environment binding of a flow. */
export function listBindings(db: Executor<EngineDb>, flowId: string) {
  return db.selectFrom('flow_binding').selectAll().where('flow_id', '=', flowId).execute();
}

/** Binds an environment of a flow to a version (replacing its previous binding). */
export async function upsertBinding(db: Executor<EngineDb>, row: Insertable<FlowBindingTable>): Promise<void> {
  await db
    .insertInto('flow_binding')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['flow_id', 'environment']).doUpdateSet({
        version: row.version,
        promotion_id: row.promotion_id,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function insertPromotion(db: Executor<EngineDb>, row: Insertable<FlowPromotionTable>): Promise<void> {
  await db.insertInto('flow_promotion').values(row).execute();
}

export function findPromotion(db: Executor<EngineDb>, flowId: string, id: string) {
  return db
    .selectFrom('flow_promotion')
    .selectAll()
    .where('flow_id', '=', flowId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Promotions of a flow, newest first, before the `before` id; `limit + 1` rows. */
export function listPromotionRows(
  db: Executor<EngineDb>,
  flowId: string,
  query: { limit: number; before?: string | undefined },
) {
  let q = db.selectFrom('flow_promotion').selectAll().where('flow_id', '=', flowId);
  if (query.before !== undefined) q = q.where('id', '<', query.before);
  return q
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
}
