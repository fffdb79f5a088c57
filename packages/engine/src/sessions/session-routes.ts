import type { App } from '@keel/core';
import type { FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  component,
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
import {
  forgetState,
  getState,
  getUserContext,
  listMessages,
  postMessage,
  putState,
  putUserContext,
  summarizeSession,
} from './session-data-service.ts';
import {
  createSession,
  deleteSession,
  endSession,
  getSession,
  getSessionStatus,
  listSessions,
  recoverResumeToken,
  refreshResumeToken,
  resetSession,
  updateSession,
} from './session-service.ts';

export const SessionSchema = component(
  'RtSession',
  Type.Object({
    session_id: Type.String(),
    realm_id: Type.String(),
    agent_id: Type.String(),
    flow_id: Type.Union([Type.String(), Type.Null()], { description: 'Pinned flow' }),
    subject_type: Type.String({ description: 'anonymous, external or user' }),
    subject_id: Type.String(),
    channel: Type.Union([Type.String(), Type.Null()]),
    status: Type.String({ description: 'active, expired, completed or cancelled' }),
    label: Type.Union([Type.String(), Type.Null()]),
    metadata: Metadata,
    transcript_retention: Type.Boolean(),
    ttl_seconds: Type.Integer(),
    expires_at: Timestamp,
    message_count: Type.Integer(),
    summary: Type.Union([Type.String(), Type.Null()]),
    summary_updated_at: NullableTimestamp,
    created_by: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
    ended_at: NullableTimestamp,
  }),
);

export const TokenGrant = component(
  'RtResumeGrant',
  Type.Object({
    session_id: Type.String(),
    resume_token: Type.String({ description: 'Shown once; keep it in protected server-side state' }),
    expires_at: Timestamp,
  }),
);

export const MessageSchema = component(
  'RtMessage',
  Type.Object({
    id: Type.String(),
    session_id: Type.String(),
    seq: Type.Integer(),
    role: Type.String(),
    content: Type.String(),
    execution_id: Type.Union([Type.String(), Type.Null()]),
    action_type: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  }),
);

type Session = Static<typeof SessionSchema>;
type Grant = Static<typeof TokenGrant>;
type Message = Static<typeof MessageSchema>;
const SessionRef = ref<Session>('RtSession');
const GrantRef = ref<Grant>('RtResumeGrant');

const Channel = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._:-]+$' });
const Ttl = Type.Integer({ minimum: 60, maximum: 2_592_000, description: 'Seconds (60 s to 30 days); sliding' });
const ResumeHeaders = Type.Object({
  'x-resume-token': Type.Optional(Type.String({ maxLength: 256, description: "The session's resume token" })),
});
const SessionParams = Type.Object({ sessionId: Uuid() });
const StateValues = JsonRecord({ minProperties: 1, maxProperties: 50 });

const token = (request: FastifyRequest) => (request.headers as { 'x-resume-token'?: string })['x-resume-token'];

/** The body of POST /api/v1/runtime/sessions (also a bounded schema of the client contract). */
export const SessionCreateBody = Type.Object({
  agent_id: Uuid(),
  flow_id: Type.Optional(Uuid()),
  subject_type: Type.Optional(OneOf(['anonymous', 'external', 'user'], { default: 'anonymous' })),
  subject_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9._:@-]+$' })),
  channel: Type.Optional(Channel),
  ttl_seconds: Type.Optional(Ttl),
  metadata: Type.Optional(Metadata),
  transcript_retention: Type.Optional(Type.Boolean({ default: false })),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});

