import type { App } from '@keel/core';
import { type Static, Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  component,
  IdParams,
  JsonRecord,
  OneOf,
  PageQuery,
  page,
  ref,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
  Uuid,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import {
  createProvider,
  deleteProvider,
  getProvider,
  getTemplate,
  listProviders,
  listTemplates,
  toggleProvider,
  updateProvider,
} from './provider-service.ts';
import { PROVIDER_TEMPLATES } from './provider-templates.ts';

const Price = Type.Number({ minimum: 0, maximum: 1_000_000, description: 'At most 6 decimals' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const ProviderSchema = component(
  'RtProvider',
  Type.Object({
    id: Type.String(),
    realm_id: Type.String(),
    type: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    base_url: Nullable(Type.String()),
    api_key_set: Type.Boolean({ description: 'Whether an api key is stored (the key itself is never returned)' }),
    supports_text: Type.Boolean(),
    supports_image: Type.Boolean(),
    text_model: Nullable(Type.String()),
    image_model: Nullable(Type.String()),
    input_price_per_million: Type.Number(),
    output_price_per_million: Type.Number(),
    image_price: Type.Number(),
    currency: Type.String(),
    is_default: Type.Boolean(),
    is_active: Type.Boolean(),
    settings: JsonRecord(),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);

export const ProviderBodySchema = Type.Object({
  realm_id: Type.Optional(Uuid()),
  type: OneOf(
    PROVIDER_TEMPLATES.map((t) => t.type),
    { description: 'See GET /api/v1/runtime/providers/templates' },
  ),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  api_key: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: 4096, description: 'Write only; PUT keeps it when omitted' })),
  ),
  base_url: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 2048 }))),
  supports_text: Type.Optional(Type.Boolean({ default: true })),
  supports_image: Type.Optional(Type.Boolean({ default: false })),
  text_model: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
  image_model: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
  input_price_per_million: Type.Optional(Price),
  output_price_per_million: Type.Optional(Price),
  image_price: Type.Optional(Price),
  currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', default: 'USD' })),
  is_default: Type.Optional(Type.Boolean({ default: false })),
  is_active: Type.Optional(Type.Boolean({ default: true })),
  settings: Type.Optional(Type.Union([JsonRecord(), Type.Null()])),
});

type Provider = Static<typeof ProviderSchema>;
const ProviderRef = ref<Provider>('RtProvider');
const BodyRef = ProviderBodySchema;
const tags = ['providers'];
const Template = Type.Object({ type: Type.String(), name: Type.String() }, { additionalProperties: true });

export function registerProviderRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags, security: runtimeSecurity };
  app.get(
    '/api/v1/runtime/providers/templates',
    {
      schema: {
        ...base,
        summary: 'Provider templates',
        description: 'Each type with its api key, base URL, capability and settings rules, defaults and presets.',
        response: { 200: Type.Object({ data: Type.Array(Template) }), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async () => listTemplates() as never,
  );
  app.get(
    '/api/v1/runtime/providers/templates/:type',
    {
      schema: {
        ...base,
        summary: 'One provider template',
        params: Type.Object({ type: Type.String({ maxLength: 64 }) }),
        response: { 200: Template, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getTemplate(request.params.type) as never,
  );
  app.get(
    '/api/v1/runtime/providers',
    {
      schema: {
        ...base,
        summary: 'List providers',
        querystring: Type.Object({
          ...PageQuery,
          type: Type.Optional(Type.String({ maxLength: 64 })),
          is_active: Type.Optional(Type.Boolean()),
        }),
        response: { 200: page(ProviderRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listProviders(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    '/api/v1/runtime/providers',
    {
      schema: {
        ...base,
        summary: 'Create a provider',
        description:
          'At least one of supports_text/supports_image; text_model and image_model required with their capability. `api_key` is encrypted at rest (AES-256-GCM) and never returned. `base_url` must be a public https URL (SSRF rules) unless KEEL_ALLOW_PRIVATE_URLS=true. Prices (per million tokens, per image) are exact decimals with at most 6 places. `is_default` makes it the realm default (used by agents without ai_provider_id). Names are unique per realm.',
        body: BodyRef,
        response: { 201: ProviderRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => reply.status(201).send(await createProvider(rt, principalOf(request), request.body)),
  );
  app.get(
    '/api/v1/runtime/providers/:id',
    {
      schema: {
        ...base,
        summary: 'Read a provider',
        params: IdParams,
        response: { 200: ProviderRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getProvider(rt, principalOf(request), request.params.id),
  );
  app.put(
    '/api/v1/runtime/providers/:id',
    {
      schema: {
        ...base,
        summary: 'Replace a provider',
        description:
          'The whole configuration (unsent fields take their defaults) except `api_key`: omitted keeps it, null removes it.',
        params: IdParams,
        body: BodyRef,
        response: { 200: ProviderRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => updateProvider(rt, principalOf(request), request.params.id, request.body),
  );
  app.delete(
    '/api/v1/runtime/providers/:id',
    {
      schema: {
        ...base,
        summary: 'Delete an unused provider',
        description:
          '409 while an agent uses it (directly, or as the realm default for agents without ai_provider_id).',
        params: IdParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await deleteProvider(rt, principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
  app.patch(
    '/api/v1/runtime/providers/:id/toggle',
    {
      schema: {
        ...base,
        summary: 'Activate or deactivate',
        description: 'Sets `is_active`; `{}` flips it. Agents on an inactive provider cannot run (409).',
        params: IdParams,
        body: Type.Object({ is_active: Type.Optional(Type.Boolean()) }),
        response: { 200: ProviderRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => toggleProvider(rt, principalOf(request), request.params.id, request.body.is_active),
  );
}
