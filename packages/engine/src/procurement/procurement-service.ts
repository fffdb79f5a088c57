import { decodeCursor, type Executor, fromJsonColumn, keysetPage, toIsoString } from '@keel/core';
import type { Selectable } from 'kysely';
import { formatMinor, parseCurrency, toMinorUnits } from '../catalog/money.ts';
import type { EngineContext } from '../context.ts';
import type {
  EngineDb,
  InventoryItemTable,
  ProcurementOrderTable,
  ProcurementQuoteTable,
  SupplierTable,
} from '../db/schema.ts';
import { EngineErrors, invalidCursor } from '../errors.ts';
import { isUuid, newId } from '../ids.ts';
import { type Principal, requireStoreAccess, storesInScope } from '../merchants/principal.ts';
import type { EventSink, WriteSource } from '../webhooks/events.ts';
import type { InventoryItemInput, ProcurementOrderInput, QuoteInput, SupplierInput } from './procurement-schemas.ts';
import {
  deleteItem,
  deleteSupplierRow,
  findItemBySku,
  findItemInStores,
  findOrderInStores,
  findSupplierByExternalId,
  findSupplierInStores,
  insertItem,
  insertOrder,
  insertQuote,
  insertSupplier,
  listItemRows,
  listOrderRows,
  listQuoteRows,
  listSupplierRows,
  markOrderSent,
  setOrderStatus,
  updateItem,
  updateSupplier,
} from './procurement-store.ts';

type JsonObject = Record<string, unknown>;
const obj = (value: unknown) => (value === null || value === undefined ? null : fromJsonColumn<JsonObject>(value));

function supplierView(row: Selectable<SupplierTable>) {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    externalId: row.external_id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    status: row.status,
    metadata: obj(row.metadata),
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}

function itemView(row: Selectable<InventoryItemTable>) {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    supplierId: row.supplier_id,
    sku: row.sku,
    name: row.name,
    quantity: Number(row.quantity),
    reorderLevel: Number(row.reorder_level),
    unitCost: row.unit_cost_minor === null ? null : formatMinor(Number(row.unit_cost_minor), row.currency),
    currency: row.currency,
    metadata: obj(row.metadata),
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}

function orderView(row: Selectable<ProcurementOrderTable>) {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    supplierId: row.supplier_id,
    status: row.status,
    items: fromJsonColumn<JsonObject[]>(row.items),
    notes: row.notes,
    source: row.source,
    sentAt: row.sent_at === null ? null : toIsoString(row.sent_at),
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}

function quoteView(row: Selectable<ProcurementQuoteTable>) {
  return {
    id: row.id,
    orderId: row.order_id,
    supplierId: row.supplier_id,
    items: fromJsonColumn<{ name: string; quantity: number; unitPrice: string; totalPrice: string }[]>(row.items),
    totalAmount: formatMinor(Number(row.total_minor), row.currency),
    currency: row.currency,
    notes: row.notes,
    validUntil: row.valid_until === null ? null : toIsoString(row.valid_until),
    createdAt: toIsoString(row.created_at),
  };
}

function checkId(id: string, field: string): string {
  if (!isUuid(id)) throw EngineErrors.invalidId(field);
  return id.toLowerCase();
}

function supplierInStores(db: Executor<EngineDb>, stores: string[], id: string) {
  return findSupplierInStores(db, stores, checkId(id, 'supplierId'));
}

/** A supplier referenced by an item or order must be in the same store. */
async function checkSupplierRef(
  db: Executor<EngineDb>,
  storeId: string,
  supplierId: string | null | undefined,
): Promise<string | null> {
  if (!supplierId) return null;
  const row = await supplierInStores(db, [storeId], supplierId);
  if (!row) throw EngineErrors.supplierNotFound(supplierId);
  return row.id;
}

/** One page of the procurement list `kind` (keyset on id; core's cursor). */
const page = <T extends { id: string }>(kind: string, rows: T[], limit: number) =>
  keysetPage(`procurement-${kind}`, rows, limit, (last) => [last.id]);

/** The id a page of the procurement list `kind` continues after; 400 for a cursor it did not return. */
const afterCursor = (kind: string, cursor: string | undefined) =>
  decodeCursor(`procurement-${kind}`, cursor, ['string'], invalidCursor)?.[0];

// Suppliers -------------------------------------------------------------------------------------------

