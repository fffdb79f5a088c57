import { type Static, Type } from 'typebox';
import { JsonObject, Nullable, Timestamp, Uuid } from '../http/schemas.ts';

const Money = Type.Union([
  Type.Number({ minimum: 0, maximum: 1e15 }),
  Type.String({ pattern: '^\\d{1,16}(\\.\\d{1,20})?$', maxLength: 40 }),
]);
const Currency = Type.String({ pattern: '^[A-Za-z]{3}$' });

export const SupplierInputSchema = Type.Object({
  storeId: Uuid('Store the supplier serves'),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  externalId: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'storeId + externalId identifies the supplier (used by supplier.updated)',
      }),
    ),
  ),
  email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320 }))),
  phone: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('inactive')])),
  metadata: Type.Optional(JsonObject('Integration data')),
});
export type SupplierInput = Static<typeof SupplierInputSchema>;

export const InventoryItemInputSchema = Type.Object({
  storeId: Uuid('Store of the item'),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  sku: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 120,
        description: 'storeId + sku identifies the item (used by inventory.updated)',
      }),
    ),
  ),
  supplierId: Type.Optional(Nullable(Uuid())),
  quantity: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Absolute stock level; default 0' }),
  ),
  reorderLevel: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
  unitCost: Type.Optional(Nullable(Money)),
  currency: Type.Optional(Currency),
  metadata: Type.Optional(JsonObject('Integration data')),
});
export type InventoryItemInput = Static<typeof InventoryItemInputSchema>;

export const OrderLineSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  quantity: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
  sku: Type.Optional(Nullable(Type.String({ maxLength: 120 }))),
  inventoryItemId: Type.Optional(Nullable(Uuid())),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
});

export const ProcurementOrderInputSchema = Type.Object({
  storeId: Uuid(),
  supplierId: Type.Optional(Nullable(Uuid())),
  items: Type.Array(OrderLineSchema, { minItems: 1, maxItems: 100 }),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
});
export type ProcurementOrderInput = Static<typeof ProcurementOrderInputSchema>;

export const QuoteInputSchema = Type.Object({
  supplierId: Type.Optional(Nullable(Uuid())),
  items: Type.Array(
    Type.Object({
      name: Type.String({ minLength: 1, maxLength: 255 }),
      quantity: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
      unitPrice: Money,
    }),
    { minItems: 1, maxItems: 100 },
  ),
  currency: Type.Optional(Currency),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  validUntil: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
});
export type QuoteInput = Static<typeof QuoteInputSchema>;

const Obj = Nullable(Type.Object({}, { additionalProperties: true }));
export const SupplierSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  storeId: Type.String(),
  externalId: Nullable(Type.String()),
  name: Type.String(),
  email: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  status: Type.String(),
  metadata: Obj,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const InventoryItemSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  storeId: Type.String(),
  supplierId: Nullable(Type.String()),
  sku: Nullable(Type.String()),
  name: Type.String(),
  quantity: Type.Integer(),
  reorderLevel: Type.Integer(),
  unitCost: Nullable(Type.String()),
  currency: Type.String(),
  metadata: Obj,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const QuoteSchema = Type.Object({
  id: Type.String(),
  orderId: Type.String(),
  supplierId: Nullable(Type.String()),
  items: Type.Array(
    Type.Object({ name: Type.String(), quantity: Type.Integer(), unitPrice: Type.String(), totalPrice: Type.String() }),
  ),
  totalAmount: Type.String(),
  currency: Type.String(),
  notes: Nullable(Type.String()),
  validUntil: Nullable(Timestamp),
  createdAt: Timestamp,
});
export const ProcurementOrderSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  storeId: Type.String(),
  supplierId: Nullable(Type.String()),
  status: Type.String({ description: 'requested (quote request workflow started) or quote_received' }),
  items: Type.Array(Type.Object({}, { additionalProperties: true })),
  notes: Nullable(Type.String()),
  source: Type.String(),
  sentAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
