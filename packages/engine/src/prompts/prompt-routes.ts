import type { App } from '@keel/core';
import { type Static, Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  component,
  IdParams,
  NullableTimestamp,
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
import { activatePrompt, createPrompt, deletePrompt, getPrompt, listPrompts, updatePrompt } from './prompt-service.ts';
import { VARIABLE_NAME } from './render.ts';

const PromptKey = Type.String({
  minLength: 1,
  maxLength: 120,
  pattern: '^[a-z0-9][a-z0-9._-]*$',
  description: 'Lower-case letters, digits and . _ -; versions of one prompt share it',
});

export const PromptSchema = component(
  'RtPrompt',
  Type.Object({
    id: Type.String(),
    realm_id: Type.String(),
    key: Type.String(),
    version: Type.Integer(),
    name: Type.String(),
    content: Type.String(),
    variables: Type.Array(Type.String()),
    is_active: Type.Boolean(),
    activated_at: NullableTimestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);

export const PromptBodySchema = Type.Object({
  realm_id: Type.Optional(Uuid()),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  key: PromptKey,
  content: Type.String({ minLength: 1, maxLength: 100_000, description: 'Text with `{{ variable }}` placeholders' }),
  variables: Type.Optional(
    Type.Array(Type.String({ pattern: VARIABLE_NAME }), { maxItems: 50, description: 'Every placeholder used' }),
  ),
  is_active: Type.Optional(Type.Boolean({ default: false })),
});

type Prompt = Static<typeof PromptSchema>;
const PromptRef = ref<Prompt>('RtPrompt');
const BodyRef = PromptBodySchema;

export function registerPromptRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['prompts'], security: runtimeSecurity };
  app.get(
    '/api/v1/runtime/prompts',
    {
      schema: {
        ...base,
        summary: 'List prompt versions',
        querystring: Type.Object({
          ...PageQuery,
          key: Type.Optional(PromptKey),
          is_active: Type.Optional(Type.Boolean()),
        }),
        response: { 200: page(PromptRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listPrompts(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    '/api/v1/runtime/prompts',
    {
      schema: {
        ...base,
        summary: 'Create a prompt version',
        description:
          'A new version of `key` (1, 2, …), inactive unless `is_active`. Every `{{ name }}` placeholder must be declared in `variables`; at run time values come from the execute `metadata.variables`, the session state and the user context (plain text, one pass, control characters removed, at most 2,000 characters each). An agent referencing any version of a key runs its active version.',
        body: BodyRef,
        response: { 201: PromptRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => reply.status(201).send(await createPrompt(rt, principalOf(request), request.body)),
  );
  app.get(
    '/api/v1/runtime/prompts/:id',
    {
      schema: {
        ...base,
        summary: 'Read a prompt version',
        params: IdParams,
        response: { 200: PromptRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getPrompt(rt, principalOf(request), request.params.id),
  );
  app.put(
    '/api/v1/runtime/prompts/:id',
    {
      schema: {
        ...base,
        summary: 'Update a prompt version',
        description:
          'The name always; content and variables only while the version has never been active (409 otherwise: create a new version). `key` cannot change. `is_active: true` activates; false deactivates unless agents run it.',
        params: IdParams,
        body: BodyRef,
        response: { 200: PromptRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => updatePrompt(rt, principalOf(request), request.params.id, request.body),
  );
  app.delete(
    '/api/v1/runtime/prompts/:id',
    {
      schema: {
        ...base,
        summary: 'Delete an unused prompt version',
        description: '409 while an agent references the version, or it is the active version of a key agents run.',
        params: IdParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await deletePrompt(rt, principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
  app.post(
    '/api/v1/runtime/prompts/:id/activate',
    {
      schema: {
        ...base,
        summary: 'Activate a prompt version',
        description:
          'It becomes the active version of its key; the previous one is deactivated in the same transaction.',
        params: IdParams,
        response: { 200: PromptRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => activatePrompt(rt, principalOf(request), request.params.id),
  );
}
