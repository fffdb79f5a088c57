import type { App, Executor } from '@keel/core';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AddLineSchema, CompleteOrderSchema, RemoveLineSchema, UpdateLineSchema } from '../catalog/cart-schemas.ts';
import { addCartItems, archiveCart, createCart, removeCartItems, updateCartItems } from '../catalog/cart-service.ts';
import { completeOrder } from '../catalog/order-service.ts';
import { ProductInputSchema, ProductPatchSchema } from '../catalog/product-schemas.ts';
import { patchProduct, removeProductByIdentity, upsertProduct } from '../catalog/product-service.ts';
import { findProductByExternalId, findProductBySku } from '../catalog/product-store.ts';
import type { EngineContext } from '../context.ts';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors } from '../errors.ts';
import { principalOf } from '../http/merchant-auth.ts';
import { commonErrors, ErrorSchema, JsonObject, merchantKeySecurity, Uuid } from '../http/schemas.ts';
import { validatePart } from '../http/validate.ts';
import { isUuid } from '../ids.ts';
import { type Principal, requireStoreAccess } from '../merchants/principal.ts';
import { InventoryItemInputSchema, SupplierInputSchema } from '../procurement/procurement-schemas.ts';
import { upsertInventoryItem, upsertSupplier } from '../procurement/procurement-service.ts';
import { inTransaction } from '../write.ts';
import type { EventSink } from './events.ts';

type Mode = 'created' | 'updated' | 'deleted' | 'ignored';
interface Result {
  success: boolean;
  mode: Mode;
  data: { id: string | null };
}
export interface IngressResponse {
  success: boolean;
  mode: Mode | 'batch';
  count: number;
  data: { id: string | null };
  results: Result[];
  duplicate?: boolean;
  eventId: string;
}

export const CATALOG_EVENTS = [
  'product.created',
  'product.updated',
  'product.upserted',
  'product.deleted',
  'product.inventory.updated',
  'product.price.updated',
  'catalog.batch.upserted',
  'catalog.batch.deleted',
  'cart.created',
  'cart.item.added',
  'cart.bundle.added',
  'cart.item.updated',
  'cart.bundle.updated',
  'cart.item.removed',
  'cart.bundle.removed',
  'cart.archived',
  'order.completed',
] as const;
export const PROCUREMENT_EVENTS = ['supplier.updated', 'inventory.updated'] as const;

const Identity = Type.Object({
  storeId: Uuid(),
  sku: Type.Optional(Type.Union([Type.String({ maxLength: 120 }), Type.Null()])),
  externalId: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
});
const InventorySnapshot = Type.Intersect([
  ProductPatchSchema,
  Type.Object({ storeId: Uuid(), inventoryQuantity: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }) }),
]);
const PriceSnapshot = Type.Intersect([
  ProductPatchSchema,
  Type.Object({ storeId: Uuid(), price: Type.Union([Type.Number({ minimum: 0 }), Type.String({ maxLength: 40 })]) }),
]);
const CartCreate = Type.Object({
  storeId: Uuid(),
  items: Type.Optional(Type.Array(AddLineSchema, { maxItems: 50 })),
  metadata: Type.Optional(JsonObject('Cart integration data')),
  otherDetails: Type.Optional(JsonObject('Cart attributes')),
});
const CartRef = Type.Object({ cartId: Uuid('Required for every cart mutation event') });
const cartLines = <T extends import('typebox').TSchema>(line: T) =>
  Type.Object({
    cartId: Uuid(),
    items: Type.Optional(Type.Array(line, { minItems: 1, maxItems: 50 })),
    item: Type.Optional(line),
  });

