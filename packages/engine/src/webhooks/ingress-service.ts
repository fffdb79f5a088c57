import type { Executor } from '@keel/core';
import type { Static } from 'typebox';
import { AddLineSchema, CompleteOrderSchema, RemoveLineSchema, UpdateLineSchema } from '../catalog/cart-schemas.ts';
import { addCartItems, archiveCart, createCart, removeCartItems, updateCartItems } from '../catalog/cart-service.ts';
import { completeOrder } from '../catalog/order-service.ts';
import { ProductInputSchema } from '../catalog/product-schemas.ts';
import {
  findProductByIdentity,
  patchProduct,
  removeProductByIdentity,
  upsertProduct,
} from '../catalog/product-service.ts';
import type { EngineContext } from '../context.ts';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors } from '../errors.ts';
import { validatePart } from '../http/validate.ts';
import { isUuid } from '../ids.ts';
import { type Principal, requireStoreAccess } from '../merchants/principal.ts';
import { InventoryItemInputSchema, SupplierInputSchema } from '../procurement/procurement-schemas.ts';
import { upsertInventoryItem, upsertSupplier } from '../procurement/procurement-service.ts';
import { inTransaction } from '../write.ts';
import type { EventSink } from './events.ts';
import {
  CATALOG_EVENTS,
  CartCreate,
  CartRef,
  cartLines,
  type Envelope,
  Identity,
  type IngressMode,
  type IngressResponse,
  type IngressResult,
  InventorySnapshot,
  PROCUREMENT_EVENTS,
  PriceSnapshot,
} from './ingress-schemas.ts';
import { findReceipt, insertReceipt } from './ingress-store.ts';

export type IngressKind = 'catalog' | 'procurement';

interface Outcome {
  mode: IngressMode | 'batch';
  id: string | null;
  results: IngressResult[];
}

/** What an event's handler gets: the transaction, the event sink, the caller and the envelope. */
interface Delivery {
  trx: Executor<EngineDb>;
  sink: EventSink;
  principal: Principal;
  envelope: Envelope;
}

type Handler = (delivery: Delivery) => Promise<Outcome>;

const one = (mode: IngressMode, id: string | null): IngressResult => ({ success: true, mode, data: { id } });
const single = (result: IngressResult): Outcome => ({ mode: result.mode, id: result.data.id, results: [result] });

/** The envelope field an event needs; 400 naming it when absent. */
function need<T>(envelope: Envelope, value: T | undefined, field: string): T {
  if (value === undefined) throw EngineErrors.invalidField(`${field} is required for ${envelope.event}`);
  return value;
}

function lines<T>(cart: { items?: T[] | undefined; item?: T | undefined }): T[] {
  if (Array.isArray(cart.items)) return cart.items;
  if (cart.item !== undefined) return [cart.item];
  throw EngineErrors.invalidField('cart.items (or cart.item) is required for this event');
}

type Snapshot = Static<typeof InventorySnapshot> | Static<typeof PriceSnapshot>;

/** Applies an absolute snapshot (inventory or price) to the identified product; creates it when name and price are there, else `ignored`. */
async function applySnapshot(
  { trx, sink, principal }: Delivery,
  input: Snapshot,
  inventory: boolean,
): Promise<IngressResult> {
  const storeId = input.storeId.toLowerCase();
  requireStoreAccess(principal, storeId);
  if (!input.sku && !input.externalId)
    throw EngineErrors.invalidField('product needs sku or externalId to be identified');
  const { storeId: _store, ...fields } = input;
  if (inventory && fields.inStock === undefined && 'inventoryQuantity' in fields)
    fields.inStock = (fields.inventoryQuantity ?? 0) > 0;
  const existing = await findProductByIdentity(trx, storeId, input.sku ?? null, input.externalId ?? null);
  if (existing) {
    const view = await patchProduct(trx, sink, principal, existing.id, fields, 'webhook');
    return one('updated', view.id);
  }
  const candidate = { ...input, ...fields };
  if (typeof candidate.name === 'string' && candidate.price !== undefined) {
    const outcome = await upsertProduct(
      trx,
      sink,
      principal,
      validatePart(ProductInputSchema, candidate, 'product'),
      'webhook',
    );
    return one(outcome.mode, outcome.product.id);
  }
  return one('ignored', null);
}

