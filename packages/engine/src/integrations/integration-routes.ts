import type { App } from '@keel/core';
import { type Static, Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  component,
  IdParams,
  NullableTimestamp,
  OneOf,
  PageQuery,
  page,
  ref,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import {
  type ClientInput,
  createClient,
  DEFAULT_OVERLAP_SECONDS,
  deleteClient,
  getClient,
  listClients,
  MAX_OVERLAP_SECONDS,
  rotateClientSecret,
} from './integration-service.ts';

const ClientFields = {
  id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  role: Type.String(),
  client_id: Type.String({ description: 'Public: send it as `access_key` to POST /api/v1/auth/token' }),
  identity_id: Type.String({ description: "The client's service identity in the realm" }),
  status: Type.String({ description: 'active, or revoked (its key pair was revoked)' }),
  secret_rotated_at: NullableTimestamp,
  previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
    description: 'While an overlap runs: when the previous secret stops working',
  }),
  last_used_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const IntegrationClientSchema = component('RtIntegrationClient', Type.Object(ClientFields));
type IntegrationClient = Static<typeof IntegrationClientSchema>;
const ClientSecret = Type.String({ description: 'Shown only in this answer; stored as its SHA-256' });

const AUTHENTICATION = `A client authenticates like any service identity: \`POST /api/v1/auth/token\` with \`{"access_key": client_id, "secret_key": client_secret}\` answers a short-lived bearer token carrying the client's role in the realm.`;

export function registerIntegrationRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['integrations'], security: runtimeSecurity };
  const ClientRef = ref<IntegrationClient>('RtIntegrationClient');
  app.get(
    '/api/v1/integrations/clients',
    {
      schema: {
        ...base,
        summary: 'List integration clients',
        description: 'Admin role or stronger. Newest first; secrets are never shown again.',
        querystring: Type.Object(PageQuery),
        response: { 200: page(ClientRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listClients(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    '/api/v1/integrations/clients',
    {
      schema: {
        ...base,
        summary: 'Create an integration client with a one-time secret',
        description: `Admin role or stronger. Creates a service identity of the token's realm with \`role\` (default operator; never above the caller's role, never owner: 403) and one key pair. \`client_secret\` is in this answer only and is stored as its SHA-256, so it cannot be shown again (rotate to get a new one). Names are unique per realm (409 RUNTIME_NAME_TAKEN). ${AUTHENTICATION} No \`Idempotency-Key\`: a replay could not answer the secret again; a duplicate from a retry is visible in the list and its key pair can be revoked.`,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9 ._-]*$' }),
            description: Type.Optional(Type.String({ maxLength: 1000 })),
            role: Type.Optional(OneOf(['admin', 'developer', 'operator', 'viewer'] as const, { default: 'operator' })),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ ...ClientFields, client_secret: ClientSecret }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      reply.status(201).send(await createClient(rt, principalOf(request), request.body as ClientInput)),
  );
  app.get(
    '/api/v1/integrations/clients/:id',
    {
      schema: {
        ...base,
        summary: 'Read an integration client',
        description: `Extension to the spec's table. Admin role or stronger. The client without any secret (shown only when created or rotated). An unknown client, another realm's or a deleted one is a 404.`,
        params: IdParams,
        response: { 200: ClientRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getClient(rt, principalOf(request), request.params.id),
  );
  app.delete(
    '/api/v1/integrations/clients/:id',
    {
      schema: {
        ...base,
        summary: 'Delete (revoke) an integration client',
        description: `Extension to the spec's table. Admin role or stronger, and only a client whose role the caller could grant (403 otherwise). Deletes the client with its service identity, membership and key pair in one transaction: its secrets (the current one and a previous one still in its overlap window) stop working for \`POST /api/v1/auth/token\` at once (401), and bearer tokens it already holds are refused from its next request on (401; every instance drops its cached key standing). Its name is free again. A second delete, like an unknown client or another realm's, is a 404.`,
        params: IdParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await deleteClient(rt, principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
  app.post(
    '/api/v1/integrations/clients/:id/rotate-secret',
    {
      schema: {
        ...base,
        summary: 'Rotate a client secret with a bounded overlap window',
        description: `Admin role or stronger. Answers a new \`client_secret\` (once). The previous secret keeps working for the token exchange until \`previous_secret_expires_at\`: \`overlap_seconds\` after the rotation (default ${DEFAULT_OVERLAP_SECONDS}, at most ${MAX_OVERLAP_SECONDS} = 7 days; 0 ends it at once), so deployments can switch without downtime; then only the new one works. Rotating again during an overlap ends the older secret at once (never more than two are valid). Bearer tokens already issued keep their own short lifetime. An unknown or foreign client is a 404; a revoked one a 409. ${AUTHENTICATION}`,
        params: IdParams,
        body: Type.Optional(
          Type.Object(
            {
              overlap_seconds: Type.Optional(
                Type.Integer({ minimum: 0, maximum: MAX_OVERLAP_SECONDS, default: DEFAULT_OVERLAP_SECONDS }),
              ),
            },
            { additionalProperties: false },
          ),
        ),
        response: {
          200: Type.Object({ ...ClientFields, client_secret: ClientSecret, overlap_seconds: Type.Integer() }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) => rotateClientSecret(rt, principalOf(request), request.params.id, request.body ?? {}),
  );
}
