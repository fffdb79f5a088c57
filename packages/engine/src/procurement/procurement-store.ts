import type { Executor } from '@keel/core';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type {
  EngineDb,
  InventoryItemTable,
  ProcurementOrderTable,
  ProcurementQuoteTable,
  SupplierTable,
} from '../db/schema.ts';

export type SupplierRow = Selectable<SupplierTable>;
export type InventoryItemRow = Selectable<InventoryItemTable>;
export type ProcurementOrderRow = Selectable<ProcurementOrderTable>;
export type ProcurementQuoteRow = Selectable<ProcurementQuoteTable>;

/** A keyset page by id: rows after `after` (exclusive), one more than `limit` so the caller can tell a next page. */
interface IdPage {
  stores: string[];
  limit: number;
  after?: string | undefined;
}

// Suppliers -----------------------------------------------------------------------------------------------------

/** The supplier with this id in one of `stores`. */
export function findSupplierInStores(db: Executor<EngineDb>, stores: string[], id: string) {
  return db.selectFrom('supplier').selectAll().where('id', '=', id).where('store_id', 'in', stores).executeTakeFirst();
}

/** The supplier `storeId` + `externalId` names. */
export function findSupplierByExternalId(db: Executor<EngineDb>, storeId: string, externalId: string) {
  return db
    .selectFrom('supplier')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
}

export async function insertSupplier(db: Executor<EngineDb>, row: Insertable<SupplierTable>): Promise<void> {
  await db.insertInto('supplier').values(row).execute();
}

/** Updates a supplier and returns the row as stored. */
export async function updateSupplier(
  db: Executor<EngineDb>,
  id: string,
  fields: Updateable<SupplierTable>,
): Promise<SupplierRow> {
  return (await db.updateTable('supplier').set(fields).where('id', '=', id).returningAll().executeTakeFirst())!;
}

/** Deletes a supplier; its inventory items keep existing without one. */
export async function deleteSupplierRow(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.updateTable('inventory_item').set({ supplier_id: null }).where('supplier_id', '=', id).execute();
  await db.deleteFrom('supplier').where('id', '=', id).execute();
}

/** Suppliers of `stores` by ascending id. */
export function listSupplierRows(db: Executor<EngineDb>, page: IdPage) {
  let q = db.selectFrom('supplier').selectAll().where('store_id', 'in', page.stores);
  if (page.after) q = q.where('id', '>', page.after);
  return q
    .orderBy('id')
    .limit(page.limit + 1)
    .execute();
}

// Inventory items -----------------------------------------------------------------------------------------------

/** The inventory item with this id in one of `stores`. */
export function findItemInStores(db: Executor<EngineDb>, stores: string[], id: string) {
  return db
    .selectFrom('inventory_item')
    .selectAll()
    .where('id', '=', id)
    .where('store_id', 'in', stores)
    .executeTakeFirst();
}

/** The inventory item `storeId` + `sku` names. */
export function findItemBySku(db: Executor<EngineDb>, storeId: string, sku: string) {
  return db
    .selectFrom('inventory_item')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('sku', '=', sku)
    .executeTakeFirst();
}

export async function insertItem(db: Executor<EngineDb>, row: Insertable<InventoryItemTable>): Promise<void> {
  await db.insertInto('inventory_item').values(row).execute();
}

/** Updates an inventory item and returns the row as stored. */
export async function updateItem(
  db: Executor<EngineDb>,
  id: string,
  fields: Updateable<InventoryItemTable>,
): Promise<InventoryItemRow> {
  return (await db.updateTable('inventory_item').set(fields).where('id', '=', id).returningAll().executeTakeFirst())!;
}

export async function deleteItem(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('inventory_item').where('id', '=', id).execute();
}

/** Inventory items of `stores` by ascending id. */
export function listItemRows(db: Executor<EngineDb>, page: IdPage) {
  let q = db.selectFrom('inventory_item').selectAll().where('store_id', 'in', page.stores);
  if (page.after) q = q.where('id', '>', page.after);
  return q
    .orderBy('id')
    .limit(page.limit + 1)
    .execute();
}

// Procurement orders and quotes ---------------------------------------------------------------------------------

/** The procurement order with this id in one of `stores`. */
export function findOrderInStores(db: Executor<EngineDb>, stores: string[], id: string) {
  return db
    .selectFrom('procurement_order')
    .selectAll()
    .where('id', '=', id)
    .where('store_id', 'in', stores)
    .executeTakeFirst();
}

export async function insertOrder(db: Executor<EngineDb>, row: Insertable<ProcurementOrderTable>): Promise<void> {
  await db.insertInto('procurement_order').values(row).execute();
}

/** Records that an order was sent, only if it was not yet (the row as stored, or undefined when it already was). */
export function markOrderSent(db: Executor<EngineDb>, id: string, now: string) {
  return db
    .updateTable('procurement_order')
    .set({ sent_at: now, updated_at: now })
    .where('id', '=', id)
    .where('sent_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function setOrderStatus(db: Executor<EngineDb>, id: string, status: string, now: string): Promise<void> {
  await db.updateTable('procurement_order').set({ status, updated_at: now }).where('id', '=', id).execute();
}

/** Procurement orders of `stores` by descending id (newest first), optionally of one status. */
export function listOrderRows(db: Executor<EngineDb>, page: IdPage & { status?: string | undefined }) {
  let q = db.selectFrom('procurement_order').selectAll().where('store_id', 'in', page.stores);
  if (page.status) q = q.where('status', '=', page.status);
  if (page.after) q = q.where('id', '<', page.after);
  return q
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

export async function insertQuote(db: Executor<EngineDb>, row: Insertable<ProcurementQuoteTable>): Promise<void> {
  await db.insertInto('procurement_quote').values(row).execute();
}

/** The first 100 quotes of an order, oldest first. */
export function listQuoteRows(db: Executor<EngineDb>, orderId: string) {
  return db
    .selectFrom('procurement_quote')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('created_at')
    .limit(100)
    .execute();
}
