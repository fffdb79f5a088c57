import { decodeCursor, type Executor, fromJsonColumn, isUniqueViolation, keysetPage, toIsoString } from '@keel/core';
import type { EngineContext } from '../context.ts';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors, invalidCursor } from '../errors.ts';
import { isUuid, newId, publicId } from '../ids.ts';
import { type Principal, storesInScope } from '../merchants/principal.ts';
import type { EventSink, WriteSource } from '../webhooks/events.ts';
import { type CartItemView, toCartItemView } from './cart-service.ts';
import {
  completeCartOfCheckout,
  completeCheckout,
  findCheckoutInStores,
  findCheckoutStatus,
  listCartItems,
} from './cart-store.ts';
import { formatMinor } from './money.ts';
import { findOrderInStores, insertOrder, listOrderRows, type OrderRow, updateOrderInStatus } from './order-store.ts';
import { toProductView } from './product-service.ts';
import { deductInventory, findProductsByIds, restockInventory } from './product-store.ts';

export type { OrderRow };

type JsonObject = Record<string, unknown>;

export interface Address {
  line1: string;
  line2?: string | null | undefined;
  city: string;
  region?: string | null | undefined;
  country: string;
  postalCode: string;
}

export interface PaymentInput {
  id?: string | undefined;
  status?: string | undefined;
  provider?: string | undefined;
}

export interface CompleteOrderInput {
  checkoutId: string;
  customer?: { name?: string | undefined; email?: string | undefined } | null | undefined;
  shippingAddress?: Address | null | undefined;
  billingAddress?: Address | null | undefined;
  payment?: PaymentInput | null | undefined;
  paymentDetails?: { provider?: string | undefined; reference?: string | undefined } | null | undefined;
  metadata?: object | null | undefined;
  otherDetails?: object | null | undefined;
}

export interface OrderView {
  id: string;
  orderId: string;
  scope: { merchantId: string; storeId: string };
  storeId: string;
  cart: { id: string };
  checkout: { id: string };
  payment: { id: string; status: string; provider: string | null; reference?: string | null };
  customer: JsonObject | null;
  shippingAddress: JsonObject | null;
  billingAddress: JsonObject | null;
  status: string;
  items: CartItemView[];
  totalQuantity: number;
  totalAmount: string;
  currency: string;
  metadata: JsonObject | null;
  otherDetails: JsonObject | null;
  source: string;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  cancelledAt: string | null;
}

const json = <T>(value: unknown): T | null => (value === null || value === undefined ? null : fromJsonColumn<T>(value));

export function toOrderView(row: OrderRow): OrderView {
  return {
    id: row.id,
    orderId: row.order_id,
    scope: { merchantId: row.merchant_id, storeId: row.store_id },
    storeId: row.store_id,
    cart: { id: row.cart_id },
    checkout: { id: row.checkout_id },
    payment: fromJsonColumn(row.payment),
    customer: json(row.customer),
    shippingAddress: json(row.shipping_address),
    billingAddress: json(row.billing_address),
    status: row.status,
    items: fromJsonColumn<CartItemView[]>(row.items),
    totalQuantity: Number(row.total_quantity),
    totalAmount: formatMinor(Number(row.total_minor), row.currency),
    currency: row.currency,
    metadata: json(row.metadata),
    otherDetails: json(row.other_details),
    source: row.source,
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
    completedAt: row.completed_at === null ? null : toIsoString(row.completed_at),
    cancelledAt: row.cancelled_at === null ? null : toIsoString(row.cancelled_at),
  };
}

function paymentOf(input: CompleteOrderInput): OrderView['payment'] {
  return {
    id: input.payment?.id ?? publicId('pay'),
    status: input.payment?.status ?? 'pending',
    provider: input.payment?.provider ?? input.paymentDetails?.provider ?? null,
    reference: input.paymentDetails?.reference ?? null,
  };
}

/**
 * Completes the order of a prepared checkout. In one transaction: the cart is locked, the order row is
 * inserted (its unique `checkout_id` makes a second order for the checkout impossible), and each product's
 * units are taken by a conditional UPDATE (duplicate lines aggregated first) whose affected-row count decides —
 * so concurrent orders never oversell. Any failure rolls everything back.
 */