const EnvelopeSchema = Type.Object({
  event: Type.String({ minLength: 1, maxLength: 64, description: 'The inbound event name' }),
  direction: Type.Optional(
    Type.Union([Type.Literal('inbound'), Type.Literal('outbound')], { description: 'Default inbound' }),
  ),
  source: Type.Optional(Type.String({ maxLength: 120, description: 'Sending system name' })),
  version: Type.Optional(Type.String({ maxLength: 64 })),
  timestamp: Type.Optional(Type.String({ maxLength: 64 })),
  product: Type.Optional(Type.Object({}, { additionalProperties: true })),
  products: Type.Optional(
    Type.Array(Type.Object({}, { additionalProperties: true }), {
      maxItems: 250,
      description: 'Batch events: at most 250',
    }),
  ),
  cart: Type.Optional(Type.Object({}, { additionalProperties: true })),
  order: Type.Optional(Type.Object({}, { additionalProperties: true })),
  supplier: Type.Optional(Type.Object({}, { additionalProperties: true })),
  inventoryItem: Type.Optional(Type.Object({}, { additionalProperties: true })),
});
type Envelope = import('typebox').Static<typeof EnvelopeSchema>;

const ResponseSchema = Type.Object({
  success: Type.Boolean(),
  mode: Type.String({ description: 'created, updated, deleted, ignored, or batch' }),
  count: Type.Integer(),
  data: Type.Object({ id: Type.Union([Type.String(), Type.Null()]) }),
  results: Type.Array(
    Type.Object({
      success: Type.Boolean(),
      mode: Type.String(),
      data: Type.Object({ id: Type.Union([Type.String(), Type.Null()]) }),
    }),
  ),
  duplicate: Type.Optional(
    Type.Boolean({
      description: 'true when this event id was already processed for this key (the first response is returned)',
    }),
  ),
  eventId: Type.String(),
});

const one = (mode: Mode, id: string | null): Result => ({ success: true, mode, data: { id } });

/** Applies an absolute snapshot (inventory or price) to the identified product; creates it when name and price are there, else `ignored`. */
async function applySnapshot(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  input: Record<string, unknown> & { storeId: string },
  inventory: boolean,
): Promise<Result> {
  const storeId = input.storeId.toLowerCase();
  requireStoreAccess(principal, storeId);
  const sku = input.sku as string | undefined;
  const externalId = input.externalId as string | undefined;
  if (!sku && !externalId) throw EngineErrors.invalidField('product needs sku or externalId to be identified');
  const patch = { ...input };
  if (inventory && patch.inStock === undefined) patch.inStock = (input.inventoryQuantity as number) > 0;
  const bySku = sku ? await findProductBySku(trx, storeId, sku) : undefined;
  const byExternal = externalId ? await findProductByExternalId(trx, storeId, externalId) : undefined;
  if (bySku && byExternal && bySku.id !== byExternal.id) throw EngineErrors.identityConflict(storeId);
  const existing = bySku ?? byExternal;
  if (existing) {
    const { storeId: _store, ...fields } = patch;
    const view = await patchProduct(trx, sink, principal, existing.id, fields as never, 'webhook');
    return one('updated', view.id);
  }
  if (typeof patch.name === 'string' && patch.price !== undefined) {
    const outcome = await upsertProduct(
      trx,
      sink,
      principal,
      validatePart(ProductInputSchema, patch, 'product'),
      'webhook',
    );
    return one(outcome.mode, outcome.product.id);
  }
  return one('ignored', null);
}

function lines(cart: Record<string, unknown>): unknown[] {
  if (Array.isArray(cart.items)) return cart.items;
  if (cart.item !== undefined) return [cart.item];
  throw EngineErrors.invalidField('cart.items (or cart.item) is required for this event');
}

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

