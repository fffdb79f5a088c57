import { type Static, Type } from 'typebox';
import { JsonObject, Nullable, Timestamp, Uuid } from '../http/schemas.ts';

const Price = Type.Union(
  [
    Type.Number({ minimum: 0, maximum: 1e15 }),
    Type.String({
      pattern: '^\\d{1,16}(\\.\\d{1,20})?$',
      maxLength: 40,
      description: 'Exact decimal text, e.g. "19.99"',
    }),
  ],
  {
    description:
      'Amount >= 0 as a JSON number or an exact decimal string; no more decimals than the currency has (USD 2, JPY 0)',
  },
);
const Currency = Type.String({ pattern: '^[A-Za-z]{3}$', description: 'Exactly 3 letters (ISO 4217); default USD' });
const Status = Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('archived')], {
  description:
    'draft: not generally available; active: sells; archived: hidden from selling, keeps history. Default active',
});
const UrlField = (description: string) =>
  Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], {
    description: `${description}: a public https:// URL, "" or null (both clear it)`,
  });

export const VariantSchema = Type.Object({
  sku: Type.Optional(Nullable(Type.String({ maxLength: 120 }))),
  externalId: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 20_000 }))),
  price: Price,
  currency: Type.Optional(Currency),
  status: Type.Optional(Status),
  inStock: Type.Optional(Type.Boolean()),
  inventoryQuantity: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
  imageUrl: Type.Optional(UrlField('Variant image')),
  productUrl: Type.Optional(UrlField('Variant page')),
  otherDetails: Type.Optional(JsonObject('Searchable variant attributes')),
});

const productFields = {
  storeId: Uuid('Store the product belongs to; must be reachable by the key'),
  sku: Type.Optional(Nullable(Type.String({ maxLength: 120, description: 'storeId + sku identifies one product' }))),
  externalId: Type.Optional(
    Nullable(Type.String({ maxLength: 255, description: 'storeId + externalId identifies one product' })),
  ),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 20_000 }))),
  price: Price,
  currency: Type.Optional(Currency),
  status: Type.Optional(Status),
  inStock: Type.Optional(Type.Boolean({ description: 'Default true' })),
  inventoryQuantity: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Absolute stock level; default 0' }),
  ),
  imageUrl: Type.Optional(UrlField('Primary image; kept equal to imageUrls[0]')),
  imageUrls: Type.Optional(
    Nullable(
      Type.Array(Type.String({ maxLength: 2048 }), {
        maxItems: 20,
        description: 'Ordered gallery, at most 20 public https:// URLs; the first is the primary image',
      }),
    ),
  ),
  productUrl: Type.Optional(UrlField('Product page')),
  metadata: Type.Optional(JsonObject('Integration data (at most 16 KB); no secrets or personal data')),
  otherDetails: Type.Optional(JsonObject('Searchable attributes (brand, category, tags, color …); at most 16 KB')),
  variants: Type.Optional(
    Nullable(Type.Array(VariantSchema, { maxItems: 100, description: 'At most 100; default empty' })),
  ),
};

/** The Product body of create/upsert (REST, webhook, tool). */
export const ProductInputSchema = Type.Object(productFields);
export type ProductInput = Static<typeof ProductInputSchema>;

/** PATCH body: any subset of the product fields. */
export const ProductPatchSchema = Type.Partial(Type.Object(productFields), { minProperties: 1 });
export type ProductPatch = Static<typeof ProductPatchSchema>;

export const VariantViewSchema = Type.Object({
  sku: Nullable(Type.String()),
  externalId: Nullable(Type.String()),
  name: Type.String(),
  description: Nullable(Type.String()),
  price: Type.String(),
  currency: Type.String(),
  status: Type.String(),
  inStock: Type.Boolean(),
  inventoryQuantity: Type.Integer(),
  imageUrl: Nullable(Type.String()),
  productUrl: Nullable(Type.String()),
  otherDetails: Nullable(Type.Object({}, { additionalProperties: true })),
});

export const ProductSchema = Type.Object({
  id: Type.String({ description: 'Product UUID' }),
  catalogId: Type.String({ description: '10-digit catalog id used by carts and tools' }),
  merchantId: Type.String(),
  storeId: Type.String(),
  scope: Type.Object({ merchantId: Type.String(), storeId: Type.String() }),
  sku: Nullable(Type.String()),
  externalId: Nullable(Type.String()),
  name: Type.String(),
  description: Nullable(Type.String()),
  price: Type.String({ description: 'Exact decimal string' }),
  currency: Type.String(),
  status: Type.String(),
  inStock: Type.Boolean(),
  inventoryQuantity: Type.Integer(),
  imageUrl: Nullable(Type.String()),
  imageUrls: Type.Array(Type.String()),
  productUrl: Nullable(Type.String()),
  metadata: Nullable(Type.Object({}, { additionalProperties: true })),
  otherDetails: Nullable(Type.Object({}, { additionalProperties: true })),
  variants: Type.Array(VariantViewSchema),
  source: Type.String({ description: 'Last write source: api, webhook, mcp or service' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ProductView = Static<typeof ProductSchema>;
