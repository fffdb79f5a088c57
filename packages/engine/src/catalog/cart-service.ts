import { decodeCursor, type Executor, fromJsonColumn, keysetPage, toBoolean, toIsoString } from '@keel/core';
import type { EngineContext } from '../context.ts';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors, invalidCursor } from '../errors.ts';
import { isUuid, newId, publicId } from '../ids.ts';
import { type Principal, requireStoreAccess, storesInScope } from '../merchants/principal.ts';
import type { EventSink, OutboundEventName, WriteSource } from '../webhooks/events.ts';
import {
  type CartItemRow,
  type CartRow,
  type CheckoutRow,
  cancelPreparedCheckout,
  deleteCartItem,
  deleteCartItems,
  findCartInStores,
  findCheckoutById,
  findCheckoutInStores,
  getCartById,
  insertCart,
  insertCartItem,
  insertCheckout,
  listCartItems,
  listCartRows,
  lockCartInStatuses,
  reopenCartOfCheckout,
  updateCart,
  updateCartItemQuantity,
} from './cart-store.ts';
import { formatMinor, MAX_MINOR } from './money.ts';
import { findProductsByCatalogIds, type ProductRow } from './product-store.ts';

export type { CartItemRow, CartRow, CheckoutRow };

type JsonObject = Record<string, unknown>;

/** Cart statuses: `open`, `cleared` (emptied; takes items again), `checkout_created`, `completed`, `closed`, `archived`. */
export const MUTABLE_CART_STATUSES = ['open', 'cleared', 'checkout_created'];
export const MAX_CART_LINES = 100;
export const MAX_LINE_QUANTITY = 10_000;

export interface CartItemView {
  id: string;
  productId: string;
  catalogId: string;
  quantity: number;
  unitPrice: string;
  totalPrice: string;
  currency: string;
  productSnapshot: JsonObject;
  metadata: JsonObject | null;
  otherDetails: JsonObject | null;
}

export interface CartView {
  id: string;
  scope: { merchantId: string; storeId: string };
  storeId: string;
  status: string;
  checkoutId: string | null;
  checkout?: { id: string; status: string };
  items: CartItemView[];
  totalQuantity: number;
  totalAmount: string;
  currency: string;
  metadata: JsonObject | null;
  otherDetails: JsonObject | null;
  createdAt: string;
  updatedAt: string;
}

export function toCartItemView(item: CartItemRow): CartItemView {
  return {
    id: item.id,
    productId: item.product_id,
    catalogId: item.catalog_id,
    quantity: Number(item.quantity),
    unitPrice: formatMinor(Number(item.unit_price_minor), item.currency),
    totalPrice: formatMinor(Number(item.unit_price_minor) * Number(item.quantity), item.currency),
    currency: item.currency,
    productSnapshot: fromJsonColumn<JsonObject>(item.product_snapshot),
    metadata: item.metadata === null ? null : fromJsonColumn<JsonObject>(item.metadata),
    otherDetails: item.other_details === null ? null : fromJsonColumn<JsonObject>(item.other_details),
  };
}

export function toCartView(cart: CartRow, items: CartItemRow[], checkout?: CheckoutRow): CartView {
  const currency = cart.currency ?? 'USD';
  return {
    id: cart.id,
    scope: { merchantId: cart.merchant_id, storeId: cart.store_id },
    storeId: cart.store_id,
    status: cart.status,
    checkoutId: cart.checkout_id,
    ...(cart.checkout_id ? { checkout: { id: cart.checkout_id, status: checkout?.status ?? 'prepared' } } : {}),
    items: items.map(toCartItemView),
    totalQuantity: Number(cart.total_quantity),
    totalAmount: formatMinor(Number(cart.total_minor), currency),
    currency,
    metadata: cart.metadata === null ? null : fromJsonColumn<JsonObject>(cart.metadata),
    otherDetails: cart.other_details === null ? null : fromJsonColumn<JsonObject>(cart.other_details),
    createdAt: toIsoString(cart.created_at),
    updatedAt: toIsoString(cart.updated_at),
  };
}