/** Upserts or deletes every product of a batch, validated whole first (all or nothing); one event per store. */
async function applyBatch(delivery: Delivery, upsert: boolean): Promise<Outcome> {
  const { trx, sink, principal, envelope } = delivery;
  const products = need(envelope, envelope.products, 'products');
  const results: IngressResult[] = [];
  const views: { merchantId: string; storeId: string }[] = [];
  if (upsert) {
    const inputs = products.map((p, i) => validatePart(ProductInputSchema, p, `products/${i}`));
    for (const input of inputs) {
      const outcome = await upsertProduct(trx, sink, principal, input, 'webhook');
      results.push(one(outcome.mode, outcome.product.id));
      views.push(outcome.product);
    }
  } else {
    const inputs = products.map((p, i) => validatePart(Identity, p, `products/${i}`));
    for (const input of inputs) {
      const outcome = await removeProductByIdentity(trx, sink, principal, input, 'webhook');
      results.push(one(outcome.mode, outcome.product?.id ?? null));
      if (outcome.product) views.push(outcome.product);
    }
  }
  const byMerchantStore = new Map<string, unknown[]>();
  for (const view of views) {
    const key = `${view.merchantId}|${view.storeId}`;
    byMerchantStore.set(key, [...(byMerchantStore.get(key) ?? []), view]);
  }
  for (const [key, group] of byMerchantStore) {
    const [merchantId, storeId] = key.split('|') as [string, string];
    const event = upsert ? 'catalog.batch.upserted' : 'catalog.batch.deleted';
    sink.emit({ event, merchantId, storeId, source: 'webhook', body: { products: group } });
  }
  return { mode: 'batch', id: null, results };
}

const productUpsert: Handler = async ({ trx, sink, principal, envelope }) => {
  const input = validatePart(ProductInputSchema, need(envelope, envelope.product, 'product'), 'product');
  const outcome = await upsertProduct(trx, sink, principal, input, 'webhook', {
    upsertEvent: envelope.event === 'product.upserted',
  });
  return single(one(outcome.mode, outcome.product.id));
};

const addLines: Handler = async ({ trx, sink, principal, envelope }) => {
  const cart = validatePart(cartLines(AddLineSchema), need(envelope, envelope.cart, 'cart'), 'cart');
  const view = await addCartItems(trx, sink, principal, cart.cartId, lines(cart), 'webhook');
  return single(one('updated', view.id));
};

const updateLines: Handler = async ({ trx, sink, principal, envelope }) => {
  const cart = validatePart(cartLines(UpdateLineSchema), need(envelope, envelope.cart, 'cart'), 'cart');
  const view = await updateCartItems(trx, sink, principal, cart.cartId, lines(cart), 'webhook');
  return single(one('updated', view.id));
};

const removeLines: Handler = async ({ trx, sink, principal, envelope }) => {
  const cart = validatePart(cartLines(RemoveLineSchema), need(envelope, envelope.cart, 'cart'), 'cart');
  const view = await removeCartItems(trx, sink, principal, cart.cartId, lines(cart), 'webhook');
  return single(one('updated', view.id));
};

/** The catalog events and how each is applied. */
const CATALOG_HANDLERS: Record<(typeof CATALOG_EVENTS)[number], Handler> = {
  'product.created': productUpsert,
  'product.updated': productUpsert,
  'product.upserted': productUpsert,
  'product.deleted': async ({ trx, sink, principal, envelope }) => {
    const identity = validatePart(Identity, need(envelope, envelope.product, 'product'), 'product');
    const outcome = await removeProductByIdentity(trx, sink, principal, identity, 'webhook');
    return single(one(outcome.mode, outcome.product?.id ?? null));
  },
  'product.inventory.updated': async (delivery) =>
    single(
      await applySnapshot(
        delivery,
        validatePart(InventorySnapshot, need(delivery.envelope, delivery.envelope.product, 'product'), 'product'),
        true,
      ),
    ),
  'product.price.updated': async (delivery) =>
    single(
      await applySnapshot(
        delivery,
        validatePart(PriceSnapshot, need(delivery.envelope, delivery.envelope.product, 'product'), 'product'),
        false,
      ),
    ),
  'catalog.batch.upserted': (delivery) => applyBatch(delivery, true),
  'catalog.batch.deleted': (delivery) => applyBatch(delivery, false),
  'cart.created': async ({ trx, sink, principal, envelope }) => {
    const input = validatePart(CartCreate, need(envelope, envelope.cart, 'cart'), 'cart');
    const cart = await createCart(trx, sink, principal, input, 'webhook', { withCheckout: true });
    return single(one('created', cart.id));
  },
  'cart.item.added': addLines,
  'cart.bundle.added': addLines,
  'cart.item.updated': updateLines,
  'cart.bundle.updated': updateLines,
  'cart.item.removed': removeLines,
  'cart.bundle.removed': removeLines,
  'cart.archived': async ({ trx, sink, principal, envelope }) => {
    const cart = validatePart(CartRef, need(envelope, envelope.cart, 'cart'), 'cart');
    const view = await archiveCart(trx, sink, principal, cart.cartId, 'webhook');
    return single(one('updated', view.id));
  },
  'order.completed': async ({ trx, sink, principal, envelope }) => {
    const order = validatePart(CompleteOrderSchema, need(envelope, envelope.order, 'order'), 'order');
    const view = await completeOrder(trx, sink, principal, order, 'webhook');
    return single(one('created', view.id));
  },
};

