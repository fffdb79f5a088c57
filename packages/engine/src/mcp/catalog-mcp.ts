import { type App, AppError, checkIdempotencyKey, defineMcpTool, type McpTool, registerMcpEndpoint } from '@keel/core';
import type { Transaction } from 'kysely';
import { type TObject, type TProperties, Type } from 'typebox';
import { ENGINE_VERSION } from '../app.ts';
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
  cancelCheckout,
  clearCart,
  closeCart,
  createCart,
  getCart,
  getCheckout,
  prepareCheckout,
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
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors } from '../errors.ts';
import { authenticateRequest } from '../http/merchant-auth.ts';
import { JsonObject, Uuid } from '../http/schemas.ts';
import { toStoreView } from '../merchants/merchant-service.ts';
import { listStoresByIds } from '../merchants/merchant-store.ts';
import type { Principal } from '../merchants/principal.ts';
import type { EventSink } from '../webhooks/events.ts';
import { runWrite } from '../write.ts';

const PERMISSION = 'catalog';
const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7E]+$',
  description:
    'Required: a retry with the same key and arguments returns the first result; other arguments with it fail',
});
const OptionalIdempotencyKey = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x21-\\x7E]+$',
    description: 'Optional: makes retries safe',
  }),
);
const CartId = Uuid('Cart id (a UUID; never a checkout id or a session id)');
const CheckoutId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^chk_[0-9a-z]+$',
  description: 'Checkout id (chk_…; never a cart id)',
});
const args = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });
const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const write = (destructive = false, idempotent = false) => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});

type Tool = McpTool<Principal>;

/** Runs a tool write in one transaction with its events (`source: mcp`), under an idempotency key when one is given. */
/** A tool's write on the engine's write path; with `idempotencyKey`, a replay answers the first result. */
async function toolWrite<T>(
  ctx: EngineContext,
  principal: Principal,
  tool: string,
  key: string | undefined,
  payload: unknown,
  work: (trx: Transaction<EngineDb>, sink: EventSink) => Promise<T>,
): Promise<Record<string, unknown>> {
  const idempotency =
    key === undefined
      ? undefined
      : { scope: `${principal.keyId}|mcp:${tool}`, key: checkIdempotencyKey(key, true)!, payload };
  const outcome = await runWrite(ctx, idempotency, async (trx, sink) => ({
    statusCode: 200,
    body: await work(trx, sink),
  }));
  if (outcome.statusCode >= 400) {
    const error = (outcome.body as { error?: { code?: string; message?: string } }).error;
    throw new AppError(
      error?.code ?? 'CONFLICT',
      error?.message ?? 'The first call with this idempotency key failed',
      outcome.statusCode,
    );
  }
  return outcome.replayed
    ? { ...(outcome.body as Record<string, unknown>), idempotentReplayed: true }
    : (outcome.body as Record<string, unknown>);
}

const without = <T extends Record<string, unknown>>(value: T, key: string) =>
  Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));