export function registerSessionRoutes(app: App, rt: RuntimeContext): void {
  const tags = ['sessions'];
  const base = { tags, security: runtimeSecurity };
  const withSession = { ...base, params: SessionParams, headers: ResumeHeaders };
  const bound =
    ' Needs the resume token (X-Resume-Token) unless the caller is the subject user; a session id alone authorizes nothing.';

  app.get(
    '/api/v1/runtime/sessions',
    {
      schema: {
        ...base,
        summary: 'List sessions',
        description: 'Metadata only (no transcript, no resume tokens), newest first.',
        querystring: Type.Object({
          ...PageQuery,
          agent_id: Type.Optional(Uuid()),
          status: Type.Optional(OneOf(['active', 'expired', 'completed', 'cancelled'])),
          subject_type: Type.Optional(OneOf(['anonymous', 'external', 'user'])),
          channel: Type.Optional(Channel),
        }),
        response: { 200: page(SessionRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listSessions(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );

  app.post(
    '/api/v1/runtime/sessions',
    {
      schema: {
        ...base,
        summary: 'Create a session',
        description:
          'subject_type anonymous (default; subject_id generated), external (subject_id = your customer id) or user (subject_id = a user identity of the realm). The resume token is shown once and stored as SHA-256; a retried create makes a new session. ttl_seconds default ENGINE_SESSION_TTL_SECONDS (86400), sliding with each turn. transcript_retention false (default): messages are deleted when the session completes or is cancelled.',
        body: SessionCreateBody,
        response: {
          201: Type.Object({
            session_id: Type.String(),
            resume_token: Type.String(),
            expires_at: Timestamp,
            session: SessionRef,
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return reply.status(201).send(await createSession(rt, principalOf(request), request.body));
    },
  );

  app.get(
    '/api/v1/runtime/sessions/:sessionId',
    {
      schema: {
        ...withSession,
        summary: 'Read a session',
        description: bound.trim(),
        response: { 200: SessionRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getSession(rt, principalOf(request), request.params.sessionId, token(request)),
  );

  const UpdateBody = Type.Object({
    label: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
    metadata: Type.Optional(Metadata),
    channel: Type.Optional(Type.Union([Channel, Type.Null()])),
    ttl_seconds: Type.Optional(Ttl),
    transcript_retention: Type.Optional(Type.Boolean()),
  });
  for (const method of ['put', 'patch'] as const)
    app[method](
      '/api/v1/runtime/sessions/:sessionId',
      {
        schema: {
          ...withSession,
          summary: method === 'put' ? 'Replace session settings' : 'Update session settings',
          description: `${method === 'put' ? 'Unsent fields are cleared or take defaults.' : 'Only sent fields change.'} A new ttl_seconds restarts the expiry from now. Active sessions only.${bound}`,
          body: UpdateBody,
          response: { 200: SessionRef, ...runtimeErrors },
        },
        config: runtimeConfig,
      },
      async (request) =>
        updateSession(
          rt,
          principalOf(request),
          request.params.sessionId,
          token(request),
          request.body,
          method === 'put',
        ),
    );

  app.delete(
    '/api/v1/runtime/sessions/:sessionId',
    {
      schema: {
        ...withSession,
        summary: 'Delete a session',
        description: `Deletes the session, its messages and state values and forgets its session-scoped knowledge (audit trails stay). Resume token, the subject user, or a realm admin (erasure).`,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await deleteSession(rt, principalOf(request), request.params.sessionId, token(request));
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/api/v1/runtime/sessions/:sessionId/messages',
    {
      schema: {
        ...withSession,
        summary: 'List messages',
        description: `Oldest first; \`cursor\` is the last seq seen.${bound}`,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          cursor: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
        }),
        response: { 200: page(ref<Message>('RtMessage')), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listMessages(rt, principalOf(request), request.params.sessionId, token(request), {
        limit: request.query.limit ?? 50,
        after: request.query.cursor,
      }),
  );

  app.post(
    '/api/v1/runtime/sessions/:sessionId/messages',
    {
      schema: {
        ...withSession,
        summary: 'Append a message',
        description: `Without running the agent (e.g. a human agent's reply). The same sensitive-data rules as chat apply. At most 1,000 messages per session.${bound}`,
        body: Type.Object({
          role: OneOf(['user', 'assistant']),
          content: Type.String({ minLength: 1, maxLength: 16_000 }),
        }),
        response: { 201: ref<Message>('RtMessage'), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await postMessage(rt, principalOf(request), request.params.sessionId, token(request), request.body)),
  );

  for (const [action, status] of [
    ['complete', 'completed'],
    ['cancel', 'cancelled'],
  ] as const)
    app.post(
      `/api/v1/runtime/sessions/:sessionId/${action}`,
      {
        schema: {
          ...withSession,
          summary: action === 'complete' ? 'Complete a session' : 'Cancel a session',
          description: `Active → ${status} (409 otherwise). Without transcript_retention the messages are deleted.${bound}`,
          response: { 200: SessionRef, ...runtimeErrors },
        },
        config: runtimeConfig,
      },
      async (request) => endSession(rt, principalOf(request), request.params.sessionId, token(request), status),
    );

  app.post(
    '/api/v1/runtime/sessions/:sessionId/reset',
    {
      schema: {
        ...withSession,
        summary: 'Clear the pinned flow',
        description: `The next turn makes a new routing decision.${bound}`,
        response: { 200: SessionRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => resetSession(rt, principalOf(request), request.params.sessionId, token(request)),
  );

  app.post(
    '/api/v1/runtime/sessions/:sessionId/resume-token/refresh',
    {
      schema: {
        ...base,
        params: SessionParams,
        summary: 'Rotate the resume token',
        description:
          'Needs the current token; the old one stops working at once and the expiry restarts. May set the chat label or metadata. Active sessions only.',
        body: Type.Object({
          resume_token: Type.String({ minLength: 1, maxLength: 256 }),
          label: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
          metadata: Type.Optional(Metadata),
        }),
        response: { 200: GrantRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return refreshResumeToken(rt, principalOf(request), request.params.sessionId, request.body);
    },
  );

  app.post(
    '/api/v1/runtime/sessions/:sessionId/resume-token/recover',
    {
      schema: {
        ...base,
        params: SessionParams,
        summary: 'Service recovery of a resume token',
        description:
          'For service identities (operator role or higher): a new token for an active or expired session, which becomes active again for its TTL. Completed and cancelled sessions: 409.',
        response: { 200: GrantRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return recoverResumeToken(rt, principalOf(request), request.params.sessionId);
    },
  );

  app.get(
    '/api/v1/runtime/sessions/:sessionId/status',
    {
      schema: {
        ...base,
        params: SessionParams,
        summary: 'Effective state without a resume token',
        response: {
          200: Type.Object({
            session_id: Type.String(),
            status: Type.String(),
            expires_at: Timestamp,
            has_pinned_flow: Type.Boolean(),
            ended_at: NullableTimestamp,
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) => getSessionStatus(rt, principalOf(request), request.params.sessionId),
  );

  const StateView = Type.Object({
    session_id: Type.String(),
    state: Type.Record(
      Type.String(),
      Type.Object({ type: Type.String(), value: Type.Unknown(), version: Type.Integer(), updated_at: Timestamp }),
    ),
  });
  app.get(
    '/api/v1/runtime/sessions/:sessionId/state',
    {
      schema: {
        ...withSession,
        summary: 'Read typed state',
        description: bound.trim(),
        response: { 200: StateView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getState(rt, principalOf(request), request.params.sessionId, token(request)),
  );
  app.put(
    '/api/v1/runtime/sessions/:sessionId/state',
    {
      schema: {
        ...withSession,
        summary: 'Upsert typed state',
        description: `\`state\`: 1 to 50 keys per call (100 per session; keys 1–128 of A-Z a-z 0-9 _ . : -; values ≤ 16 KiB, no null). A key keeps its JSON type (409 on a change: forget it first). Every write is audited.${bound}`,
        body: Type.Object({ state: StateValues }),
        response: { 200: StateView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => {
      return putState(rt, principalOf(request), request.params.sessionId, token(request), request.body.state);
    },
  );
  app.delete(
    '/api/v1/runtime/sessions/:sessionId/state/:key',
    {
      schema: {
        ...withSession,
        params: Type.Object({
          sessionId: Uuid(),
          key: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' }),
        }),
        summary: 'Forget one state value',
        description: `The value is deleted; the audit history keeps the event.${bound}`,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await forgetState(rt, principalOf(request), request.params.sessionId, token(request), request.params.key);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/v1/runtime/sessions/:sessionId/summarize',
    {
      schema: {
        ...withSession,
        summary: 'Bounded summary',
        description: `Written by the agent's provider when possible, else extractive (\`method\`); stored with the session and given to the model in later turns.${bound}`,
        body: Type.Object({
          max_length: Type.Optional(Type.Integer({ minimum: 100, maximum: 4000, default: 1000 })),
        }),
        response: {
          200: Type.Object({
            session_id: Type.String(),
            summary: Type.String(),
            method: Type.String(),
            message_count: Type.Integer(),
            updated_at: Timestamp,
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) =>
      summarizeSession(
        rt,
        principalOf(request),
        request.params.sessionId,
        token(request),
        request.body.max_length ?? 1000,
      ),
  );

  const ContextView = Type.Object({
    user_id: Type.String(),
    context: JsonRecord(),
    version: Type.Integer(),
    updated_at: NullableTimestamp,
  });
  const UserParams = Type.Object({
    userId: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9._:@-]+$' }),
  });
  app.get(
    '/api/v1/runtime/users/:userId/context',
    {
      schema: {
        ...base,
        params: UserParams,
        summary: 'Read user context',
        description: 'Per realm, keyed by a user identity id or an external subject id; `{}` until written.',
        response: { 200: ContextView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getUserContext(rt, principalOf(request), request.params.userId),
  );
  app.put(
    '/api/v1/runtime/users/:userId/context',
    {
      schema: {
        ...base,
        params: UserParams,
        summary: 'Replace user context',
        description: 'Preferences and profile hints (≤ 16 KiB, 8 levels); no credentials or payment data (400).',
        body: Type.Object({ context: JsonRecord() }),
        response: { 200: ContextView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => putUserContext(rt, principalOf(request), request.params.userId, request.body.context),
  );
}
