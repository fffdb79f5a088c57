import { type Static, Type } from 'typebox';
import { JsonObject, Nullable, Timestamp, Uuid } from '../http/schemas.ts';

export const CatalogId = Type.String({
  pattern: '^\\d{10}$',
  description: '10-digit catalog id (never the product UUID)',
});
export const Quantity = Type.Integer({ minimum: 1, maximum: 10_000, description: '1 to 10,000 units per line' });

export const AddLineSchema = Type.Object({
  catalogId: CatalogId,
  quantity: Quantity,
  metadata: Type.Optional(JsonObject('Line integration data')),
  otherDetails: Type.Optional(JsonObject('Line attributes')),
});
export const UpdateLineSchema = Type.Object({
  itemId: Type.Optional(Uuid('Cart item id')),
  catalogId: Type.Optional(CatalogId),
  quantity: Quantity,
});
export const RemoveLineSchema = Type.Object({
  itemId: Type.Optional(Uuid('Cart item id')),
  catalogId: Type.Optional(CatalogId),
});

export const CreateCartSchema = Type.Object({
  storeId: Uuid('Store of the cart; every item must be a product of this store'),
  items: Type.Array(AddLineSchema, { minItems: 1, maxItems: 50 }),
  metadata: Type.Optional(JsonObject('Cart integration data')),
  otherDetails: Type.Optional(JsonObject('Cart attributes')),
});

export const AddItemsSchema = Type.Object({
  cartId: Uuid(),
  items: Type.Array(AddLineSchema, { minItems: 1, maxItems: 50 }),
});
export const UpdateItemsSchema = Type.Object({
  cartId: Uuid(),
  items: Type.Array(UpdateLineSchema, { minItems: 1, maxItems: 50 }),
});
export const RemoveItemsSchema = Type.Object({
  cartId: Uuid(),
  items: Type.Array(RemoveLineSchema, { minItems: 1, maxItems: 50 }),
});

const Obj = Nullable(Type.Object({}, { additionalProperties: true }));

export const CartItemSchema = Type.Object({
  id: Type.String(),
  productId: Type.String(),
  catalogId: Type.String(),
  quantity: Type.Integer(),
  unitPrice: Type.String(),
  totalPrice: Type.String(),
  currency: Type.String(),
  productSnapshot: Type.Object({}, { additionalProperties: true }),
  metadata: Obj,
  otherDetails: Obj,
});

export const CartSchema = Type.Object({
  id: Type.String(),
  scope: Type.Object({ merchantId: Type.String(), storeId: Type.String() }),
  storeId: Type.String(),
  status: Type.String({ description: 'open, cleared, checkout_created, completed, closed or archived' }),
  checkoutId: Nullable(Type.String()),
  checkout: Type.Optional(Type.Object({ id: Type.String(), status: Type.String() })),
  items: Type.Array(CartItemSchema),
  totalQuantity: Type.Integer(),
  totalAmount: Type.String(),
  currency: Type.String(),
  metadata: Obj,
  otherDetails: Obj,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const AddressSchema = Type.Object({
  line1: Type.String({ minLength: 1, maxLength: 200 }),
  line2: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  city: Type.String({ minLength: 1, maxLength: 100 }),
  region: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  country: Type.String({ minLength: 2, maxLength: 100 }),
  postalCode: Type.String({ minLength: 1, maxLength: 20 }),
});
export const CustomerSchema = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
});
const PaymentStatus = Type.String({
  pattern: '^[a-z_]{1,40}$',
  description: 'e.g. pending, authorized, captured, failed, refunded',
});
export const PaymentSchema = Type.Object({
  id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 128, description: 'Kept when supplied; generated (pay_…) otherwise' }),
  ),
  status: Type.Optional(PaymentStatus),
  provider: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

export const CompleteOrderSchema = Type.Object({
  checkoutId: Type.String({ minLength: 1, maxLength: 64, description: 'Checkout id of the cart (chk_…)' }),
  customer: Type.Optional(Nullable(CustomerSchema)),
  shippingAddress: Type.Optional(Nullable(AddressSchema)),
  billingAddress: Type.Optional(Nullable(AddressSchema)),
  payment: Type.Optional(Nullable(PaymentSchema)),
  paymentDetails: Type.Optional(
    Nullable(
      Type.Object({
        provider: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        reference: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
      }),
    ),
  ),
  metadata: Type.Optional(JsonObject('Order integration data')),
  otherDetails: Type.Optional(JsonObject('Order attributes')),
});
export type CompleteOrderBody = Static<typeof CompleteOrderSchema>;

export const OrderPatchSchema = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal('completed'), Type.Literal('cancelled')])),
    customer: Type.Optional(Nullable(CustomerSchema)),
    shippingAddress: Type.Optional(Nullable(AddressSchema)),
    billingAddress: Type.Optional(Nullable(AddressSchema)),
    payment: Type.Optional(
      Type.Object({
        status: Type.Optional(PaymentStatus),
        provider: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      }),
    ),
    metadata: Type.Optional(JsonObject('Order integration data')),
    otherDetails: Type.Optional(JsonObject('Order attributes')),
  },
  { minProperties: 1 },
);

export const OrderSchema = Type.Object({
  id: Type.String(),
  orderId: Type.String({ description: 'Public order identifier (ord_…)' }),
  scope: Type.Object({ merchantId: Type.String(), storeId: Type.String() }),
  storeId: Type.String(),
  cart: Type.Object({ id: Type.String() }),
  checkout: Type.Object({ id: Type.String() }),
  payment: Type.Object({
    id: Type.String(),
    status: Type.String(),
    provider: Nullable(Type.String()),
    reference: Type.Optional(Nullable(Type.String())),
  }),
  customer: Obj,
  shippingAddress: Obj,
  billingAddress: Obj,
  status: Type.String({ description: 'completed or cancelled' }),
  items: Type.Array(CartItemSchema),
  totalQuantity: Type.Integer(),
  totalAmount: Type.String(),
  currency: Type.String(),
  metadata: Obj,
  otherDetails: Obj,
  source: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  completedAt: Nullable(Timestamp),
  cancelledAt: Nullable(Timestamp),
});

export const CheckoutSchema = Type.Object({
  id: Type.String(),
  cartId: Type.String(),
  status: Type.String({ description: 'prepared, cancelled or completed' }),
  scope: Type.Object({ merchantId: Type.String(), storeId: Type.String() }),
  summary: Type.Object({
    items: Type.Array(CartItemSchema),
    totalQuantity: Type.Integer(),
    totalAmount: Type.String(),
    currency: Type.String(),
  }),
  handoff: Type.Object({ type: Type.String(), status: Type.String(), reference: Type.String() }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