function snapshot(product: ProductRow): JsonObject {
  return {
    id: product.id,
    catalogId: product.catalog_id,
    sku: product.sku,
    externalId: product.external_id,
    name: product.name,
    price: formatMinor(Number(product.price_minor), product.currency),
    currency: product.currency,
    imageUrl: product.image_url,
    productUrl: product.product_url,
  };
}

function findCart(db: Executor<EngineDb>, stores: readonly string[], cartId: string): Promise<CartRow | undefined> {
  if (!isUuid(cartId)) throw EngineErrors.invalidId('cartId');
  return findCartInStores(db, stores, cartId.toLowerCase());
}

/**
 * Locks the cart for this transaction (a conditional UPDATE takes the row lock on PostgreSQL and is a no-op
 * elsewhere) when its status is one of `statuses`; otherwise explains why with a 404 or 409.
 */
export async function lockCart(
  trx: Executor<EngineDb>,
  principal: Principal,
  cartId: string,
  statuses: string[],
  action: string,
): Promise<CartRow> {
  const stores = storesInScope(principal, undefined);
  if (!isUuid(cartId)) throw EngineErrors.invalidId('cartId');
  const id = cartId.toLowerCase();
  const locked = await lockCartInStatuses(trx, stores, id, statuses, new Date().toISOString());
  if (locked) return locked;
  const cart = await findCart(trx, stores, id);
  if (!cart) throw EngineErrors.cartNotFound(cartId);
  throw action === 'mutate'
    ? EngineErrors.cartNotOpen(cartId, cart.status)
    : EngineErrors.cartNotOpen(cartId, cart.status);
}

/** Recomputes and stores the cart's totals from its items (exact integer arithmetic). */
async function saveTotals(
  trx: Executor<EngineDb>,
  cart: CartRow,
  items: CartItemRow[],
  changes: Partial<CartRow> = {},
): Promise<CartRow> {
  let quantity = 0;
  let total = 0n;
  for (const item of items) {
    quantity += Number(item.quantity);
    total += BigInt(item.unit_price_minor) * BigInt(item.quantity);
  }
  if (total > BigInt(MAX_MINOR))
    throw EngineErrors.cartLimit('The cart total exceeds the largest amount the catalog accepts');
  const currency = items.length > 0 ? items[0]!.currency : null;
  return updateCart(trx, cart.id, {
    total_quantity: quantity,
    total_minor: Number(total),
    currency: currency ?? cart.currency,
    updated_at: new Date().toISOString(),
    ...changes,
  });
}

function checkSellable(product: ProductRow, quantity: number): void {
  if (product.status !== 'active') throw EngineErrors.productUnavailable(product.catalog_id);
  if (!toBoolean(product.in_stock) || Number(product.inventory_quantity) <= 0)
    throw EngineErrors.outOfStock(product.catalog_id);
  if (quantity > Number(product.inventory_quantity))
    throw EngineErrors.insufficientInventory(quantity, product.catalog_id);
}

export interface AddLine {
  catalogId: string;
  quantity: number;
  metadata?: object | null | undefined;
  otherDetails?: object | null | undefined;
}

