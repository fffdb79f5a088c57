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
  Uuid,
} from '../http/schemas.ts';
import { idempotentWrite, inTransaction } from '../write.ts';
import { ProductInputSchema, ProductPatchSchema, ProductSchema } from './product-schemas.ts';
import {
  getProduct,
  getProductDetails,
  listProductsFor,
  patchProduct,
  removeProduct,
  upsertProduct,
} from './product-service.ts';

const tags = ['products'];
const config = { merchantKey: true };
const ProductPage = Type.Object({
  data: Type.Array(ProductSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
const ListQuery = Type.Object({
  storeId: Type.Optional(Uuid('Only this store (must be reachable by the key); default: every store the key reaches')),
  q: Type.Optional(
    Type.String({
      maxLength: 500,
      description: 'Full-text query over name, description and otherDetails; results are ranked, best first',
    }),
  ),
  status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('archived')])),
  ...PageQuery,
});
const DetailsQuery = Type.Object({
  catalogId: Type.Optional(Type.String({ pattern: '^\\d{10}$' })),
  productId: Type.Optional(Uuid()),
  sku: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
  externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  storeId: Type.Optional(Uuid('Narrows sku/externalId to one store')),
});
const ProductParams = Type.Object({ productId: Type.String({ maxLength: 100, description: 'Product UUID' }) });

const LIST_DESCRIPTION = `Products of the stores the key reaches, newest first; with \`q\`, a ranked full-text search (every term must match,
the last one as a prefix; products whose name holds every term come first, and within each tier name weighs most, then
otherDetails, then description). Pagination: \`limit\` (1–100, default 20) and the
opaque \`nextCursor\`; search results go at most 10,000 deep.`;

const UPSERT_DESCRIPTION = `Creates the product, or updates the one \`storeId\`+\`sku\` or \`storeId\`+\`externalId\` identifies (201 created,
200 updated). On update, fields not sent keep their values; defaults apply only on creation. Both identifiers naming different products is
a 409. A product without sku and externalId is always created anew: send an \`Idempotency-Key\` to make such retries safe.
\`price\` is a JSON number or exact decimal string and is returned as an exact decimal string.`;

export function registerProductRoutes(app: App, ctx: EngineContext): void {
  const list = async (request: {
    principal?: unknown;
    query: { storeId?: string; q?: string; status?: string; limit?: number; cursor?: string };
  }) => listProductsFor(ctx, principalOf(request as never), { ...request.query, limit: request.query.limit ?? 20 });

  for (const [url, alias] of [
    ['/api/v1/catalog/products', false],
    ['/api/v1/catalog/search', true],
    ['/catalog/search', true],
  ] as const) {
    app.get(
      url,
      {
        schema: {
          tags,
          security: merchantKeySecurity,
          summary: alias
            ? 'Search products (compatibility alias of GET /api/v1/catalog/products)'
            : 'List or search products',
          description: LIST_DESCRIPTION,
          ...(alias ? { deprecated: true } : {}),
          querystring: ListQuery,
          response: { 200: ProductPage, ...commonErrors },
        },
        config,
      },
      async (request) => list(request),
    );
  }

  const upsert = async (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
    const principal = principalOf(request);
    const body = request.body as import('./product-schemas.ts').ProductInput;
    const outcome = await idempotentWrite(
      ctx,
      principal,
      'POST /api/v1/catalog/products',
      request.headers['idempotency-key'],
      false,
      body,
      async (trx, sink) => {
        const result = await upsertProduct(trx, sink, principal, body, 'api');
        return { statusCode: result.mode === 'created' ? 201 : 200, body: result.product };
      },
    );
    return sendIdempotent(request, reply, outcome);
  };
  for (const [url, alias] of [
    ['/api/v1/catalog/products', false],
    ['/api/v1/catalog/product', true],
    ['/catalog/product', true],
  ] as const) {
    app.post(
      url,
      {
        schema: {
          tags,
          security: merchantKeySecurity,
          summary: alias
            ? 'Upsert a product (compatibility alias of POST /api/v1/catalog/products)'
            : 'Create or update a product',
          description: UPSERT_DESCRIPTION,
          ...(alias ? { deprecated: true } : {}),
          headers: IdempotencyHeaders,
          body: ProductInputSchema,
          response: { 200: ProductSchema, 201: ProductSchema, 409: ErrorSchema, ...commonErrors },
        },
        config,
      },
      upsert,
    );
  }

  for (const [url, alias] of [
    ['/api/v1/catalog/product-details', false],
    ['/api/v1/catalog/product', true],
    ['/catalog/product', true],
  ] as const) {
    app.get(
      url,
      {
        schema: {
          tags,
          security: merchantKeySecurity,
          summary: alias
            ? 'Product details (compatibility alias of GET /api/v1/catalog/product-details)'
            : 'Complete details of one product',
          description:
            "Exactly one of `catalogId`, `productId`, `sku`, `externalId`; `storeId` narrows sku/externalId when they exist in several stores (400 otherwise). 404 when no product in the key's stores matches.",
          ...(alias ? { deprecated: true } : {}),
          querystring: DetailsQuery,
          response: { 200: ProductSchema, 404: ErrorSchema, ...commonErrors },
        },
        config,
      },
      async (request) => getProductDetails(ctx, principalOf(request), request.query),
    );
  }

  app.get(
    '/api/v1/catalog/products/:productId',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'One product by UUID',
        description: '404 for an unknown UUID and for a product of a store the key does not reach.',
        params: ProductParams,
        response: { 200: ProductSchema, 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request) => getProduct(ctx, principalOf(request), request.params.productId),
  );

  app.patch(
    '/api/v1/catalog/products/:productId',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Partial update',
        description:
          'Only the fields sent change (same validation as create). `storeId` cannot change; a sku or externalId of another product is a 409.',
        params: ProductParams,
        body: ProductPatchSchema,
        response: { 200: ProductSchema, 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      return inTransaction(ctx, (trx, sink) =>
        patchProduct(trx, sink, principal, request.params.productId, request.body, 'api'),
      );
    },
  );

  app.delete(
    '/api/v1/catalog/products/:productId',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Delete a product',
        description:
          'Deletes the product (204) and emits `product.deleted`. Cart lines and orders keep their snapshots.',
        params: ProductParams,
        response: { 204: Type.Null({ description: 'Deleted' }), 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await inTransaction(ctx, (trx, sink) => removeProduct(trx, sink, principal, request.params.productId, 'api'));
      return reply.status(204).send(null);
    },
  );
}