export async function completeOrder(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  input: CompleteOrderInput,
  source: WriteSource,
): Promise<OrderView> {
  const stores = storesInScope(principal, undefined);
  const checkout = await findCheckoutInStores(trx, stores, input.checkoutId);
  if (!checkout) throw EngineErrors.checkoutNotFound(input.checkoutId);
  if (checkout.status === 'completed') throw EngineErrors.checkoutCompleted(checkout.id);
  if (checkout.status !== 'prepared') throw EngineErrors.checkoutNotPrepared(checkout.id, checkout.status);
  const now = new Date().toISOString();
  const cart = await completeCartOfCheckout(trx, checkout.cart_id, checkout.id, now);
  if (!cart) {
    // Lost a race with another completion of the same checkout, or the cart was archived meanwhile.
    const current = await findCheckoutStatus(trx, checkout.id);
    if (current === 'completed') throw EngineErrors.checkoutCompleted(checkout.id);
    throw EngineErrors.checkoutNotPrepared(checkout.id, current ?? 'gone');
  }
  const items = await listCartItems(trx, cart.id);
  if (items.length === 0) throw EngineErrors.cartEmpty(cart.id);

  const order: OrderRow = {
    id: newId(),
    order_id: publicId('ord'),
    merchant_id: cart.merchant_id,
    store_id: cart.store_id,
    cart_id: cart.id,
    checkout_id: checkout.id,
    status: 'completed',
    payment: JSON.stringify(paymentOf(input)),
    customer: input.customer ? JSON.stringify(input.customer) : null,
    shipping_address: input.shippingAddress ? JSON.stringify(input.shippingAddress) : null,
    billing_address: input.billingAddress ? JSON.stringify(input.billingAddress) : null,
    items: JSON.stringify(items.map(toCartItemView)),
    total_quantity: Number(cart.total_quantity),
    total_minor: Number(cart.total_minor),
    currency: cart.currency ?? 'USD',
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    other_details: input.otherDetails ? JSON.stringify(input.otherDetails) : null,
    source,
    created_at: now,
    updated_at: now,
    completed_at: now,
    cancelled_at: null,
  };
  try {
    await insertOrder(trx, order);
  } catch (error) {
    if (isUniqueViolation(error)) throw EngineErrors.checkoutCompleted(checkout.id);
    throw error;
  }

  const wanted = new Map<string, number>();
  for (const item of items) wanted.set(item.product_id, (wanted.get(item.product_id) ?? 0) + Number(item.quantity));
  // A fixed order of row locks: two orders touching the same products cannot deadlock.
  const changed = [];
  for (const productId of [...wanted.keys()].sort()) {
    const quantity = wanted.get(productId)!;
    const after = await deductInventory(trx, productId, quantity, now);
    if (!after) {
      const [product] = await findProductsByIds(trx, [productId]);
      const catalogId = items.find((item) => item.product_id === productId)!.catalog_id;
      if (product?.status !== 'active') throw EngineErrors.productUnavailable(catalogId);
      if (Number(product.inventory_quantity) <= 0) throw EngineErrors.outOfStock(catalogId);
      throw EngineErrors.insufficientInventory(quantity, catalogId);
    }
    changed.push(after);
  }
  await completeCheckout(trx, checkout.id, now);

  const view = toOrderView(order);
  const base = { merchantId: order.merchant_id, storeId: order.store_id, source };
  sink.emit({ ...base, event: 'order.created', body: { order: view } });
  sink.emit({ ...base, event: 'order.completed', body: { order: view } });
  for (const product of changed)
    sink.emit({ ...base, event: 'product.inventory.updated', body: { product: toProductView(product) } });
  return view;
}

/** An order by its UUID, public order id (`ord_…`) or checkout id (`chk_…`). */
function findOrder(db: Executor<EngineDb>, stores: string[], reference: string): Promise<OrderRow | undefined> {
  if (isUuid(reference)) return findOrderInStores(db, stores, { id: reference.toLowerCase() });
  if (reference.startsWith('chk_')) return findOrderInStores(db, stores, { checkoutId: reference });
  return findOrderInStores(db, stores, { orderId: reference });
}