/** Adds lines (a line for a catalogId already in the cart adds to its quantity), all or nothing. */
async function addLines(
  trx: Executor<EngineDb>,
  cart: CartRow,
  items: CartItemRow[],
  lines: AddLine[],
): Promise<CartItemRow[]> {
  const merged = new Map<string, AddLine>();
  for (const line of lines) {
    const existing = merged.get(line.catalogId);
    merged.set(line.catalogId, existing ? { ...existing, quantity: existing.quantity + line.quantity } : { ...line });
  }
  const products = await findProductsByCatalogIds(trx, cart.store_id, [...merged.keys()]);
  const byCatalogId = new Map(products.map((p) => [p.catalog_id, p]));
  let currency = items[0]?.currency ?? null;
  const now = new Date().toISOString();
  let position = items.reduce((max, item) => Math.max(max, Number(item.position)), 0);
  const result = [...items];
  for (const line of merged.values()) {
    const product = byCatalogId.get(line.catalogId);
    if (!product)
      throw EngineErrors.productNotFound(`No product with catalogId ${line.catalogId} in store ${cart.store_id}`);
    const current = result.find((item) => item.catalog_id === line.catalogId);
    const quantity = (current ? Number(current.quantity) : 0) + line.quantity;
    if (quantity > MAX_LINE_QUANTITY)
      throw EngineErrors.cartLimit(`A cart line holds at most ${MAX_LINE_QUANTITY} units`);
    checkSellable(product, quantity);
    if (currency !== null && product.currency !== currency)
      throw EngineErrors.currencyMismatch(product.catalog_id, product.currency, currency);
    currency = product.currency;
    if (current) {
      const updated = await updateCartItemQuantity(trx, current.id, quantity, now);
      result[result.indexOf(current)] = updated;
    } else {
      if (result.length >= MAX_CART_LINES) throw EngineErrors.cartLimit(`A cart holds at most ${MAX_CART_LINES} lines`);
      const row: CartItemRow = {
        id: newId(),
        cart_id: cart.id,
        product_id: product.id,
        catalog_id: product.catalog_id,
        quantity,
        unit_price_minor: Number(product.price_minor),
        currency: product.currency,
        product_snapshot: JSON.stringify(snapshot(product)),
        metadata: line.metadata ? JSON.stringify(line.metadata) : null,
        other_details: line.otherDetails ? JSON.stringify(line.otherDetails) : null,
        position: ++position,
        created_at: now,
        updated_at: now,
      };
      await insertCartItem(trx, row);
      result.push(row);
    }
  }
  return result;
}

export interface LineRef {
  itemId?: string | undefined;
  catalogId?: string | undefined;
}

function findLine(items: CartItemRow[], ref: LineRef): CartItemRow {
  const item = ref.itemId
    ? items.find((i) => i.id === ref.itemId!.toLowerCase())
    : items.find((i) => i.catalog_id === ref.catalogId);
  if (!ref.itemId && !ref.catalogId) throw EngineErrors.invalidField('each line needs itemId or catalogId');
  if (!item) throw EngineErrors.cartItemNotFound(ref.itemId ?? ref.catalogId ?? '');
  return item;
}

async function cartResponse(trx: Executor<EngineDb>, cart: CartRow, items?: CartItemRow[]): Promise<CartView> {
  const checkout = cart.checkout_id ? await findCheckoutById(trx, cart.checkout_id) : undefined;
  return toCartView(cart, items ?? (await listCartItems(trx, cart.id)), checkout);
}

function emitCart(
  sink: EventSink,
  event: OutboundEventName,
  view: CartView,
  source: WriteSource,
  extra: JsonObject = {},
): void {
  sink.emit({
    event,
    merchantId: view.scope.merchantId,
    storeId: view.scope.storeId,
    source,
    body: { cart: view, ...extra },
  });
}

async function newCheckout(trx: Executor<EngineDb>, cart: CartRow, now: string): Promise<CheckoutRow> {
  const row: CheckoutRow = {
    id: publicId('chk'),
    cart_id: cart.id,
    merchant_id: cart.merchant_id,
    store_id: cart.store_id,
    status: 'prepared',
    handoff_reference: publicId('hof'),
    created_at: now,
    updated_at: now,
  };
  await insertCheckout(trx, row);
  return row;
}

export interface CreateCartInput {
  storeId: string;
  items?: AddLine[] | undefined;
  metadata?: object | null | undefined;
  otherDetails?: object | null | undefined;
}