/** The procurement events and how each is applied. */
const PROCUREMENT_HANDLERS: Record<(typeof PROCUREMENT_EVENTS)[number], Handler> = {
  'supplier.updated': async ({ trx, principal, envelope }) => {
    const input = validatePart(SupplierInputSchema, need(envelope, envelope.supplier, 'supplier'), 'supplier');
    const { supplier, mode } = await upsertSupplier(trx, principal, input);
    return single(one(mode, supplier.id));
  },
  'inventory.updated': async ({ trx, principal, envelope }) => {
    const input = validatePart(
      InventoryItemInputSchema,
      need(envelope, envelope.inventoryItem, 'inventoryItem'),
      'inventoryItem',
    );
    const { item, mode } = await upsertInventoryItem(trx, principal, input);
    return single(one(mode, item.id));
  },
};

const HANDLERS: Record<IngressKind, Record<string, Handler>> = {
  catalog: CATALOG_HANDLERS,
  procurement: PROCUREMENT_HANDLERS,
};

/** The payload field of an envelope that holds each event's objects. */
function objectsOf(envelope: Envelope): unknown[] {
  const [area] = envelope.event.split('.');
  if (envelope.event.startsWith('catalog.batch.')) return envelope.products ?? [];
  if (area === 'product') return [envelope.product];
  if (area === 'cart') return [envelope.cart];
  if (area === 'supplier') return [envelope.supplier];
  if (area === 'inventory') return [envelope.inventoryItem];
  return [];
}

/**
 * Checks every store an event names against the key's scope before anything is looked up: a store outside the scope is
 * answered exactly as an unknown store (403), so an event never reveals whether another merchant's product exists.
 */
function requireEventScope(principal: Principal, envelope: Envelope): void {
  for (const object of objectsOf(envelope)) {
    const storeId = (object as { storeId?: unknown } | undefined)?.storeId;
    // A malformed id is left to the event's schema (400).
    if (typeof storeId === 'string' && isUuid(storeId)) requireStoreAccess(principal, storeId);
  }
}

function handlerFor(kind: IngressKind, envelope: Envelope): Handler {
  const handler = Object.hasOwn(HANDLERS[kind], envelope.event) ? HANDLERS[kind][envelope.event] : undefined;
  if (handler) return handler;
  const known = kind === 'catalog' ? CATALOG_EVENTS : PROCUREMENT_EVENTS;
  throw EngineErrors.unknownEvent(
    `${JSON.stringify(envelope.event.slice(0, 64))} (${kind} events: ${known.join(', ')})`,
  );
}

/**
 * Processes one inbound event exactly once per (key, X-Webhook-Event-ID), on the write path: the receipt is written
 * in the same transaction as the change, so a replay (even a concurrent one) gets the first response with
 * `duplicate: true`.
 */
export async function receiveEvent(
  ctx: EngineContext,
  principal: Principal,
  eventId: string,
  envelope: Envelope,
  kind: IngressKind,
): Promise<IngressResponse> {
  return inTransaction(ctx, async (trx, sink) => {
    const receipt = await findReceipt(trx, principal.keyId, eventId);
    if (receipt !== undefined) return { ...(JSON.parse(receipt) as IngressResponse), duplicate: true };
    if (envelope.product !== undefined && envelope.products !== undefined)
      throw EngineErrors.invalidField('send either product or products, not both');
    requireEventScope(principal, envelope);
    const outcome = await handlerFor(kind, envelope)({ trx, sink, principal, envelope });
    const response: IngressResponse = {
      success: outcome.results.every((r) => r.success),
      mode: outcome.mode,
      count: outcome.results.length,
      data: { id: outcome.id ?? eventId },
      results: outcome.results,
      eventId,
    };
    await insertReceipt(trx, {
      keyId: principal.keyId,
      eventId,
      response: JSON.stringify(response),
      createdAt: new Date().toISOString(),
    });
    return response;
  });
}