/** Creates a supplier, or updates the one `storeId` + `externalId` names (supplier.updated ingress and REST alike). */
export async function upsertSupplier(
  trx: Executor<EngineDb>,
  principal: Principal,
  input: SupplierInput,
): Promise<{ supplier: ReturnType<typeof supplierView>; mode: 'created' | 'updated' }> {
  const storeId = input.storeId.toLowerCase();
  const merchantId = requireStoreAccess(principal, storeId);
  const now = new Date().toISOString();
  const fields = {
    name: input.name,
    ...(input.externalId !== undefined ? { external_id: input.externalId } : {}),
    ...(input.email !== undefined ? { email: input.email } : {}),
    ...(input.phone !== undefined ? { phone: input.phone } : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.metadata !== undefined
      ? { metadata: input.metadata === null ? null : JSON.stringify(input.metadata) }
      : {}),
  };
  if (input.externalId) {
    const existing = await findSupplierByExternalId(trx, storeId, input.externalId);
    if (existing) {
      const row = await updateSupplier(trx, existing.id, { ...fields, updated_at: now });
      return { supplier: supplierView(row), mode: 'updated' };
    }
  }
  const row = {
    id: newId(),
    merchant_id: merchantId,
    store_id: storeId,
    external_id: input.externalId ?? null,
    name: input.name,
    email: input.email ?? null,
    phone: input.phone ?? null,
    status: input.status ?? 'active',
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    created_at: now,
    updated_at: now,
  };
  await insertSupplier(trx, row);
  return { supplier: supplierView(row), mode: 'created' };
}

export async function listSuppliers(
  ctx: EngineContext,
  principal: Principal,
  query: { storeId?: string | undefined; limit: number; cursor?: string | undefined },
) {
  const { rows, next } = page(
    'suppliers',
    await listSupplierRows(ctx.db, {
      stores: storesInScope(principal, query.storeId),
      limit: query.limit,
      after: afterCursor('suppliers', query.cursor),
    }),
    query.limit,
  );
  return { data: rows.map(supplierView), nextCursor: next };
}

export async function getSupplier(ctx: EngineContext, principal: Principal, id: string) {
  const row = await supplierInStores(ctx.db, storesInScope(principal, undefined), id);
  if (!row) throw EngineErrors.supplierNotFound(id);
  return supplierView(row);
}

/** Changes a supplier's fields (its store never changes). */
export async function patchSupplier(
  trx: Executor<EngineDb>,
  principal: Principal,
  id: string,
  patch: Partial<SupplierInput>,
) {
  const existing = await supplierInStores(trx, storesInScope(principal, undefined), id);
  if (!existing) throw EngineErrors.supplierNotFound(id);
  if (patch.storeId !== undefined && patch.storeId.toLowerCase() !== existing.store_id)
    throw EngineErrors.invalidField('storeId cannot change');
  const row = await updateSupplier(trx, existing.id, {
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.externalId !== undefined ? { external_id: patch.externalId } : {}),
    ...(patch.email !== undefined ? { email: patch.email } : {}),
    ...(patch.phone !== undefined ? { phone: patch.phone } : {}),
    ...(patch.status !== undefined ? { status: patch.status } : {}),
    ...(patch.metadata !== undefined
      ? { metadata: patch.metadata === null ? null : JSON.stringify(patch.metadata) }
      : {}),
    updated_at: new Date().toISOString(),
  });
  return supplierView(row);
}

/** Deletes a supplier (its items keep existing without one). */
export async function deleteSupplier(trx: Executor<EngineDb>, principal: Principal, id: string): Promise<void> {
  const existing = await supplierInStores(trx, storesInScope(principal, undefined), id);
  if (!existing) throw EngineErrors.supplierNotFound(id);
  await deleteSupplierRow(trx, existing.id);
}

// Inventory items ---------------------------------------------------------------------------------------

function itemFields(input: Partial<InventoryItemInput>, currency: string) {
  return {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.sku !== undefined ? { sku: input.sku } : {}),
    ...(input.quantity !== undefined ? { quantity: input.quantity } : {}),
    ...(input.reorderLevel !== undefined ? { reorder_level: input.reorderLevel } : {}),
    ...(input.unitCost !== undefined
      ? { unit_cost_minor: input.unitCost === null ? null : toMinorUnits(input.unitCost, currency, 'unitCost') }
      : {}),
    ...(input.currency !== undefined ? { currency } : {}),
    ...(input.metadata !== undefined
      ? { metadata: input.metadata === null ? null : JSON.stringify(input.metadata) }
      : {}),
  };
}