/**
 * Creates a cart in a store the key reaches. The catalog API (REST, `catalog_create_cart`, inbound
 * `cart.created`) generates its checkout id at once (`withCheckout`); the reference contract's `cart_create`
 * leaves it open until `checkout_prepare`.
 */
export async function createCart(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  input: CreateCartInput,
  source: WriteSource,
  options: { withCheckout: boolean },
): Promise<CartView> {
  const storeId = input.storeId.toLowerCase();
  const merchantId = requireStoreAccess(principal, storeId);
  const now = new Date().toISOString();
  let cart: CartRow = {
    id: newId(),
    merchant_id: merchantId,
    store_id: storeId,
    status: 'open',
    checkout_id: null,
    currency: null,
    total_quantity: 0,
    total_minor: 0,
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    other_details: input.otherDetails ? JSON.stringify(input.otherDetails) : null,
    created_at: now,
    updated_at: now,
  };
  await insertCart(trx, cart);
  const items = await addLines(trx, cart, [], input.items ?? []);
  let checkout: CheckoutRow | undefined;
  if (options.withCheckout) {
    checkout = await newCheckout(trx, cart, now);
    cart = await saveTotals(trx, cart, items, { status: 'checkout_created', checkout_id: checkout.id });
  } else {
    cart = await saveTotals(trx, cart, items);
  }
  const view = toCartView(cart, items, checkout);
  emitCart(sink, 'cart.created', view, source);
  if (checkout) emitCart(sink, 'checkout.created', view, source, { checkout: checkoutView(checkout, view) });
  return view;
}

type Mutation = 'added' | 'updated' | 'removed';

function emitMutation(sink: EventSink, kind: Mutation, lines: number, view: CartView, source: WriteSource): void {
  emitCart(sink, `cart.${lines > 1 ? 'bundle' : 'item'}.${kind}` as OutboundEventName, view, source);
  emitCart(sink, 'cart.updated', view, source);
}

/** Adds one line (`cart.item.added`) or a bundle of lines atomically (`cart.bundle.added`), then `cart.updated`. */
export async function addCartItems(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  cartId: string,
  lines: AddLine[],
  source: WriteSource,
): Promise<CartView> {
  const cart = await lockCart(trx, principal, cartId, MUTABLE_CART_STATUSES, 'mutate');
  const items = await addLines(trx, cart, await listCartItems(trx, cart.id), lines);
  const saved = await saveTotals(trx, cart, items, cart.status === 'cleared' ? { status: 'open' } : {});
  const view = await cartResponse(trx, saved, items);
  emitMutation(sink, 'added', lines.length, view, source);
  return view;
}

/** Replaces line quantities (by itemId or catalogId), all or nothing. */
export async function updateCartItems(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  cartId: string,
  lines: (LineRef & { quantity: number })[],
  source: WriteSource,
): Promise<CartView> {
  const cart = await lockCart(trx, principal, cartId, MUTABLE_CART_STATUSES, 'mutate');
  const items = await listCartItems(trx, cart.id);
  const now = new Date().toISOString();
  for (const line of lines) {
    const item = findLine(items, line);
    const products = await findProductsByCatalogIds(trx, cart.store_id, [item.catalog_id]);
    if (!products[0]) throw EngineErrors.productUnavailable(item.catalog_id);
    checkSellable(products[0], line.quantity);
    const updated = await updateCartItemQuantity(trx, item.id, line.quantity, now);
    items[items.indexOf(item)] = updated;
  }
  const view = await cartResponse(trx, await saveTotals(trx, cart, items), items);
  emitMutation(sink, 'updated', lines.length, view, source);
  return view;
}

