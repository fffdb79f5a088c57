import type { App } from '@keel/core';
import { Type } from 'typebox';
import type { EngineContext } from '../context.ts';
import { EngineErrors } from '../errors.ts';
import { principalOf } from '../http/merchant-auth.ts';
import {
  commonErrors,
  ErrorSchema,
  merchantKeySecurity,
  Nullable,
  PageQuery,
  Timestamp,
  Uuid,
} from '../http/schemas.ts';
import { isUuid } from '../ids.ts';
import { inTransaction } from '../write.ts';
import {
  bulkDeleteKeys,
  bulkRevokeKeys,
  createStoreFor,
  deleteKey,
  getKey,
  getKeys,
  issueKey,
  listReachableStores,
  revokeKey,
} from './merchant-service.ts';
import { KEY_SCOPES, requireMerchantWide } from './principal.ts';

const config = { merchantKey: true };
const StoreSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  name: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const KeySchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  name: Type.String(),
  scope: Type.String({ description: 'merchant, store, merchant_network or custom' }),
  storeIds: Type.Array(Type.String()),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
  status: Type.String({ description: 'active, expired or revoked' }),
  createdAt: Timestamp,
  expiresAt: Nullable(Timestamp),
  revokedAt: Nullable(Timestamp),
  lastUsedAt: Nullable(Timestamp),
});
const KeyParams = Type.Object({ keyId: Type.String({ maxLength: 100 }) });
const IdList = Type.Object({
  ids: Type.Array(Uuid(), { minItems: 1, maxItems: 100, description: "1 to 100 key ids of the caller's merchant" }),
});

function keyId(raw: string): string {
  if (!isUuid(raw)) throw EngineErrors.invalidId('keyId');
  return raw.toLowerCase();
}

export function registerMerchantRoutes(app: App, ctx: EngineContext): void {
  app.get(
    '/api/v1/catalog/stores',
    {
      schema: {
        tags: ['stores'],
        security: merchantKeySecurity,
        summary: 'Stores the key reaches',
        description:
          "merchant: every store of the merchant; store: its one store; merchant_network: the merchant's and its active direct sub-merchants' stores; custom: the selected stores.",
        response: { 200: Type.Object({ data: Type.Array(StoreSchema) }), ...commonErrors },
      },
      config,
    },
    async (request) => {
      return { data: await listReachableStores(ctx.db, principalOf(request)) };
    },
  );

  app.post(
    '/api/v1/catalog/stores',
    {
      schema: {
        tags: ['stores'],
        security: merchantKeySecurity,
        summary: 'Create a store',
        description:
          "Needs a merchant or merchant_network key. `merchantId` (default: the key's merchant) may name a direct sub-merchant when the key is merchant_network.",
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }), merchantId: Type.Optional(Uuid()) }),
        response: { 201: StoreSchema, ...commonErrors },
      },
      config,
    },
    async (request, reply) => {
      return reply.status(201).send(await createStoreFor(ctx, ctx.principals, principalOf(request), request.body));
    },
  );

  const tags = ['keys'];
  const keyDoc =
    "Key management needs a merchant or merchant_network key (403 otherwise) and covers the keys of the caller's merchant.";
  app.get(
    '/api/v1/catalog/keys',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'List keys',
        description: `${keyDoc} Keys are never shown again after creation.`,
        querystring: Type.Object(PageQuery),
        response: {
          200: Type.Object({ data: Type.Array(KeySchema), nextCursor: Nullable(Type.String()) }),
          ...commonErrors,
        },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return getKeys(ctx.db, principal.merchantId, request.query.limit ?? 20, request.query.cursor);
    },
  );

  app.post(
    '/api/v1/catalog/keys',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Create a key (shown once)',
        description: `${keyDoc} \`store\` keys name exactly one store, \`custom\` keys 1–100 stores of the merchant or its direct sub-merchants; \`merchant\` and \`merchant_network\` keys name none. The response carries \`key\` once; only its SHA-256 is stored.`,
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 255 }),
          scope: Type.Union(KEY_SCOPES.map((s) => Type.Literal(s))),
          storeIds: Type.Optional(Type.Array(Uuid(), { maxItems: 100 })),
          expiresAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
        }),
        response: {
          201: Type.Object({ key: Type.String({ description: 'The key itself; shown only now' }), record: KeySchema }),
          ...commonErrors,
        },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const issued = await inTransaction(ctx, (trx) =>
        issueKey(trx, { merchantId: principal.merchantId, ...request.body }, principal),
      );
      return reply.status(201).send({ key: issued.secret, record: issued.key });
    },
  );

  app.get(
    '/api/v1/catalog/keys/:keyId',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'One key',
        description: keyDoc,
        params: KeyParams,
        response: { 200: KeySchema, 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return getKey(ctx.db, principal.merchantId, keyId(request.params.keyId));
    },
  );

  app.post(
    '/api/v1/catalog/keys/:keyId/revoke',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Revoke a key',
        description: `${keyDoc} Takes effect at once (401 for the key from then on). Revoking a revoked key changes nothing.`,
        params: KeyParams,
        response: { 200: KeySchema, 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return revokeKey(ctx, ctx.principals, principal.merchantId, keyId(request.params.keyId));
    },
  );

  app.delete(
    '/api/v1/catalog/keys/:keyId',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Delete a revoked key',
        description: `${keyDoc} Only a revoked key can be deleted: an active or merely expired key is a 409.`,
        params: KeyParams,
        response: { 204: Type.Null(), 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      await deleteKey(ctx, ctx.principals, principal.merchantId, keyId(request.params.keyId));
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/v1/catalog/keys/bulk-revoke',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Revoke several keys',
        description: `${keyDoc} Revokes the listed keys that are not revoked yet; already revoked ones are reported and left unchanged. An unknown id is a 404 and nothing changes.`,
        body: IdList,
        response: {
          200: Type.Object({ revoked: Type.Array(Type.String()), alreadyRevoked: Type.Array(Type.String()) }),
          404: ErrorSchema,
          ...commonErrors,
        },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return bulkRevokeKeys(ctx, ctx.principals, principal.merchantId, request.body.ids);
    },
  );

  app.post(
    '/api/v1/catalog/keys/bulk-delete',
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Delete several revoked keys',
        description: `${keyDoc} Accepts only selections in which every key is revoked; otherwise 409 naming the others, and nothing is deleted.`,
        body: IdList,
        response: {
          200: Type.Object({ deleted: Type.Array(Type.String()) }),
          404: ErrorSchema,
          409: ErrorSchema,
          ...commonErrors,
        },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return bulkDeleteKeys(ctx, ctx.principals, principal.merchantId, request.body.ids);
    },
  );
}
