import type { Executor } from '@keel/core';
import type { Insertable, Selectable, Updateable } from 'kysely';
import { param, preparedQuery } from '../db/prepared.ts';
import type { EngineDb, ProductTable } from '../db/schema.ts';

export type ProductRow = Selectable<ProductTable>;
export type NewProductRow = Insertable<ProductTable>;
export type ProductChanges = Updateable<ProductTable>;

const COLUMNS = [
  'seq',
  'id',
  'catalog_id',
  'merchant_id',
  'store_id',
  'sku',
  'external_id',
  'name',
  'description',
  'price_minor',
  'currency',
  'status',
  'in_stock',
  'inventory_quantity',
  'image_url',
  'image_urls',
  'product_url',
  'metadata',
  'other_details',
  'variants',
  'search_text',
  'source',
  'created_at',
  'updated_at',
] as const;

// The upsert path runs these on every write: compiled once (see preparedQuery), bound per call.
const selectBySku = preparedQuery((db) =>
  db.selectFrom('product').select(COLUMNS).where('store_id', '=', param('storeId')).where('sku', '=', param('value')),
);
const selectByExternalId = preparedQuery((db) =>
  db
    .selectFrom('product')
    .select(COLUMNS)
    .where('store_id', '=', param('storeId'))
    .where('external_id', '=', param('value')),
);
const selectIdByCatalogId = preparedQuery((db) =>
  db.selectFrom('product').select('id').where('catalog_id', '=', param('catalogId')),
);
const INSERT_COLUMNS = COLUMNS.filter((column) => column !== 'seq');
const insertReturning = preparedQuery((db) =>
  db
    .insertInto('product')
    .values(Object.fromEntries(INSERT_COLUMNS.map((column) => [column, param(column)])) as NewProductRow)
    .returning(COLUMNS),
);

export async function findProductBySku(
  db: Executor<EngineDb>,
  storeId: string,
  sku: string,
): Promise<ProductRow | undefined> {
  return (await selectBySku(db, { storeId, value: sku }))[0];
}

export async function findProductByExternalId(
  db: Executor<EngineDb>,
  storeId: string,
  externalId: string,
): Promise<ProductRow | undefined> {
  return (await selectByExternalId(db, { storeId, value: externalId }))[0];
}

export async function catalogIdTaken(db: Executor<EngineDb>, catalogId: string): Promise<boolean> {
  return (await selectIdByCatalogId(db, { catalogId })).length > 0;
}

/** A product by UUID, only within the given stores (anything else is "not found"). */
export function findProductById(
  db: Executor<EngineDb>,
  storeIds: readonly string[],
  id: string,
): Promise<ProductRow | undefined> {
  if (storeIds.length === 0) return Promise.resolve(undefined);
  return db
    .selectFrom('product')
    .select(COLUMNS)
    .where('id', '=', id)
    .where('store_id', 'in', storeIds)
    .executeTakeFirst();
}

export function findProductByCatalogId(
  db: Executor<EngineDb>,
  storeIds: readonly string[],
  catalogId: string,
): Promise<ProductRow | undefined> {
  if (storeIds.length === 0) return Promise.resolve(undefined);
  return db
    .selectFrom('product')
    .select(COLUMNS)
    .where('catalog_id', '=', catalogId)
    .where('store_id', 'in', storeIds)
    .executeTakeFirst();
}

/** Products with this sku or externalId across the given stores (at most a few: one per store). */
export function findProductsByIdentifier(
  db: Executor<EngineDb>,
  storeIds: readonly string[],
  field: 'sku' | 'external_id',
  value: string,
): Promise<ProductRow[]> {
  if (storeIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('product')
    .select(COLUMNS)
    .where(field, '=', value)
    .where('store_id', 'in', storeIds)
    .limit(50)
    .execute();
}

export function findProductsByCatalogIds(
  db: Executor<EngineDb>,
  storeId: string,
  catalogIds: readonly string[],
): Promise<ProductRow[]> {
  if (catalogIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('product')
    .select(COLUMNS)
    .where('store_id', '=', storeId)
    .where('catalog_id', 'in', catalogIds)
    .execute();
}

export function findProductsByIds(db: Executor<EngineDb>, ids: readonly string[]): Promise<ProductRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('product').select(COLUMNS).where('id', 'in', ids).execute();
}

export async function insertProduct(db: Executor<EngineDb>, row: NewProductRow): Promise<ProductRow> {
  const values: Record<string, unknown> = {};
  for (const column of INSERT_COLUMNS) values[column] = row[column] ?? null;
  const [inserted] = await insertReturning(db, values);
  if (!inserted) throw new Error('insert into product returned no row');
  return inserted;
}

export function updateProduct(
  db: Executor<EngineDb>,
  id: string,
  changes: ProductChanges,
): Promise<ProductRow | undefined> {
  return db.updateTable('product').set(changes).where('id', '=', id).returning(COLUMNS).executeTakeFirst();
}

export async function deleteProduct(db: Executor<EngineDb>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('product').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A page of products in the given stores, newest first, after the `beforeSeq` keyset cursor. */
export function listProducts(
  db: Executor<EngineDb>,
  storeIds: readonly string[],
  options: { limit: number; beforeSeq?: number | undefined; status?: string | undefined },
): Promise<ProductRow[]> {
  if (storeIds.length === 0) return Promise.resolve([]);
  let query = db.selectFrom('product').select(COLUMNS).where('store_id', 'in', storeIds);
  if (options.beforeSeq !== undefined) query = query.where('seq', '<', options.beforeSeq);
  if (options.status !== undefined) query = query.where('status', '=', options.status);
  return query.orderBy('seq', 'desc').limit(options.limit).execute();
}

/**
 * Takes `quantity` units of a product in one conditional statement: it succeeds only while the product is
 * active, in stock and has at least that many units, so concurrent orders can never take the same units twice.
 * Returns the row after the change, or undefined when the condition did not hold.
 */
export function deductInventory(
  db: Executor<EngineDb>,
  productId: string,
  quantity: number,
  now: string,
): Promise<ProductRow | undefined> {
  return db
    .updateTable('product')
    .set((eb) => ({
      inventory_quantity: eb('inventory_quantity', '-', quantity),
      in_stock: eb.case().when('inventory_quantity', '>', quantity).then(eb.ref('in_stock')).else(false).end(),
      updated_at: now,
    }))
    .where('id', '=', productId)
    .where('status', '=', 'active')
    .where('in_stock', '=', true)
    .where('inventory_quantity', '>=', quantity)
    .returning(COLUMNS)
    .executeTakeFirst();
}

/** Puts units back (a cancelled order). */
export function restockInventory(
  db: Executor<EngineDb>,
  productId: string,
  quantity: number,
  now: string,
): Promise<ProductRow | undefined> {
  return db
    .updateTable('product')
    .set((eb) => ({ inventory_quantity: eb('inventory_quantity', '+', quantity), in_stock: true, updated_at: now }))
    .where('id', '=', productId)
    .returning(COLUMNS)
    .executeTakeFirst();
}