/** Removes lines (by itemId or catalogId), all or nothing. */
export async function removeCartItems(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  cartId: string,
  lines: LineRef[],
  source: WriteSource,
): Promise<CartView> {
  const cart = await lockCart(trx, principal, cartId, MUTABLE_CART_STATUSES, 'mutate');
  let items = await listCartItems(trx, cart.id);
  for (const line of lines) {
    const item = findLine(items, line);
    await deleteCartItem(trx, item.id);
    items = items.filter((i) => i.id !== item.id);
  }
  const view = await cartResponse(trx, await saveTotals(trx, cart, items), items);
  emitMutation(sink, 'removed', lines.length, view, source);
  return view;
}

/** Empties a cart that has no checkout id yet (409 otherwise); it becomes `cleared` and takes items again. */
export async function clearCart(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  cartId: string,
  source: WriteSource,
): Promise<CartView> {
  const cart = await lockCart(trx, principal, cartId, ['open', 'cleared', 'checkout_created'], 'mutate');
  if (cart.checkout_id !== null) throw EngineErrors.cartHasCheckout(cartId, 'cleared');
  await deleteCartItems(trx, cart.id);
  const view = await cartResponse(trx, await saveTotals(trx, cart, [], { status: 'cleared' }), []);
  emitCart(sink, 'cart.cleared', view, source);
  return view;
}

/** Closes an open cart without a checkout (`cart_close`): no more changes, kept for history. */
export async function closeCart(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  cartId: string,
  source: WriteSource,
): Promise<CartView> {
  const cart = await lockCart(trx, principal, cartId, ['open', 'cleared', 'checkout_created'], 'mutate');
  if (cart.checkout_id !== null) throw EngineErrors.cartHasCheckout(cartId, 'closed (cancel the checkout first)');
  const view = await cartResponse(
    trx,
    await saveTotals(trx, cart, await listCartItems(trx, cart.id), { status: 'closed' }),
  );
  emitCart(sink, 'cart.closed', view, source);
  return view;
}

/** Archives a cart, permanently; archiving an archived cart changes nothing. A prepared checkout is cancelled. */
export async function archiveCart(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  cartId: string,
  source: WriteSource,
): Promise<CartView> {
  const stores = storesInScope(principal, undefined);
  const existing = await findCart(trx, stores, cartId);
  if (!existing) throw EngineErrors.cartNotFound(cartId);
  if (existing.status === 'archived') return cartResponse(trx, existing);
  const cart = await lockCart(trx, principal, cartId, [existing.status], 'archive');
  const now = new Date().toISOString();
  if (cart.checkout_id) await cancelPreparedCheckout(trx, cart.checkout_id, now);
  const archived = await updateCart(trx, cart.id, { status: 'archived', updated_at: now });
  const view = await cartResponse(trx, archived);
  emitCart(sink, 'cart.archived', view, source);
  return view;
}

export async function getCart(ctx: EngineContext, principal: Principal, cartId: string): Promise<CartView> {
  const cart = await findCart(ctx.db, storesInScope(principal, undefined), cartId);
  if (!cart) throw EngineErrors.cartNotFound(cartId);
  return cartResponse(ctx.db, cart);
}

export async function listCarts(
  ctx: EngineContext,
  principal: Principal,
  query: {
    storeId?: string | undefined;
    status?: string | undefined;
    includeArchived?: boolean | undefined;
    limit: number;
    cursor?: string | undefined;
  },
): Promise<{ data: CartView[]; nextCursor: string | null }> {
  const stores = storesInScope(principal, query.storeId);
  const after = decodeCursor('cart', query.cursor, ['string', 'string'], invalidCursor);
  const rows = await listCartRows(ctx.db, {
    stores,
    status: query.status,
    includeArchived: query.includeArchived,
    after,
    limit: query.limit,
  });
  const page = keysetPage('cart', rows, query.limit, (last) => [toIsoString(last.created_at), last.id]);
  return { data: await Promise.all(page.rows.map((cart) => cartResponse(ctx.db, cart))), nextCursor: page.next };
}

