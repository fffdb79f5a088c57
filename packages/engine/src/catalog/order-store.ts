import type { Executor } from '@keel/core';
import type { Selectable, Updateable } from 'kysely';
import type { EngineDb, SalesOrderTable } from '../db/schema.ts';

export type OrderRow = Selectable<SalesOrderTable>;

/** How an order is named: its UUID, its public order id or its checkout id. */
export type OrderReference = { id: string } | { orderId: string } | { checkoutId: string };

/** Stores a new order (the unique `checkout_id` refuses a second order for a checkout). */
export async function insertOrder(db: Executor<EngineDb>, row: OrderRow): Promise<void> {
  await db.insertInto('sales_order').values(row).execute();
}

/** The order `reference` names in one of `stores`. */
export function findOrderInStores(
  db: Executor<EngineDb>,
  stores: string[],
  reference: OrderReference,
): Promise<OrderRow | undefined> {
  let query = db.selectFrom('sales_order').selectAll().where('store_id', 'in', stores);
  if ('id' in reference) query = query.where('id', '=', reference.id);
  else if ('checkoutId' in reference) query = query.where('checkout_id', '=', reference.checkoutId);
  else query = query.where('order_id', '=', reference.orderId);
  return query.executeTakeFirst();
}

/** Pages of orders of `stores`, newest first (keyset on created_at, id), `limit + 1` rows. */
export function listOrderRows(
  db: Executor<EngineDb>,
  filter: {
    stores: string[];
    status?: string | undefined;
    after?: readonly [string, string] | undefined;
    limit: number;
  },
): Promise<OrderRow[]> {
  let q = db.selectFrom('sales_order').selectAll().where('store_id', 'in', filter.stores);
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  const after = filter.after;
  if (after) {
    q = q.where((eb) =>
      eb.or([eb('created_at', '<', after[0]), eb.and([eb('created_at', '=', after[0]), eb('id', '<', after[1])])]),
    );
  }
  return q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
}

/** Updates an order while its status is still `status`; the row as stored, or undefined when it changed meanwhile. */
export function updateOrderInStatus(
  db: Executor<EngineDb>,
  id: string,
  status: string,
  changes: Updateable<SalesOrderTable>,
): Promise<OrderRow | undefined> {
  return db
    .updateTable('sales_order')
    .set(changes)
    .where('id', '=', id)
    .where('status', '=', status)
    .returningAll()
    .executeTakeFirst();
}