/** An order by its UUID, public order id or checkout id. */
export async function getOrder(ctx: EngineContext, principal: Principal, reference: string): Promise<OrderView> {
  const row = await findOrder(ctx.db, storesInScope(principal, undefined), reference);
  if (!row) throw EngineErrors.orderNotFound(reference);
  return toOrderView(row);
}

export async function listOrders(
  ctx: EngineContext,
  principal: Principal,
  query: { storeId?: string | undefined; status?: string | undefined; limit: number; cursor?: string | undefined },
): Promise<{ data: OrderView[]; nextCursor: string | null }> {
  const stores = storesInScope(principal, query.storeId);
  const after = decodeCursor('order', query.cursor, ['string', 'string'], invalidCursor);
  const rows = await listOrderRows(ctx.db, { stores, status: query.status, after, limit: query.limit });
  const page = keysetPage('order', rows, query.limit, (last) => [toIsoString(last.created_at), last.id]);
  return { data: page.rows.map(toOrderView), nextCursor: page.next };
}

export interface OrderPatch {
  status?: 'completed' | 'cancelled' | undefined;
  customer?: CompleteOrderInput['customer'];
  shippingAddress?: Address | null | undefined;
  billingAddress?: Address | null | undefined;
  payment?: { status?: string | undefined; provider?: string | undefined } | undefined;
  metadata?: object | null | undefined;
  otherDetails?: object | null | undefined;
}

/**
 * Updates an order's detail fields and status. `completed` → `cancelled` puts the units back in stock
 * (`order.cancelled` and `product.inventory.updated`); a cancelled order cannot be completed again (409).
 */
export async function patchOrder(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  reference: string,
  patch: OrderPatch,
  source: WriteSource,
): Promise<OrderView> {
  const existing = await findOrder(trx, storesInScope(principal, undefined), reference);
  if (!existing) throw EngineErrors.orderNotFound(reference);
  const now = new Date().toISOString();
  const changes: Partial<OrderRow> = { updated_at: now };
  if (patch.customer !== undefined) changes.customer = patch.customer === null ? null : JSON.stringify(patch.customer);
  if (patch.shippingAddress !== undefined)
    changes.shipping_address = patch.shippingAddress === null ? null : JSON.stringify(patch.shippingAddress);
  if (patch.billingAddress !== undefined)
    changes.billing_address = patch.billingAddress === null ? null : JSON.stringify(patch.billingAddress);
  if (patch.metadata !== undefined) changes.metadata = patch.metadata === null ? null : JSON.stringify(patch.metadata);
  if (patch.otherDetails !== undefined)
    changes.other_details = patch.otherDetails === null ? null : JSON.stringify(patch.otherDetails);
  if (patch.payment !== undefined) {
    const payment = fromJsonColumn<OrderView['payment']>(existing.payment);
    changes.payment = JSON.stringify({
      ...payment,
      ...(patch.payment.status ? { status: patch.payment.status } : {}),
      ...(patch.payment.provider ? { provider: patch.payment.provider } : {}),
    });
  }
  const cancelling = patch.status === 'cancelled' && existing.status !== 'cancelled';
  if (patch.status !== undefined && patch.status !== existing.status) {
    if (existing.status === 'cancelled') throw EngineErrors.orderTransition(reference, existing.status, patch.status);
    changes.status = patch.status;
    if (cancelling) changes.cancelled_at = now;
  }
  const updated = await updateOrderInStatus(trx, existing.id, existing.status, changes);
  if (!updated) throw EngineErrors.orderTransition(reference, 'changing concurrently', patch.status ?? existing.status);
  const view = toOrderView(updated);
  const base = { merchantId: updated.merchant_id, storeId: updated.store_id, source };
  sink.emit({ ...base, event: 'order.updated', body: { order: view } });
  if (cancelling) {
    sink.emit({ ...base, event: 'order.cancelled', body: { order: view } });
    const wanted = new Map<string, number>();
    for (const item of view.items) wanted.set(item.productId, (wanted.get(item.productId) ?? 0) + item.quantity);
    for (const productId of [...wanted.keys()].sort()) {
      const product = await restockInventory(trx, productId, wanted.get(productId)!, now);
      if (product)
        sink.emit({ ...base, event: 'product.inventory.updated', body: { product: toProductView(product) } });
    }
  }
  return view;
}