export interface CheckoutView {
  id: string;
  cartId: string;
  status: string;
  scope: { merchantId: string; storeId: string };
  /** The authoritative summary: what an order from this checkout will contain and cost. */
  summary: { items: CartItemView[]; totalQuantity: number; totalAmount: string; currency: string };
  /** The reference a payment step continues with; carries no payment or personal data. */
  handoff: { type: 'payment'; status: string; reference: string };
  createdAt: string;
  updatedAt: string;
}

export function checkoutView(checkout: CheckoutRow, cart: CartView): CheckoutView {
  return {
    id: checkout.id,
    cartId: checkout.cart_id,
    status: checkout.status,
    scope: { merchantId: checkout.merchant_id, storeId: checkout.store_id },
    summary: {
      items: cart.items,
      totalQuantity: cart.totalQuantity,
      totalAmount: cart.totalAmount,
      currency: cart.currency,
    },
    handoff: {
      type: 'payment',
      status: checkout.status === 'prepared' ? 'awaiting_payment' : checkout.status,
      reference: checkout.handoff_reference,
    },
    createdAt: toIsoString(checkout.created_at),
    updatedAt: toIsoString(checkout.updated_at),
  };
}

/** Prepares the checkout of a cart (`checkout_prepare`); a cart with a prepared checkout returns that one. */
export async function prepareCheckout(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  cartId: string,
  source: WriteSource,
): Promise<CheckoutView> {
  const cart = await lockCart(trx, principal, cartId, MUTABLE_CART_STATUSES, 'mutate');
  const items = await listCartItems(trx, cart.id);
  if (cart.checkout_id) {
    const existing = (await findCheckoutById(trx, cart.checkout_id))!;
    return checkoutView(existing, toCartView(cart, items, existing));
  }
  if (items.length === 0) throw EngineErrors.cartEmpty(cartId);
  const now = new Date().toISOString();
  const checkout = await newCheckout(trx, cart, now);
  const saved = await saveTotals(trx, cart, items, { status: 'checkout_created', checkout_id: checkout.id });
  const cartView = toCartView(saved, items, checkout);
  const view = checkoutView(checkout, cartView);
  emitCart(sink, 'checkout.created', cartView, source, { checkout: view });
  return view;
}

export async function getCheckout(ctx: EngineContext, principal: Principal, checkoutId: string): Promise<CheckoutView> {
  const stores = storesInScope(principal, undefined);
  const checkout = await findCheckoutInStores(ctx.db, stores, checkoutId);
  if (!checkout) throw EngineErrors.checkoutNotFound(checkoutId);
  const cart = await getCartById(ctx.db, checkout.cart_id);
  return checkoutView(checkout, toCartView(cart, await listCartItems(ctx.db, cart.id), checkout));
}

/** Cancels a prepared checkout (`checkout_cancel`): the cart returns to `open` without a checkout id. */
export async function cancelCheckout(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  checkoutId: string,
  source: WriteSource,
): Promise<CheckoutView> {
  const stores = storesInScope(principal, undefined);
  const checkout = await findCheckoutInStores(trx, stores, checkoutId);
  if (!checkout) throw EngineErrors.checkoutNotFound(checkoutId);
  if (checkout.status === 'completed') throw EngineErrors.checkoutCompleted(checkoutId);
  if (checkout.status !== 'prepared') throw EngineErrors.checkoutNotPrepared(checkoutId, checkout.status);
  const now = new Date().toISOString();
  const cancelled = await cancelPreparedCheckout(trx, checkoutId, now);
  if (!cancelled) throw EngineErrors.checkoutNotPrepared(checkoutId, 'no longer prepared');
  const cart =
    (await reopenCartOfCheckout(trx, checkout.cart_id, checkoutId, now)) ?? (await getCartById(trx, checkout.cart_id));
  const cartView = toCartView(cart, await listCartItems(trx, cart.id));
  const view = checkoutView(cancelled, cartView);
  emitCart(sink, 'checkout.cancelled', cartView, source, { checkout: view });
  return view;
}