async function handle(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  envelope: Envelope,
  kind: 'catalog' | 'procurement',
): Promise<{ mode: Mode | 'batch'; id: string | null; results: Result[] }> {
  if (envelope.product !== undefined && envelope.products !== undefined)
    throw EngineErrors.invalidField('send either product or products, not both');
  requireEventScope(principal, envelope);
  const single = (result: Result) => ({ mode: result.mode, id: result.data.id, results: [result] });
  const need = <T>(value: T | undefined, field: string): T => {
    if (value === undefined) throw EngineErrors.invalidField(`${field} is required for ${envelope.event}`);
    return value;
  };
  if (kind === 'procurement') {
    switch (envelope.event) {
      case 'supplier.updated': {
        const { supplier, mode } = await upsertSupplier(
          trx,
          principal,
          validatePart(SupplierInputSchema, need(envelope.supplier, 'supplier'), 'supplier'),
        );
        return single(one(mode, supplier.id));
      }
      case 'inventory.updated': {
        const { item, mode } = await upsertInventoryItem(
          trx,
          principal,
          validatePart(InventoryItemInputSchema, need(envelope.inventoryItem, 'inventoryItem'), 'inventoryItem'),
        );
        return single(one(mode, item.id));
      }
      default:
        throw EngineErrors.unknownEvent(
          `${JSON.stringify(envelope.event.slice(0, 64))} (procurement events: ${PROCUREMENT_EVENTS.join(', ')})`,
        );
    }
  }
  switch (envelope.event) {
    case 'product.created':
    case 'product.updated':
    case 'product.upserted': {
      const input = validatePart(ProductInputSchema, need(envelope.product, 'product'), 'product');
      const outcome = await upsertProduct(trx, sink, principal, input, 'webhook', {
        upsertEvent: envelope.event === 'product.upserted',
      });
      return single(one(outcome.mode, outcome.product.id));
    }
    case 'product.deleted': {
      const identity = validatePart(Identity, need(envelope.product, 'product'), 'product');
      const outcome = await removeProductByIdentity(trx, sink, principal, identity, 'webhook');
      return single(one(outcome.mode, outcome.product?.id ?? null));
    }
    case 'product.inventory.updated':
      return single(
        await applySnapshot(
          trx,
          sink,
          principal,
          validatePart(InventorySnapshot, need(envelope.product, 'product'), 'product') as never,
          true,
        ),
      );
    case 'product.price.updated':
      return single(
        await applySnapshot(
          trx,
          sink,
          principal,
          validatePart(PriceSnapshot, need(envelope.product, 'product'), 'product') as never,
          false,
        ),
      );
    case 'catalog.batch.upserted':
    case 'catalog.batch.deleted': {
      const products = need(envelope.products, 'products');
      const upsert = envelope.event === 'catalog.batch.upserted';
      // Validate everything first: a batch is applied whole or not at all.
      const inputs = products.map((p, i) =>
        upsert ? validatePart(ProductInputSchema, p, `products/${i}`) : validatePart(Identity, p, `products/${i}`),
      );
      const results: Result[] = [];
      const views: unknown[] = [];
      for (const input of inputs) {
        if (upsert) {
          const outcome = await upsertProduct(trx, sink, principal, input as never, 'webhook');
          results.push(one(outcome.mode, outcome.product.id));
          views.push(outcome.product);
        } else {
          const outcome = await removeProductByIdentity(trx, sink, principal, input, 'webhook');
          results.push(one(outcome.mode, outcome.product?.id ?? null));
          if (outcome.product) views.push(outcome.product);
        }
      }
      const byMerchantStore = new Map<string, unknown[]>();
      for (const view of views as { merchantId: string; storeId: string }[]) {
        const key = `${view.merchantId}|${view.storeId}`;
        byMerchantStore.set(key, [...(byMerchantStore.get(key) ?? []), view]);
      }
      for (const [key, group] of byMerchantStore) {
        const [merchantId, storeId] = key.split('|') as [string, string];
        sink.emit({ event: envelope.event, merchantId, storeId, source: 'webhook', body: { products: group } });
      }
      return { mode: 'batch', id: null, results };
    }
    case 'cart.created': {
      const input = validatePart(CartCreate, need(envelope.cart, 'cart'), 'cart');
      const cart = await createCart(trx, sink, principal, input, 'webhook', { withCheckout: true });
      return single(one('created', cart.id));
    }
    case 'cart.item.added':
    case 'cart.bundle.added': {
      const cart = validatePart(cartLines(AddLineSchema), need(envelope.cart, 'cart'), 'cart');
      const view = await addCartItems(trx, sink, principal, cart.cartId, lines(cart) as never, 'webhook');
      return single(one('updated', view.id));
    }
    case 'cart.item.updated':
    case 'cart.bundle.updated': {
      const cart = validatePart(cartLines(UpdateLineSchema), need(envelope.cart, 'cart'), 'cart');
      const view = await updateCartItems(trx, sink, principal, cart.cartId, lines(cart) as never, 'webhook');
      return single(one('updated', view.id));
    }
    case 'cart.item.removed':
    case 'cart.bundle.removed': {
      const cart = validatePart(cartLines(RemoveLineSchema), need(envelope.cart, 'cart'), 'cart');
      const view = await removeCartItems(trx, sink, principal, cart.cartId, lines(cart) as never, 'webhook');
      return single(one('updated', view.id));
    }
    case 'cart.archived': {
      const cart = validatePart(CartRef, need(envelope.cart, 'cart'), 'cart');
      const view = await archiveCart(trx, sink, principal, cart.cartId, 'webhook');
      return single(one('updated', view.id));
    }
    case 'order.completed': {
      const order = validatePart(CompleteOrderSchema, need(envelope.order, 'order'), 'order');
      const view = await completeOrder(trx, sink, principal, order, 'webhook');
      return single(one('created', view.id));
    }
    default:
      throw EngineErrors.unknownEvent(
        `${JSON.stringify(envelope.event.slice(0, 64))} (catalog events: ${CATALOG_EVENTS.join(', ')})`,
      );
  }
}

