import type { App } from '@keel/core';
import type { FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  component,
  IdParams,
  JsonRecord,
  Metadata,
  NullableTimestamp,
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
import { createKnowledge, forgetKnowledge, listKnowledge, searchKnowledge } from './knowledge-service.ts';

const Tag = Type.String({ minLength: 1, maxLength: 64 });
const SubjectId = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9._:@-]+$' });

export const KnowledgeSchema = component(
  'RtKnowledge',
  Type.Object({
    id: Type.String(),
    realm_id: Type.String(),
    scope: Type.String({ description: 'realm, agent, session or user' }),
    agent_id: Type.Union([Type.String(), Type.Null()]),
    session_id: Type.Union([Type.String(), Type.Null()]),
    user_id: Type.Union([Type.String(), Type.Null()]),
    title: Type.Union([Type.String(), Type.Null()]),
    content: Type.String(),
    tags: Type.Array(Type.String()),
    provenance: Type.Object({
      source: JsonRecord(),
      created_by: Type.String(),
      created_at: Timestamp,
      content_sha256: Type.String(),
      confidence: Type.Union([Type.Number(), Type.Null()]),
    }),
    metadata: Metadata,
    expires_at: NullableTimestamp,
    score: Type.Optional(Type.Number()),
    matched_terms: Type.Optional(Type.Array(Type.String())),
  }),
);

type Knowledge = Static<typeof KnowledgeSchema>;
const ResumeHeaders = Type.Object({
  'x-resume-token': Type.Optional(Type.String({ maxLength: 256, description: 'For session-scoped items' })),
});
const token = (request: FastifyRequest) => (request.headers as { 'x-resume-token'?: string })['x-resume-token'];

export function registerKnowledgeRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['knowledge'], security: runtimeSecurity };
  const KnowledgeRef = ref<Knowledge>('RtKnowledge');
  app.get(
    '/api/v1/runtime/knowledge',
    {
      schema: {
        ...base,
        summary: 'List knowledge',
        description:
          'Items not forgotten or expired, newest first; session-scoped items only through search with the session.',
        querystring: Type.Object({
          ...PageQuery,
          scope: Type.Optional(OneOf(['realm', 'agent', 'user'])),
          agent_id: Type.Optional(Uuid()),
          user_id: Type.Optional(SubjectId),
          tag: Type.Optional(Tag),
        }),
        response: { 200: page(KnowledgeRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listKnowledge(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    '/api/v1/runtime/knowledge',
    {
      schema: {
        ...base,
        headers: ResumeHeaders,
        summary: 'Create a knowledge item',
        description:
          'With provenance: `source` (type, uri, name, captured_at), the author, the time and a SHA-256 of the content. `scope` realm (default), agent (agent_id), session (session_id + X-Resume-Token) or user (user_id) decides who may retrieve it. Card data, codes, tokens and passwords are rejected (400). Agents retrieve matching items for their turns and cite them in routing diagnostics.',
        body: Type.Object({
          title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          content: Type.String({ minLength: 1, maxLength: 20_000 }),
          scope: Type.Optional(OneOf(['realm', 'agent', 'session', 'user'], { default: 'realm' })),
          agent_id: Type.Optional(Uuid()),
          session_id: Type.Optional(Uuid()),
          user_id: Type.Optional(SubjectId),
          tags: Type.Optional(Type.Array(Tag, { maxItems: 20 })),
          source: Type.Object({
            type: OneOf(['manual', 'document', 'url', 'conversation', 'tool', 'import']),
            uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
            captured_at: Type.Optional(Type.String({ format: 'date-time' })),
          }),
          confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          metadata: Type.Optional(Metadata),
          expires_at: Type.Optional(Type.String({ format: 'date-time' })),
        }),
        response: { 201: KnowledgeRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      reply.status(201).send(await createKnowledge(rt, principalOf(request), request.body as never, token(request))),
  );
  app.post(
    '/api/v1/runtime/knowledge/search',
    {
      schema: {
        ...base,
        headers: ResumeHeaders,
        summary: 'Search allowed knowledge',
        description:
          'Lexical (letters and digits, any term matches; ranked by hits, title hits triple). Realm items plus those of the named agent, user and session (session needs X-Resume-Token).',
        body: Type.Object({
          query: Type.String({ minLength: 1, maxLength: 500 }),
          agent_id: Type.Optional(Uuid()),
          session_id: Type.Optional(Uuid()),
          user_id: Type.Optional(SubjectId),
          tags: Type.Optional(Type.Array(Tag, { maxItems: 20 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
        }),
        response: { 200: Type.Object({ data: Type.Array(KnowledgeRef) }), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => searchKnowledge(rt, principalOf(request), request.body, token(request)),
  );
  app.delete(
    '/api/v1/runtime/knowledge/:id',
    {
      schema: {
        ...base,
        summary: 'Forget a knowledge item',
        description: 'The text is erased at once; provenance (who, when, source, digest) stays as audit evidence.',
        params: IdParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await forgetKnowledge(rt, principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