/** The catalog tool group and the merchant commerce reference contract. */
export function catalogTools(ctx: EngineContext): Tool[] {
  const tool = <S extends TObject>(definition: McpTool<Principal, S>) =>
    defineMcpTool<Principal, S>({ ...definition, permission: PERMISSION });
  const listStores = async (principal: Principal) => ({
    stores: (await listStoresByIds(ctx.db, [...principal.stores.keys()])).map(toStoreView),
  });
  const getByIdOrCatalog = async (
    principal: Principal,
    input: { productId?: string | undefined; catalogId?: string | undefined },
  ) => {
    if (!input.productId && !input.catalogId) throw EngineErrors.invalidField('send productId or catalogId');
    return { product: await getProductDetails(ctx, principal, input) };
  };
  const lineRef = { itemId: Type.Optional(Uuid('Cart item id')), catalogId: Type.Optional(CatalogId) };

  return [
    // Catalog group ----------------------------------------------------------------------------------
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
        toolWrite(
          ctx,
          call.principal,
          'catalog_upsert_product',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => {
            const outcome = await upsertProduct(
              trx,
              sink,
              call.principal,
              without(input, 'idempotencyKey') as never,
              'mcp',
            );
            return { mode: outcome.mode, product: outcome.product };
          },
        ),
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
        toolWrite(ctx, call.principal, 'catalog_delete_product', undefined, input, async (trx, sink) => {
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
        toolWrite(
          ctx,
          call.principal,
          'catalog_create_cart',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => ({
            cart: await createCart(trx, sink, call.principal, input, 'mcp', { withCheckout: true }),
          }),
        ),
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
        toolWrite(
          ctx,
          call.principal,
          'catalog_mutate_cart_items',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => {
            if (input.action !== 'remove' && input.items.some((line) => line.quantity === undefined))
              throw EngineErrors.invalidField('each line needs quantity');
            if (input.action === 'add' && input.items.some((line) => !line.catalogId))
              throw EngineErrors.invalidField('added lines need catalogId');
            const run =
              input.action === 'add' ? addCartItems : input.action === 'update' ? updateCartItems : removeCartItems;
            return { cart: await run(trx, sink, call.principal, input.cartId, input.items as never, 'mcp') };
          },
        ),
    }),
    tool({
      name: 'catalog_archive_cart',
      description: 'Archive a cart permanently.',
      inputSchema: args({ cartId: CartId }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'catalog_archive_cart', undefined, input, async (trx, sink) => ({
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
        toolWrite(ctx, call.principal, 'catalog_clear_cart', undefined, input, async (trx, sink) => ({
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
        toolWrite(
          ctx,
          call.principal,
          'catalog_complete_order',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => ({
            order: await completeOrder(trx, sink, call.principal, without(input, 'idempotencyKey') as never, 'mcp'),
          }),
        ),
    }),

    // Merchant commerce reference contract --------------------------------------------------------------
    tool({
      name: 'cart_create',
      description: 'Create an open cart (no checkout yet) in a store of the key, optionally with items.',
      inputSchema: args({
        storeId: Uuid(),
        items: Type.Optional(Type.Array(AddLineSchema, { maxItems: 50 })),
        metadata: Type.Optional(JsonObject('Cart integration data')),
        idempotencyKey: OptionalIdempotencyKey,
      }),
      permission: PERMISSION,
      annotations: write(),
      run: async (input, call) =>
        toolWrite(
          ctx,
          call.principal,
          'cart_create',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => ({
            cart: await createCart(trx, sink, call.principal, input, 'mcp', { withCheckout: false }),
          }),
        ),
    }),
    tool({
      name: 'cart_get',
      description: 'One cart with its items and totals.',
      inputSchema: args({ cartId: CartId }),
      permission: PERMISSION,
      annotations: readOnly,
      run: async (input, call) => ({ cart: await getCart(ctx, call.principal, input.cartId) }),
    }),
    ...(['add', 'update', 'remove'] as const).flatMap((action) => {
      const run = action === 'add' ? addCartItems : action === 'update' ? updateCartItems : removeCartItems;
      const line =
        action === 'add'
          ? { catalogId: CatalogId, quantity: Quantity }
          : action === 'update'
            ? { ...lineRef, quantity: Quantity }
            : lineRef;
      return [
        tool({
          name: `cart_${action}_item`,
          description: `${action === 'add' ? 'Add one line' : action === 'update' ? 'Set the quantity of one line' : 'Remove one line'} (emits cart.item.${action === 'add' ? 'added' : action === 'update' ? 'updated' : 'removed'}). idempotencyKey is required.`,
          inputSchema: args({ cartId: CartId, ...line, idempotencyKey: IdempotencyKey }),
          permission: PERMISSION,
          annotations: write(action === 'remove'),
          run: async (input, call) =>
            toolWrite(
              ctx,
              call.principal,
              `cart_${action}_item`,
              input.idempotencyKey,
              without(input, 'idempotencyKey'),
              async (trx, sink) => {
                const { cartId, idempotencyKey: _key, ...lineInput } = input as Record<string, unknown>;
                return { cart: await run(trx, sink, call.principal, cartId as string, [lineInput] as never, 'mcp') };
              },
            ),
        }),
        tool({
          name: `cart_${action}_bundle`,
          description: `${action === 'add' ? 'Add' : action === 'update' ? 'Set quantities of' : 'Remove'} several lines atomically (emits cart.bundle.${action === 'add' ? 'added' : action === 'update' ? 'updated' : 'removed'}). idempotencyKey is required.`,
          inputSchema: args({
            cartId: CartId,
            items: Type.Array(Type.Object(line, { additionalProperties: false }), { minItems: 1, maxItems: 50 }),
            idempotencyKey: IdempotencyKey,
          }),
          permission: PERMISSION,
          annotations: write(action === 'remove'),
          run: async (input, call) =>
            toolWrite(
              ctx,
              call.principal,
              `cart_${action}_bundle`,
              input.idempotencyKey,
              without(input, 'idempotencyKey'),
              async (trx, sink) => {
                const lines = (input as { items: object[] }).items;
                const cart = await run(
                  trx,
                  sink,
                  call.principal,
                  (input as { cartId: string }).cartId,
                  lines as never,
                  'mcp',
                );
                return { cart };
              },
            ),
        }),
      ];
    }),
    tool({
      name: 'cart_archive',
      description: 'Archive a cart permanently (a prepared checkout is cancelled).',
      inputSchema: args({ cartId: CartId, idempotencyKey: OptionalIdempotencyKey }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(
          ctx,
          call.principal,
          'cart_archive',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => ({ cart: await archiveCart(trx, sink, call.principal, input.cartId, 'mcp') }),
        ),
    }),
    tool({
      name: 'cart_clear',
      description: 'Empty a cart without a checkout (emits cart.cleared). idempotencyKey is required.',
      inputSchema: args({ cartId: CartId, idempotencyKey: IdempotencyKey }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(
          ctx,
          call.principal,
          'cart_clear',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => ({ cart: await clearCart(trx, sink, call.principal, input.cartId, 'mcp') }),
        ),
    }),
    tool({
      name: 'cart_close',
      description: 'Close an open cart that has no checkout (emits cart.closed). idempotencyKey is required.',
      inputSchema: args({ cartId: CartId, idempotencyKey: IdempotencyKey }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(
          ctx,
          call.principal,
          'cart_close',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => ({ cart: await closeCart(trx, sink, call.principal, input.cartId, 'mcp') }),
        ),
    }),
    tool({
      name: 'checkout_prepare',
      description:
        'Prepare the checkout of a cart: returns the authoritative summary (items, totals) and an awaiting-payment handoff reference. Accepts no card data, CVV, one-time codes, payment tokens, addresses or payment-authentication state. idempotencyKey is required.',
      inputSchema: args({ cartId: CartId, idempotencyKey: IdempotencyKey }),
      permission: PERMISSION,
      annotations: write(false, true),
      run: async (input, call) =>
        toolWrite(
          ctx,
          call.principal,
          'checkout_prepare',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => ({ checkout: await prepareCheckout(trx, sink, call.principal, input.cartId, 'mcp') }),
        ),
    }),
    tool({
      name: 'checkout_get',
      description: 'A checkout with its current summary and handoff reference.',
      inputSchema: args({ checkoutId: CheckoutId }),
      permission: PERMISSION,
      annotations: readOnly,
      run: async (input, call) => ({ checkout: await getCheckout(ctx, call.principal, input.checkoutId) }),
    }),
    tool({
      name: 'checkout_cancel',
      description:
        'Cancel a prepared checkout; the cart is open again without a checkout id (emits checkout.cancelled).',
      inputSchema: args({ checkoutId: CheckoutId, idempotencyKey: OptionalIdempotencyKey }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(
          ctx,
          call.principal,
          'checkout_cancel',
          input.idempotencyKey,
          without(input, 'idempotencyKey'),
          async (trx, sink) => ({ checkout: await cancelCheckout(trx, sink, call.principal, input.checkoutId, 'mcp') }),
        ),
    }),
  ];
}

/** Mounts the public MCP endpoint at `POST /` and `POST /mcp`: the merchant key authenticates, its scope applies to every tool. */
export async function registerCatalogMcp(app: App, ctx: EngineContext): Promise<void> {
  const tools = catalogTools(ctx);
  for (const path of ['/', '/mcp']) {
    await registerMcpEndpoint<Principal>(app, {
      path,
      serverInfo: { name: 'keel-engine', version: ENGINE_VERSION, title: 'Keel engine catalog tools' },
      instructions:
        'Catalog tools and the merchant commerce reference contract. The merchant and its stores come from the key. Cart ids, checkout ids (chk_…) and handoff references are separate namespaces. Never send card data.',
      tools,
      authenticate: (request) => authenticateRequest(ctx, request),
      authorize: () => true,
      docs: {
        tags: ['mcp'],
        summary: path === '/' ? 'JSON-RPC tool endpoint' : 'JSON-RPC tool endpoint (alias path)',
        description:
          'Model Context Protocol over HTTP, stateless, JSON responses: `initialize`, `tools/list`, `tools/call` (2024-11-05 … 2025-11-25 and 2026-07-28 clients). Authenticate with the merchant key (Authorization: Bearer, x-api-key or X-Catalog-API-Key); a missing or invalid key is a JSON-RPC error -32001 with HTTP 401. Bad arguments and business failures are tool results with `isError: true`.',
        security: [{ bearerAuth: [] }, { apiKey: [] }, { catalogApiKey: [] }],
      },
    });
  }
}
