import { type App, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import type { EngineContext } from '../context.ts';
import { principalOf } from '../http/merchant-auth.ts';
import {
  commonErrors,
  ErrorSchema,
  IdempotencyHeaders,
  merchantKeySecurity,
  PageQuery,
  RequiredIdempotencyHeaders,
  Uuid,
} from '../http/schemas.ts';
import { idempotentWrite, inTransaction } from '../write.ts';
import {
  AddItemsSchema,
  CartSchema,
  CompleteOrderSchema,
  CreateCartSchema,
  OrderPatchSchema,
  OrderSchema,
  RemoveItemsSchema,
  UpdateItemsSchema,
} from './cart-schemas.ts';
import {
  addCartItems,
  archiveCart,
  clearCart,
  createCart,
  getCart,
  listCarts,
  removeCartItems,
  updateCartItems,
} from './cart-service.ts';
import { completeOrder, getOrder, listOrders, patchOrder } from './order-service.ts';

const config = { merchantKey: true };
const CartPage = Type.Object({ data: Type.Array(CartSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) });
const OrderPage = Type.Object({ data: Type.Array(OrderSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) });
const CartIdQuery = Type.Object({ cartId: Uuid('The cart') });
const cartErrors = { 404: ErrorSchema, 409: ErrorSchema, ...commonErrors };

export function registerCartRoutes(app: App, ctx: EngineContext): void {
  const tags = ['carts'];
  app.get(
    '/api/v1/catalog/carts',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'List carts',
        description:
          'Non-archived carts by default, newest first; `status=archived` or `includeArchived=true` for history. `storeId` narrows; `limit`/`cursor` paginate.',
        querystring: Type.Object({
          storeId: Type.Optional(Uuid()),
          status: Type.Optional(
            Type.Union(
              ['open', 'cleared', 'checkout_created', 'completed', 'closed', 'archived'].map((s) => Type.Literal(s)),
            ),
          ),
          includeArchived: Type.Optional(Type.Boolean({ default: false })),
          ...PageQuery,
        }),
        response: { 200: CartPage, ...commonErrors },
      },
      config,
    },
    async (request) => listCarts(ctx, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );

  app.get(
    '/api/v1/catalog/carts/:cartId',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'One cart',
        params: Type.Object({ cartId: Type.String({ maxLength: 100 }) }),
        response: { 200: CartSchema, 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request) => getCart(ctx, principalOf(request), request.params.cartId),
  );

  app.post(
    '/api/v1/catalog/carts',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Create a cart (with its checkout id)',
        description:
          'Creates a cart with its items and generates its checkout id (`checkoutId`, status `checkout_created`), ready for `POST /orders`. Items are 10-digit catalogIds of products of the same store; inactive, out-of-stock or short products are a 409. Optional `Idempotency-Key`.',
        headers: IdempotencyHeaders,
        body: CreateCartSchema,
        response: { 201: CartSchema, ...cartErrors },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const outcome = await idempotentWrite(
        ctx,
        principal,
        'POST /api/v1/catalog/carts',
        request.headers['idempotency-key'],
        false,
        request.body,
        async (trx, sink) => ({
          statusCode: 201,
          body: await createCart(trx, sink, principal, request.body, 'api', { withCheckout: true }),
        }),
      );
      return sendIdempotent(request, reply, outcome);
    },
  );

  const mutation = (method: 'POST' | 'PATCH' | 'DELETE') => ({
    schema: {
      tags,
      security: merchantKeySecurity,
      summary: { POST: 'Add items', PATCH: 'Replace item quantities', DELETE: 'Remove items' }[method],
      description: `${{ POST: 'Adds lines (a catalogId already in the cart adds to its quantity)', PATCH: 'Sets line quantities (lines by itemId or catalogId)', DELETE: 'Removes lines (by itemId or catalogId)' }[method]} of a cart that is open, cleared or has a prepared checkout. One line emits \`cart.item.*\`, several are a bundle applied atomically (\`cart.bundle.*\`); \`cart.updated\` follows either. \`Idempotency-Key\` is required: a retry replays the first answer, the same key with another body is a 409.`,
      headers: RequiredIdempotencyHeaders,
      body: method === 'POST' ? AddItemsSchema : method === 'PATCH' ? UpdateItemsSchema : RemoveItemsSchema,
      response: { 200: CartSchema, ...cartErrors },
    },
    config,
  });
  const mutate =
    (method: 'POST' | 'PATCH' | 'DELETE') =>
    async (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
      const principal = principalOf(request);
      const body = request.body as { cartId: string; items: never[] };
      const outcome = await idempotentWrite(
        ctx,
        principal,
        `${method} /api/v1/catalog/carts/items`,
        request.headers['idempotency-key'],
        true,
        body,
        async (trx, sink) => {
          const run = method === 'POST' ? addCartItems : method === 'PATCH' ? updateCartItems : removeCartItems;
          return { statusCode: 200, body: await run(trx, sink, principal, body.cartId, body.items, 'api') };
        },
      );
      return sendIdempotent(request, reply, outcome);
    };
  app.post('/api/v1/catalog/carts/items', mutation('POST'), mutate('POST'));
  app.patch('/api/v1/catalog/carts/items', mutation('PATCH'), mutate('PATCH'));
  app.delete('/api/v1/catalog/carts/items', mutation('DELETE'), mutate('DELETE'));

  app.post(
    '/api/v1/catalog/carts/clear',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Clear a cart',
        description:
          'Empties a cart that has no checkout id yet (status becomes `cleared`; it takes items again). A cart with a checkout id is a 409.',
        querystring: CartIdQuery,
        response: { 200: CartSchema, ...cartErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      return inTransaction(ctx, (trx, sink) => clearCart(trx, sink, principal, request.query.cartId, 'api'));
    },
  );

  app.post(
    '/api/v1/catalog/carts/archive',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Archive a cart (permanent)',
        description:
          'Archived carts are never restored and take no changes; a prepared checkout of the cart is cancelled. Archiving again returns the cart unchanged.',
        querystring: CartIdQuery,
        response: { 200: CartSchema, ...cartErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      return inTransaction(ctx, (trx, sink) => archiveCart(trx, sink, principal, request.query.cartId, 'api'));
    },
  );

  registerOrderRoutes(app, ctx);
}

