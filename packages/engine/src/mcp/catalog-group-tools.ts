import { Type } from 'typebox';
import {
  AddLineSchema,
  AddressSchema,
  CatalogId,
  CustomerSchema,
  PaymentSchema,
  Quantity,
} from '../catalog/cart-schemas.ts';
import {
  addCartItems,
  archiveCart,
  clearCart,
  createCart,
  removeCartItems,
  updateCartItems,
} from '../catalog/cart-service.ts';
import { completeOrder } from '../catalog/order-service.ts';
import { ProductInputSchema } from '../catalog/product-schemas.ts';
import {
  getProductDetails,
  listProductsFor,
  removeProduct,
  removeProductByIdentity,
  upsertProduct,
} from '../catalog/product-service.ts';
import type { EngineContext } from '../context.ts';
import { EngineErrors } from '../errors.ts';
import { JsonObject, Uuid } from '../http/schemas.ts';

import {
  args,
  CartId,
  CheckoutId,
  IdempotencyKey,
  OptionalIdempotencyKey,
  PERMISSION,
  readOnly,
  type Tool,
  toolHelpers,
  toolWrite,
  without,
  write,
} from './mcp-tool-kit.ts';

/** The catalog tool group: stores, products, carts and orders (`catalog_*`), on the same services as REST. */
export function catalogGroupTools(ctx: EngineContext): Tool[] {
  const { tool, listStores, getByIdOrCatalog, lineRef } = toolHelpers(ctx);
  return [
    tool({
      name: 'catalog_list_stores',
      description: 'Stores this merchant key reaches (by its scope).',
      inputSchema: args({}),
      permission: PERMISSION,
      annotations: readOnly,
      run: async (_input, call) => listStores(call.principal),
    }),
    tool({
      name: 'catalog_search_products',
      description:
        "List or full-text search (ranked) the products of the key's stores; every status unless `status` is given.",
      inputSchema: args({
        q: Type.Optional(Type.String({ maxLength: 500 })),
        storeId: Type.Optional(Uuid()),
        status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('archived')])),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
        cursor: Type.Optional(Type.String({ maxLength: 200 })),
      }),
      permission: PERMISSION,
      annotations: readOnly,
      run: async (input, call) => listProductsFor(ctx, call.principal, { ...input, limit: input.limit ?? 20 }),
    }),
    tool({
      name: 'catalog_search',
      description: 'Search sellable (active) products by text, best match first (reference contract).',
      inputSchema: args({
        query: Type.String({ minLength: 1, maxLength: 500 }),
        storeId: Type.Optional(Uuid()),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
      }),
      permission: PERMISSION,
      annotations: readOnly,
      run: async (input, call) => {
        const page = await listProductsFor(ctx, call.principal, {
          q: input.query,
          storeId: input.storeId,
          status: 'active',
          limit: input.limit ?? 10,
        });
        return { products: page.data };
      },
    }),
    tool({
      name: 'catalog_get_product',
      description: 'One product by productId (UUID) or 10-digit catalogId.',
      inputSchema: args({ productId: Type.Optional(Uuid()), catalogId: Type.Optional(CatalogId) }),
      permission: PERMISSION,
      annotations: readOnly,
      run: async (input, call) => getByIdOrCatalog(call.principal, input),
    }),
    tool({
      name: 'catalog_get_product_details',
      description:
        'Complete details of one product by catalogId, productId, sku or externalId (storeId narrows sku/externalId).',
      inputSchema: args({
        catalogId: Type.Optional(CatalogId),
        productId: Type.Optional(Uuid()),
        sku: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
        externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        storeId: Type.Optional(Uuid()),
      }),
      permission: PERMISSION,
      annotations: readOnly,
      run: async (input, call) => ({ product: await getProductDetails(ctx, call.principal, input) }),
    }),
    tool({
      name: 'catalog_upsert_product',
      description:
        'Create or update a product by storeId + sku or storeId + externalId (same rules as POST /api/v1/catalog/products). Emits product events with source mcp.',
      inputSchema: Type.Object(
        { ...ProductInputSchema.properties, idempotencyKey: OptionalIdempotencyKey },
        { additionalProperties: false },
      ),
      permission: PERMISSION,
      annotations: write(false, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'catalog_upsert_product', input, async (trx, sink) => {
          const outcome = await upsertProduct(
            trx,
            sink,
            call.principal,
            without(input, 'idempotencyKey') as never,
            'mcp',
          );
          return { mode: outcome.mode, product: outcome.product };
        }),
    }),
    tool({
      name: 'catalog_delete_product',
      description:
        'Delete a product by productId, or by storeId + sku/externalId (an unknown identity is reported as ignored). Emits product.deleted.',
      inputSchema: args({
        productId: Type.Optional(Uuid()),
        storeId: Type.Optional(Uuid()),
        sku: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
        externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'catalog_delete_product', {}, async (trx, sink) => {
          if (input.productId)
            return { mode: 'deleted', product: await removeProduct(trx, sink, call.principal, input.productId, 'mcp') };
          if (!input.storeId) throw EngineErrors.invalidField('send productId, or storeId with sku and/or externalId');
          return removeProductByIdentity(
            trx,
            sink,
            call.principal,
            { storeId: input.storeId, sku: input.sku, externalId: input.externalId },
            'mcp',
          );
        }),
    }),
    tool({
      name: 'catalog_create_cart',
      description:
        'Create a cart with items (10-digit catalogIds of one store) and its checkout id, ready for catalog_complete_order.',
      inputSchema: args({
        storeId: Uuid(),
        items: Type.Array(AddLineSchema, { minItems: 1, maxItems: 50 }),
        metadata: Type.Optional(JsonObject('Cart integration data')),
        idempotencyKey: OptionalIdempotencyKey,
      }),
      permission: PERMISSION,
      annotations: write(),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'catalog_create_cart', input, async (trx, sink) => ({
          cart: await createCart(trx, sink, call.principal, input, 'mcp', { withCheckout: true }),
        })),
    }),
    tool({
      name: 'catalog_mutate_cart_items',
      description:
        'Add, update (replace quantities) or remove cart lines; several lines are one atomic bundle. idempotencyKey is required.',
      inputSchema: args({
        cartId: CartId,
        action: Type.Union([Type.Literal('add'), Type.Literal('update'), Type.Literal('remove')]),
        items: Type.Array(
          Type.Object({ ...lineRef, quantity: Type.Optional(Quantity) }, { additionalProperties: false }),
          { minItems: 1, maxItems: 50 },
        ),
        idempotencyKey: IdempotencyKey,
      }),
      permission: PERMISSION,
      annotations: write(),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'catalog_mutate_cart_items', input, async (trx, sink) => {
          if (input.action !== 'remove' && input.items.some((line) => line.quantity === undefined))
            throw EngineErrors.invalidField('each line needs quantity');
          if (input.action === 'add' && input.items.some((line) => !line.catalogId))
            throw EngineErrors.invalidField('added lines need catalogId');
          const run =
            input.action === 'add' ? addCartItems : input.action === 'update' ? updateCartItems : removeCartItems;
          return { cart: await run(trx, sink, call.principal, input.cartId, input.items as never, 'mcp') };
        }),
    }),
    tool({
      name: 'catalog_archive_cart',
      description: 'Archive a cart permanently.',
      inputSchema: args({ cartId: CartId }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'catalog_archive_cart', {}, async (trx, sink) => ({
          cart: await archiveCart(trx, sink, call.principal, input.cartId, 'mcp'),
        })),
    }),
    tool({
      name: 'catalog_clear_cart',
      description: 'Empty a cart that has no checkout id yet.',
      inputSchema: args({ cartId: CartId }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'catalog_clear_cart', {}, async (trx, sink) => ({
          cart: await clearCart(trx, sink, call.principal, input.cartId, 'mcp'),
        })),
    }),
    tool({
      name: 'catalog_complete_order',
      description:
        'Complete the order of a prepared checkout: inventory is deducted atomically (never oversold); a completed checkout is never replayed. Emits order.created, order.completed and product.inventory.updated. Never send card data.',
      inputSchema: args({
        checkoutId: CheckoutId,
        customer: Type.Optional(CustomerSchema),
        shippingAddress: Type.Optional(AddressSchema),
        billingAddress: Type.Optional(AddressSchema),
        payment: Type.Optional(PaymentSchema),
        paymentDetails: Type.Optional(
          Type.Object({
            provider: Type.Optional(Type.String({ maxLength: 64 })),
            reference: Type.Optional(Type.String({ maxLength: 128 })),
          }),
        ),
        metadata: Type.Optional(JsonObject('Order integration data')),
        idempotencyKey: OptionalIdempotencyKey,
      }),
      permission: PERMISSION,
      annotations: write(),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'catalog_complete_order', input, async (trx, sink) => ({
          order: await completeOrder(trx, sink, call.principal, without(input, 'idempotencyKey') as never, 'mcp'),
        })),
    }),
  ];
}
