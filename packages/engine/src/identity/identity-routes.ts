import type { App } from '@keel/core';
import { type Static, Type } from 'typebox';
import { ErrorSchema } from '../http/schemas.ts';
import {
  IdParams,
  NullableTimestamp,
  OneOf,
  PageQuery,
  page,
  ref,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Uuid,
} from '../runtime/http-schemas.ts';
import { checkJson } from '../runtime/json-bounds.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import type { CredentialsSchema, IdentitySchema, KeySchema, RealmSchema } from './identity-schemas.ts';
import { IdentityCreateBody, MemberBody, ThemeSchema, Username, UserUpdateBody } from './identity-schemas.ts';
import {
  addMember,
  createKeysForCaller,
  createRealm,
  createRealmIdentity,
  deleteUser,
  exchangeToken,
  getMembers,
  getTheme,
  getUser,
  listCallerKeys,
  putTheme,
  register,
  revokeCallerKey,
  updateUser,
  whoAmI,
} from './identity-service.ts';
import { principalOf } from './runtime-auth.ts';

type Realm = Static<typeof RealmSchema>;
type Identity = Static<typeof IdentitySchema>;
type Credentials = Static<typeof CredentialsSchema>;
type Key = Static<typeof KeySchema>;
type UserUpdate = Static<typeof UserUpdateBody>;

const tags = ['identity'];
const realmTags = ['realms'];
const publicErrors = {
  400: ErrorSchema,
  401: ErrorSchema,
  403: ErrorSchema,
  409: ErrorSchema,
  415: ErrorSchema,
  429: ErrorSchema,
};
const IdentityRef = ref<Identity>('RtIdentity');
const CredentialsRef = ref<Credentials>('RtCredentials');
const IdentityWithCredentials = Type.Object({
  identity: IdentityRef,
  credentials: Type.Union([CredentialsRef, Type.Null()]),
});
const ThemeView = Type.Object({ realm_id: Type.String(), theme: ThemeSchema, updated_at: NullableTimestamp });

