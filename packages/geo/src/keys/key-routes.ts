import type { App } from '@keel/core';
import { Type } from 'typebox';
import { GEO_PERMISSIONS } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import { Cursor, commonErrors, ErrorSchema, keySecurity, Nullable, Timestamp, Uuid } from '../http-schemas.ts';
import { authenticated, principalOf } from '../routes-auth.ts';
import { createKey, createSiteToken, listKeys, revokeKey, revokeSiteToken } from './key-service.ts';

const tags = ['keys'];
const Permission = Type.Union(GEO_PERMISSIONS.map((p) => Type.Literal(p)));
const Scope = Type.Object(
  {
    type: Type.Union([Type.Literal('tenant'), Type.Literal('workspace'), Type.Literal('workspaces')], {
      description: '`tenant`: every workspace of the tenant; `workspace`: exactly one; `workspaces`: a custom set',
    }),
    workspaceIds: Type.Optional(Type.Array(Uuid('A workspace of the tenant'), { maxItems: 100, uniqueItems: true })),
  },
  { additionalProperties: false },
);
const KeySummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart' }),
  permissions: Type.Array(Type.String()),
  scope: Type.Object({ type: Type.String(), workspaceIds: Type.Array(Type.String()) }),
  status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]),
  expiresAt: Nullable(Timestamp),
  revokedAt: Nullable(Timestamp),
  createdAt: Timestamp,
});
const ADMIN_NOTE = 'Needs a tenant-scoped key holding every permission (403 otherwise).';

export function registerKeyRoutes(app: App, ctx: GeoContext): void {
  app.get(
    '/api/v1/geo/keys',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "List the tenant's API keys",
        description: `Newest first, keyset-paginated. Secrets are never shown again; \`prefix\` identifies a key. ${ADMIN_NOTE} A tenant-level list: it takes no workspaceId.`,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
          cursor: Type.Optional(Cursor),
        }),
        response: {
          200: Type.Object({ items: Type.Array(KeySummary), nextCursor: Nullable(Type.String()) }),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx),
    },
    async (request) => listKeys(ctx, principalOf(request), request.query.limit ?? 50, request.query.cursor),
  );

  app.post(
    '/api/v1/geo/keys',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Create an API key',
        description: `The key is in the response once and stored only as a SHA-256 hash. A new key holds at most the calling key's permissions (403 \`GEO_KEY_ESCALATION\`); its scope names only the tenant's workspaces (another tenant's is a 403). \`expiresAt\` is optional (no expiry when absent). ${ADMIN_NOTE}`,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            permissions: Type.Array(Permission, { minItems: 1, maxItems: 6, uniqueItems: true }),
            scope: Scope,
            expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Intersect([
            KeySummary,
            Type.Object({ key: Type.String({ description: 'The secret, shown once' }) }),
          ]),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx),
    },
    async (request, reply) => reply.status(201).send(await createKey(ctx, principalOf(request), request.body)),
  );

  app.delete(
    '/api/v1/geo/keys/:keyId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Revoke an API key',
        description: `Takes effect on the next request. Revoking an already revoked key is a 204 too; a key of another tenant is a 404. ${ADMIN_NOTE}`,
        params: Type.Object({ keyId: Type.String({ maxLength: 64 }) }),
        response: { 204: Type.Null({ description: 'Revoked' }), 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx),
    },
    async (request, reply) => {
      await revokeKey(ctx, principalOf(request), request.params.keyId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/v1/geo/site-tokens',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Create a site token for tracking-event ingestion',
        description: `A site token authenticates \`POST /api/v2/geo/events\` for one workspace; it is shown once and stored hashed. It is meant to be embedded in web pages and grants nothing but event ingestion. ${ADMIN_NOTE}`,
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace the events belong to'),
            name: Type.String({ minLength: 1, maxLength: 200 }),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            id: Type.String(),
            workspaceId: Type.String(),
            name: Type.String(),
            token: Type.String(),
          }),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx),
    },
    async (request, reply) => reply.status(201).send(await createSiteToken(ctx, principalOf(request), request.body)),
  );

  app.delete(
    '/api/v1/geo/site-tokens/:tokenId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Revoke a site token',
        description: `Ingestion with the token is refused (401) within \`GEO_SITE_TOKEN_CACHE_MS\` on every instance. ${ADMIN_NOTE}`,
        params: Type.Object({ tokenId: Type.String({ maxLength: 64 }) }),
        response: { 204: Type.Null({ description: 'Revoked' }), 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx),
    },
    async (request, reply) => {
      await revokeSiteToken(ctx, principalOf(request), request.params.tokenId);
      return reply.status(204).send(null);
    },
  );
}