function registerOrderRoutes(app: App, ctx: EngineContext): void {
  const tags = ['orders'];
  const complete = {
    schema: {
      tags,
      security: merchantKeySecurity,
      summary: 'Complete an order from a checkout',
      description: `Creates the order of a prepared checkout and deducts inventory atomically (a conditional update per product; concurrent
orders never oversell). 409 when the checkout is already completed (it is never replayed as a new order), cancelled, or a product is
inactive, out of stock or short. A payment id supplied in \`payment.id\` is kept, otherwise one is generated; \`paymentDetails\` carries
\`{provider, reference}\`. Card numbers, verification codes and payment authentication data are rejected (400). Optional \`Idempotency-Key\`.`,
      headers: IdempotencyHeaders,
      body: CompleteOrderSchema,
      response: { 201: OrderSchema, ...cartErrors },
    },
    config,
  };
  const handler = async (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
    const principal = principalOf(request);
    const body = request.body as import('./cart-schemas.ts').CompleteOrderBody;
    const outcome = await idempotentWrite(
      ctx,
      principal,
      'POST /api/v1/catalog/orders',
      request.headers['idempotency-key'],
      false,
      body,
      async (trx, sink) => ({
        statusCode: 201,
        body: await completeOrder(trx, sink, principal, body, 'api'),
      }),
    );
    return sendIdempotent(request, reply, outcome);
  };
  app.post('/api/v1/catalog/orders', complete, handler);
  for (const url of ['/api/v1/catalog/orders/complete', '/catalog/orders/complete']) {
    app.post(
      url,
      {
        ...complete,
        schema: {
          ...complete.schema,
          summary: 'Complete an order (compatibility alias of POST /api/v1/catalog/orders)',
          deprecated: true,
        },
      },
      handler,
    );
  }

  app.get(
    '/api/v1/catalog/orders',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'List orders',
        description: 'Newest first; optional `storeId` and `status`; `limit`/`cursor` paginate.',
        querystring: Type.Object({
          storeId: Type.Optional(Uuid()),
          status: Type.Optional(Type.Union([Type.Literal('completed'), Type.Literal('cancelled')])),
          ...PageQuery,
        }),
        response: { 200: OrderPage, ...commonErrors },
      },
      config,
    },
    async (request) => listOrders(ctx, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );

  const OrderParams = Type.Object({
    orderId: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'Order UUID, public order id (ord_…) or checkout id (chk_…)',
    }),
  });
  app.get(
    '/api/v1/catalog/orders/:orderId',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'One order',
        params: OrderParams,
        response: { 200: OrderSchema, 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request) => getOrder(ctx, principalOf(request), request.params.orderId),
  );

  app.patch(
    '/api/v1/catalog/orders/:orderId',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Update an order',
        description:
          'Updates customer, addresses, payment status/provider, metadata, otherDetails and `status`. `completed` → `cancelled` returns the units to stock (`order.cancelled`, `product.inventory.updated`); a cancelled order cannot be completed again (409). Emits `order.updated`.',
        params: OrderParams,
        body: OrderPatchSchema,
        response: { 200: OrderSchema, ...cartErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      return inTransaction(ctx, (trx, sink) =>
        patchOrder(trx, sink, principal, request.params.orderId, request.body, 'api'),
      );
    },
  );
}