export function registerIdentityRoutes(app: App, rt: RuntimeContext): void {
  app.post(
    '/api/v1/auth/register',
    {
      schema: {
        tags,
        summary: 'Register an identity (when enabled)',
        description:
          'Open only when ENGINE_REGISTRATION_ENABLED=true (403 otherwise). Creates an identity, a realm it owns when `realm_name` is sent, and its first key pair (shown once). Without a realm the identity can create realms or be added to one.',
        security: [],
        body: Type.Object({
          username: Username,
          user_type: Type.Optional(OneOf(['user', 'service'], { default: 'user' })),
          realm_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        }),
        response: {
          201: Type.Object({
            user: IdentityRef,
            realm: Type.Union([ref<Realm>('RtRealm'), Type.Null()]),
            credentials: CredentialsRef,
          }),
          ...publicErrors,
        },
      },
    },
    async (request, reply) => reply.status(201).send(await register(rt, request.body)),
  );

  app.post(
    '/api/v1/auth/token',
    {
      schema: {
        tags,
        summary: 'Exchange a key pair for a bearer token',
        description: `Returns a signed bearer token (JWT, HS256) for the key pair's identity and realm, valid \`expires_in\` seconds (ENGINE_TOKEN_TTL_SECONDS, default 900). Send it as \`Authorization: Bearer <token>\`; exchange again after expiry or a 401. Unknown, revoked or expired pairs and disabled identities get 401.`,
        security: [],
        body: Type.Object({
          access_key: Type.String({ minLength: 1, maxLength: 128 }),
          secret_key: Type.String({ minLength: 1, maxLength: 256 }),
        }),
        response: {
          200: Type.Object({
            access_token: Type.String(),
            expires_in: Type.Integer({ description: 'Seconds' }),
            token_type: Type.Literal('Bearer'),
            user_id: Type.String(),
            realm_id: Type.Union([Type.String(), Type.Null()]),
            user_type: Type.String(),
          }),
          ...publicErrors,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return exchangeToken(rt, request.body.access_key, request.body.secret_key);
    },
  );

  app.get(
    '/api/v1/auth/is-authenticated',
    {
      schema: {
        tags,
        summary: 'Validate the token; identity context',
        security: runtimeSecurity,
        response: {
          200: Type.Object({
            authenticated: Type.Literal(true),
            user_id: Type.String(),
            username: Type.String(),
            user_type: Type.String(),
            display_name: Type.Union([Type.String(), Type.Null()]),
            realm_id: Type.Union([Type.String(), Type.Null()]),
            role: Type.Union([Type.String(), Type.Null()]),
            key_id: Type.String(),
            expires_at: Type.String({ format: 'date-time' }),
          }),
          401: ErrorSchema,
        },
      },
      config: runtimeConfig,
    },
    async (request) => whoAmI(rt, principalOf(request)),
  );

  app.post(
    '/api/v1/auth/keys',
    {
      schema: {
        tags,
        summary: 'Create a key pair for the caller',
        description:
          "For the token's realm, or `realm_id` of another realm the caller is a member of. The secret is shown once. At most 20 pairs per identity that are not revoked.",
        security: runtimeSecurity,
        body: Type.Object({
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          realm_id: Type.Optional(Uuid()),
          expires_at: Type.Optional(Type.String({ format: 'date-time' })),
        }),
        response: { 201: CredentialsRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => reply.status(201).send(await createKeysForCaller(rt, principalOf(request), request.body)),
  );

  app.get(
    '/api/v1/auth/keys',
    {
      schema: {
        tags,
        summary: "The caller's key pairs (secrets never shown)",
        security: runtimeSecurity,
        response: { 200: Type.Object({ data: Type.Array(ref<Key>('RtKey')) }), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listCallerKeys(rt, principalOf(request)),
  );

  app.delete(
    '/api/v1/auth/keys/:id',
    {
      schema: {
        tags,
        summary: 'Revoke one of the caller key pairs',
        description: 'Tokens already issued for the pair stop working at once.',
        security: runtimeSecurity,
        params: IdParams,
        response: { 200: ref<Key>('RtKey'), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => revokeCallerKey(rt, principalOf(request), request.params.id.toLowerCase()),
  );

  const userSchema = (summary: string, description: string, body?: typeof UserUpdateBody) => ({
    schema: {
      tags,
      summary,
      description,
      security: runtimeSecurity,
      params: IdParams,
      ...(body ? { body } : {}),
      response: { 200: IdentityRef, ...runtimeErrors },
    },
    config: runtimeConfig,
  });
  const update =
    'The caller itself (display_name, metadata), or with an admin role an identity of the realm (also status).';
  app.get(
    '/api/v1/users/:id',
    userSchema('Read an identity', 'Itself or a member of the token realm; others are 404.'),
    async (request) => getUser(rt, principalOf(request), request.params.id),
  );
  app.put(
    '/api/v1/users/:id',
    userSchema('Replace an identity', `${update} Omitted fields are cleared.`, UserUpdateBody),
    async (request) => updateUser(rt, principalOf(request), request.params.id, request.body as UserUpdate, true),
  );
  app.patch(
    '/api/v1/users/:id',
    userSchema('Update an identity', `${update} Only sent fields change.`, UserUpdateBody),
    async (request) => updateUser(rt, principalOf(request), request.params.id, request.body as UserUpdate, false),
  );
  app.post(
    '/api/v1/users/:id',
    userSchema('Update an identity (as PATCH)', `Same as PATCH, for clients without PATCH. ${update}`, UserUpdateBody),
    async (request) => updateUser(rt, principalOf(request), request.params.id, request.body as UserUpdate, false),
  );
  app.delete(
    '/api/v1/users/:id',
    {
      schema: {
        tags,
        summary: 'Delete an identity',
        description:
          'Agent and service identities of the realm (and users whose home realm it is) are deleted with their keys; a user from another realm is removed from this one and its keys for it revoked. A caller may delete itself. The last owner of a realm stays (409).',
        security: runtimeSecurity,
        params: IdParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await deleteUser(rt, principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/v1/realms',
    {
      schema: {
        tags: realmTags,
        summary: 'Create a realm',
        description:
          'The caller (a user or service identity) becomes its owner. Use POST /api/v1/auth/keys with `realm_id` for a key pair in the new realm.',
        security: runtimeSecurity,
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) }),
        response: { 201: ref<Realm>('RtRealm'), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => reply.status(201).send(await createRealm(rt, principalOf(request), request.body)),
  );

  app.get(
    '/api/v1/realms/:id/members',
    {
      schema: {
        tags: realmTags,
        summary: 'List members',
        description: 'The path realm must be the token realm (any other id is 404).',
        security: runtimeSecurity,
        params: IdParams,
        querystring: Type.Object(PageQuery),
        response: { 200: page(IdentityRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      getMembers(rt, principalOf(request), request.params.id, request.query.limit ?? 20, request.query.cursor),
  );

  app.post(
    '/api/v1/realms/:id/members',
    {
      schema: {
        tags: realmTags,
        summary: 'Add a member or change its role',
        description:
          'By `identity_id` or user `username`. Roles: owner, admin, developer, operator, viewer; a caller grants at most its own role. The last owner keeps its role.',
        security: runtimeSecurity,
        params: IdParams,
        body: MemberBody,
        response: { 200: IdentityRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => addMember(rt, principalOf(request), request.params.id, request.body),
  );

  const identityRoute = (path: string, userType: 'agent' | 'service', summary: string, description: string) =>
    app.post(
      path,
      {
        schema: {
          tags: realmTags,
          summary,
          description,
          security: runtimeSecurity,
          params: IdParams,
          body: IdentityCreateBody,
          response: { 201: IdentityWithCredentials, ...runtimeErrors },
        },
        config: runtimeConfig,
      },
      async (request, reply) => {
        checkJson(request.body.metadata, 'metadata');
        return reply
          .status(201)
          .send(await createRealmIdentity(rt, principalOf(request), request.params.id, userType, request.body));
      },
    );
  identityRoute(
    '/api/v1/realms/:id/agents',
    'agent',
    'Create an agent identity',
    'The agent id is the id under /api/v1/runtime/agents/{agentId}. Role default operator; no key pair unless `issue_credentials`.',
  );
  identityRoute(
    '/api/v1/realms/:id/services',
    'service',
    'Create a service identity',
    'For backend-to-backend integrations; returns its first key pair. Role default operator.',
  );
  identityRoute(
    '/api/v1/realms/:id/identities/services',
    'service',
    'Create a backend service identity',
    'Same as POST /realms/{id}/services (body `{username}` at least).',
  );

  app.get(
    '/api/v1/realms/:id/theme',
    {
      schema: {
        tags: realmTags,
        summary: 'Read the presentation configuration',
        security: runtimeSecurity,
        params: IdParams,
        response: { 200: ThemeView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => (await getTheme(rt, principalOf(request), request.params.id)) as never,
  );
  app.put(
    '/api/v1/realms/:id/theme',
    {
      schema: {
        tags: realmTags,
        summary: 'Replace the presentation configuration',
        description: 'Unsent fields take their defaults.',
        security: runtimeSecurity,
        params: IdParams,
        body: ThemeSchema,
        response: { 200: ThemeView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      (await putTheme(rt, principalOf(request), request.params.id, request.body as Record<string, unknown>)) as never,
  );
}