/**
 * Processes one inbound event exactly once per (key, X-Webhook-Event-ID): the receipt is written in the same
 * transaction as the change, so a replay (even a concurrent one) gets the first response with `duplicate: true`.
 */
export async function receiveEvent(
  ctx: EngineContext,
  principal: Principal,
  eventId: string,
  envelope: Envelope,
  kind: 'catalog' | 'procurement',
): Promise<IngressResponse> {
  return inTransaction(ctx, async (trx, sink) => {
    const receipt = await trx
      .selectFrom('webhook_receipt')
      .select('response')
      .where('key_id', '=', principal.keyId)
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    if (receipt) return { ...(JSON.parse(receipt.response) as IngressResponse), duplicate: true };
    const outcome = await handle(trx, sink, principal, envelope, kind);
    const response: IngressResponse = {
      success: outcome.results.every((r) => r.success),
      mode: outcome.mode,
      count: outcome.results.length,
      data: { id: outcome.id ?? eventId },
      results: outcome.results,
      eventId,
    };
    await trx
      .insertInto('webhook_receipt')
      .values({
        key_id: principal.keyId,
        event_id: eventId,
        response: JSON.stringify(response),
        created_at: new Date().toISOString(),
      })
      .execute();
    return response;
  });
}

const INGRESS_DESCRIPTION = `Inbound webhook. Authenticate with the merchant key (Authorization: Bearer, X-API-Key or X-Catalog-API-Key); the key's
scope applies to every object. \`X-Webhook-Event-ID\` (1–255 characters) is required (400 without it); a replay of the same id for the same
key answers 200 with the first response and \`duplicate: true\`. Batches (\`products\`, at most 250) are validated whole first and applied in one
transaction: all or nothing. Inventory events are absolute snapshots; deleting an unknown product answers mode \`ignored\`.
Every store an event names is checked against the key's scope before anything is looked up (403, as for an unknown store).
Responses: 200 \`{success, mode, count, data: {id}, results: [{success, mode, data: {id}}]}\`; 400 schema errors (do not retry unchanged),
401/403 credential or scope (do not retry), 409 conflicts (retry when expected to clear), 429/5xx (retry with backoff).`;

export function registerIngressRoute(app: App, ctx: EngineContext, url: string, kind: 'catalog' | 'procurement'): void {
  const events = kind === 'catalog' ? CATALOG_EVENTS : PROCUREMENT_EVENTS;
  app.post(
    url,
    {
      schema: {
        tags: ['webhooks-inbound'],
        security: merchantKeySecurity,
        summary: `Receive a ${kind} event`,
        description: `${INGRESS_DESCRIPTION}\n\nEvents: ${events.join(', ')}.`,
        headers: Type.Object({
          'x-webhook-event-id': Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 255,
              description: "Required: the sender's event id, the replay key",
            }),
          ),
        }),
        body: EnvelopeSchema,
        response: { 200: ResponseSchema, 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
      },
      config: { merchantKey: true },
    },
    async (request: FastifyRequest) => {
      const principal = principalOf(request);
      const eventId = request.headers['x-webhook-event-id'];
      if (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > 255)
        throw EngineErrors.eventIdRequired();
      return receiveEvent(ctx, principal, eventId, request.body as Envelope, kind);
    },
  );
}