/** Creates an inventory item, or replaces the snapshot of the one `storeId` + `sku` names (inventory.updated is absolute). */
export async function upsertInventoryItem(
  trx: Executor<EngineDb>,
  principal: Principal,
  input: InventoryItemInput,
): Promise<{ item: ReturnType<typeof itemView>; mode: 'created' | 'updated' }> {
  const storeId = input.storeId.toLowerCase();
  const merchantId = requireStoreAccess(principal, storeId);
  const supplierId =
    input.supplierId === undefined ? undefined : await checkSupplierRef(trx, storeId, input.supplierId);
  const now = new Date().toISOString();
  if (input.sku) {
    const existing = await findItemBySku(trx, storeId, input.sku);
    if (existing) {
      const currency = input.currency !== undefined ? parseCurrency(input.currency) : existing.currency;
      const row = await updateItem(trx, existing.id, {
        ...itemFields(input, currency),
        ...(supplierId !== undefined ? { supplier_id: supplierId } : {}),
        updated_at: now,
      });
      return { item: itemView(row), mode: 'updated' };
    }
  }
  const currency = parseCurrency(input.currency);
  const row = {
    id: newId(),
    merchant_id: merchantId,
    store_id: storeId,
    supplier_id: supplierId ?? null,
    sku: input.sku ?? null,
    name: input.name,
    quantity: input.quantity ?? 0,
    reorder_level: input.reorderLevel ?? 0,
    unit_cost_minor:
      input.unitCost === undefined || input.unitCost === null
        ? null
        : toMinorUnits(input.unitCost, currency, 'unitCost'),
    currency,
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    created_at: now,
    updated_at: now,
  };
  await insertItem(trx, row);
  return { item: itemView(row), mode: 'created' };
}

function itemInStores(db: Executor<EngineDb>, stores: string[], id: string) {
  return findItemInStores(db, stores, checkId(id, 'itemId'));
}

export async function listInventoryItems(
  ctx: EngineContext,
  principal: Principal,
  query: { storeId?: string | undefined; limit: number; cursor?: string | undefined },
) {
  const { rows, next } = page(
    'items',
    await listItemRows(ctx.db, {
      stores: storesInScope(principal, query.storeId),
      limit: query.limit,
      after: afterCursor('items', query.cursor),
    }),
    query.limit,
  );
  return { data: rows.map(itemView), nextCursor: next };
}

export async function getInventoryItem(ctx: EngineContext, principal: Principal, id: string) {
  const row = await itemInStores(ctx.db, storesInScope(principal, undefined), id);
  if (!row) throw EngineErrors.inventoryItemNotFound(id);
  return itemView(row);
}

/** Changes an inventory item's fields (its store never changes). */
export async function patchInventoryItem(
  trx: Executor<EngineDb>,
  principal: Principal,
  id: string,
  patch: Partial<InventoryItemInput>,
) {
  const existing = await itemInStores(trx, storesInScope(principal, undefined), id);
  if (!existing) throw EngineErrors.inventoryItemNotFound(id);
  if (patch.storeId !== undefined && patch.storeId.toLowerCase() !== existing.store_id)
    throw EngineErrors.invalidField('storeId cannot change');
  const supplierId =
    patch.supplierId === undefined ? undefined : await checkSupplierRef(trx, existing.store_id, patch.supplierId);
  const currency = patch.currency !== undefined ? parseCurrency(patch.currency) : existing.currency;
  const row = await updateItem(trx, existing.id, {
    ...itemFields(patch, currency),
    ...(supplierId !== undefined ? { supplier_id: supplierId } : {}),
    updated_at: new Date().toISOString(),
  });
  return itemView(row);
}

/** Deletes an inventory item. */
export async function deleteInventoryItem(trx: Executor<EngineDb>, principal: Principal, id: string): Promise<void> {
  const existing = await itemInStores(trx, storesInScope(principal, undefined), id);
  if (!existing) throw EngineErrors.inventoryItemNotFound(id);
  await deleteItem(trx, existing.id);
}

// Procurement orders and quotes --------------------------------------------------------------------------

function emitOrder(
  sink: EventSink,
  event: 'procurement.order.created' | 'procurement.order.sent',
  view: ReturnType<typeof orderView>,
  source: WriteSource,
) {
  sink.emit({ event, merchantId: view.merchantId, storeId: view.storeId, source, body: { procurementOrder: view } });
}

