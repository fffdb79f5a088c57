import { type Static, type TSchema, Type } from 'typebox';
import { AddLineSchema } from '../catalog/cart-schemas.ts';
import { ProductPatchSchema } from '../catalog/product-schemas.ts';
import { JsonObject, Uuid } from '../http/schemas.ts';

export type IngressMode = 'created' | 'updated' | 'deleted' | 'ignored';

/** One object's outcome in an inbound event. */
export interface IngressResult {
  success: boolean;
  mode: IngressMode;
  data: { id: string | null };
}

/** The answer to an inbound event (and, stored as its receipt, to every replay of it). */
export interface IngressResponse {
  success: boolean;
  mode: IngressMode | 'batch';
  count: number;
  data: { id: string | null };
  results: IngressResult[];
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

export const Identity = Type.Object({
  storeId: Uuid(),
  sku: Type.Optional(Type.Union([Type.String({ maxLength: 120 }), Type.Null()])),
  externalId: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
});
export const InventorySnapshot = Type.Intersect([
  ProductPatchSchema,
  Type.Object({ storeId: Uuid(), inventoryQuantity: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }) }),
]);
export const PriceSnapshot = Type.Intersect([
  ProductPatchSchema,
  Type.Object({ storeId: Uuid(), price: Type.Union([Type.Number({ minimum: 0 }), Type.String({ maxLength: 40 })]) }),
]);
export const CartCreate = Type.Object({
  storeId: Uuid(),
  items: Type.Optional(Type.Array(AddLineSchema, { maxItems: 50 })),
  metadata: Type.Optional(JsonObject('Cart integration data')),
  otherDetails: Type.Optional(JsonObject('Cart attributes')),
});
export const CartRef = Type.Object({ cartId: Uuid('Required for every cart mutation event') });
/** A cart mutation event's body: the cart and one line (`item`) or several (`items`). */
export const cartLines = <T extends TSchema>(line: T) =>
  Type.Object({
    cartId: Uuid(),
    items: Type.Optional(Type.Array(line, { minItems: 1, maxItems: 50 })),
    item: Type.Optional(line),
  });

export const EnvelopeSchema = Type.Object({
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
export type Envelope = Static<typeof EnvelopeSchema>;

export const IngressResponseSchema = Type.Object({
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