/** Records a procurement order in `requested` (the supplier quote request workflow starts); emits procurement.order.created. */
export async function createProcurementOrder(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  input: ProcurementOrderInput,
  source: WriteSource,
) {
  const storeId = input.storeId.toLowerCase();
  const merchantId = requireStoreAccess(principal, storeId);
  const supplierId = await checkSupplierRef(trx, storeId, input.supplierId);
  for (const [i, line] of input.items.entries()) {
    if (line.inventoryItemId && !(await itemInStores(trx, [storeId], line.inventoryItemId))) {
      throw EngineErrors.invalidField(`items[${i}].inventoryItemId is not an inventory item of store ${storeId}`);
    }
  }
  const now = new Date().toISOString();
  const row = {
    id: newId(),
    merchant_id: merchantId,
    store_id: storeId,
    supplier_id: supplierId,
    status: 'requested',
    items: JSON.stringify(input.items),
    notes: input.notes ?? null,
    source,
    sent_at: null,
    created_at: now,
    updated_at: now,
  };
  await insertOrder(trx, row);
  const view = orderView(row);
  emitOrder(sink, 'procurement.order.created', view, source);
  return view;
}

function orderInStores(db: Executor<EngineDb>, stores: string[], id: string) {
  return findOrderInStores(db, stores, checkId(id, 'orderId'));
}

export async function listProcurementOrders(
  ctx: EngineContext,
  principal: Principal,
  query: { storeId?: string | undefined; status?: string | undefined; limit: number; cursor?: string | undefined },
) {
  const { rows, next } = page(
    'orders',
    await listOrderRows(ctx.db, {
      stores: storesInScope(principal, query.storeId),
      status: query.status,
      limit: query.limit,
      after: afterCursor('orders', query.cursor),
    }),
    query.limit,
  );
  return { data: rows.map(orderView), nextCursor: next };
}

export async function getProcurementOrder(ctx: EngineContext, principal: Principal, id: string) {
  const row = await orderInStores(ctx.db, storesInScope(principal, undefined), id);
  if (!row) throw EngineErrors.procurementOrderNotFound(id);
  return orderView(row);
}

/** Sends the quote request to the supplier (records sentAt; emits procurement.order.sent). Needs a supplier; sending twice is a 409. */
export async function sendProcurementOrder(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  id: string,
  source: WriteSource,
) {
  const existing = await orderInStores(trx, storesInScope(principal, undefined), id);
  if (!existing) throw EngineErrors.procurementOrderNotFound(id);
  if (!existing.supplier_id)
    throw EngineErrors.procurementTransition(`Procurement order ${id} has no supplier to send it to`);
  if (existing.sent_at !== null) throw EngineErrors.procurementTransition(`Procurement order ${id} was already sent`);
  const now = new Date().toISOString();
  const row = await markOrderSent(trx, existing.id, now);
  if (!row) throw EngineErrors.procurementTransition(`Procurement order ${id} was already sent`);
  const view = orderView(row);
  emitOrder(sink, 'procurement.order.sent', view, source);
  return view;
}

/** Records a supplier's quote: the order moves `requested` → `quote_received` (further quotes are added to it). */
export async function addQuote(trx: Executor<EngineDb>, principal: Principal, orderId: string, input: QuoteInput) {
  const order = await orderInStores(trx, storesInScope(principal, undefined), orderId);
  if (!order) throw EngineErrors.procurementOrderNotFound(orderId);
  const supplierId =
    input.supplierId === undefined ? order.supplier_id : await checkSupplierRef(trx, order.store_id, input.supplierId);
  const currency = parseCurrency(input.currency);
  let total = 0n;
  const items = input.items.map((item, i) => {
    const unit = toMinorUnits(item.unitPrice, currency, `items[${i}].unitPrice`);
    const line = BigInt(unit) * BigInt(item.quantity);
    total += line;
    return {
      name: item.name,
      quantity: item.quantity,
      unitPrice: formatMinor(unit, currency),
      totalPrice: formatMinor(Number(line), currency),
    };
  });
  if (total > 1_000_000_000_000_000n) throw EngineErrors.invalidField('the quote total is too large');
  const now = new Date().toISOString();
  const row = {
    id: newId(),
    order_id: order.id,
    merchant_id: order.merchant_id,
    supplier_id: supplierId,
    items: JSON.stringify(items),
    total_minor: Number(total),
    currency,
    notes: input.notes ?? null,
    valid_until: input.validUntil ? new Date(input.validUntil).toISOString() : null,
    created_at: now,
  };
  await insertQuote(trx, row);
  await setOrderStatus(trx, order.id, 'quote_received', now);
  return quoteView(row);
}

export async function listQuotes(ctx: EngineContext, principal: Principal, orderId: string) {
  const order = await orderInStores(ctx.db, storesInScope(principal, undefined), orderId);
  if (!order) throw EngineErrors.procurementOrderNotFound(orderId);
  const rows = await listQuoteRows(ctx.db, order.id);
  return { data: rows.map(quoteView) };
}
