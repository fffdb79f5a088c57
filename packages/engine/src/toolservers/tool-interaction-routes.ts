import type { App } from '@keel/core';
import { Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  OneOf,
  PageQuery,
  page,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
  Uuid,
} from '../runtime/http-schemas.ts';
import {
  ELICITATION_MODES,
  getInteractionPolicy,
  listInteractions,
  POLICY_BOUNDS,
  putInteractionPolicy,
} from './tool-interaction-service.ts';
import type { ToolRuntime } from './tool-runtime.ts';

const base = { tags: ['tool-servers'], security: runtimeSecurity };
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const bounded = ([minimum, maximum, fallback]: readonly [number, number, number], description: string) =>
  Type.Integer({ minimum, maximum, description: `${description} (default ${fallback})` });

const SamplingFields = {
  enabled: Type.Boolean({ description: 'Serve `sampling/createMessage` requests (default false)' }),
  provider_id: Type.Union([Uuid(), Type.Null()], {
    description: "The realm's provider that answers; null = the realm's default provider",
  }),
  max_requests_per_call: bounded(POLICY_BOUNDS.sampling.max_requests_per_call, 'Requests served per tool call'),
  max_tokens_per_request: bounded(
    POLICY_BOUNDS.sampling.max_tokens_per_request,
    "Output tokens per request (caps the server's maxTokens)",
  ),
  max_tokens_per_call: bounded(POLICY_BOUNDS.sampling.max_tokens_per_call, 'Tokens (input + output) per tool call'),
  max_requests_per_window: bounded(POLICY_BOUNDS.sampling.max_requests_per_window, 'Requests per realm and window'),
  max_tokens_per_window: bounded(POLICY_BOUNDS.sampling.max_tokens_per_window, 'Tokens per realm and window'),
};
const ElicitationFields = {
  mode: OneOf(ELICITATION_MODES, {
    description:
      '`off` (refused, the default), `decline` (answered `{action: "decline"}`), `session_context` (accepted with the values of the session\'s tool context when every required field is there and fits, else declined)',
  }),
  max_requests_per_call: bounded(POLICY_BOUNDS.elicitation.max_requests_per_call, 'Requests answered per tool call'),
  max_requests_per_window: bounded(POLICY_BOUNDS.elicitation.max_requests_per_window, 'Requests per realm and window'),
};
const WindowSeconds = bounded(POLICY_BOUNDS.window_seconds, 'The sliding window of the realm budgets, in seconds');

const Policy = Type.Object({
  sampling: Type.Object(SamplingFields),
  elicitation: Type.Object(ElicitationFields),
  window_seconds: WindowSeconds,
  updated_at: Type.Union([Timestamp, Type.Null()], { description: 'null while the realm has never set a policy' }),
});

const partial = <T extends Record<string, ReturnType<typeof Type.Boolean>>>(fields: T) =>
  Type.Object(
    Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as {
      [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>>;
    },
    { additionalProperties: false },
  );

const PolicyBody = Type.Object(
  {
    sampling: Type.Optional(partial(SamplingFields as never)),
    elicitation: Type.Optional(partial(ElicitationFields as never)),
    window_seconds: Type.Optional(WindowSeconds),
  },
  {
    additionalProperties: false,
    examples: [
      {
        sampling: { enabled: true, max_requests_per_call: 2, max_tokens_per_request: 512 },
        elicitation: { mode: 'session_context' },
      },
    ],
  },
);

const Interaction = Type.Object({
  id: Uuid(),
  kind: OneOf(['sampling', 'elicitation'] as const),
  mcp_server_id: Uuid({ description: 'The server that asked' }),
  tool_name: Nullable(Type.String({ description: 'The tool call it came during (null: none attributable)' })),
  session_id: Type.Union([Uuid(), Type.Null()]),
  trace_id: Nullable(Type.String({ description: 'The x-request-id of the tool call' })),
  outcome: OneOf(['pending', 'served', 'accepted', 'declined', 'refused', 'failed'] as const, {
    description: '`pending` only while a sampling request is under way',
  }),
  reason: Nullable(
    Type.String({
      description:
        'Why refused or declined: POLICY_OFF, NO_TOOL_CALL, USER_NOT_PRESENT, CALL_BUDGET_EXHAUSTED, WINDOW_BUDGET_EXHAUSTED, CALL_ENDED, NO_PROVIDER, UNSUPPORTED_CONTENT, REQUEST_TOO_LARGE, INVALID_REQUEST, MODEL_CALL_FAILED, POLICY_DECLINE, NOT_IN_CONTEXT; `fields:<n>` for an accepted elicitation',
    }),
  ),
  provider_id: Type.Union([Uuid(), Type.Null()]),
  tokens_reserved: Type.Integer({ description: 'Output tokens reserved against the budgets while served' }),
  input_tokens: Type.Union([Type.Integer(), Type.Null()]),
  output_tokens: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Timestamp,
});

const POLICY_DOC = `MCP servers may send \`sampling/createMessage\` and \`elicitation/create\` requests while the engine calls one of
their tools (the engine's client declares both capabilities; whether a request is served is this policy at that moment).
Both are off by default: a request is refused with JSON-RPC error -1 and a readable message, and audited, unless the policy
enables its kind, the request belongs to exactly one tool call under way (on streamable HTTP the request travels on that
call's own stream; on a shared SSE stream it is attributed only while one call is under way on the connection), that call
was made in a session (\`session_id\`: a user is present — direct developer calls, proxies and flows without a session are
refused), and the budgets have room: requests and tokens per tool call, and per realm within \`window_seconds\` (shared by
all instances: counted from the audit records, the request reserved before it is served so concurrent requests never overrun
it). Sampling goes through the realm's provider (\`provider_id\`, else the default), text messages only, at most 64 Ki
characters, output tokens capped by \`max_tokens_per_request\`, within the tool call's deadline; the answer is
\`{role: "assistant", content: {type: "text"}, model, stopReason: "endTurn"}\`. Elicitation is never forwarded to the
caller (REST and the public tool endpoint answer in one response): \`decline\` answers decline; \`session_context\` answers
accept with the values of the session's tool context (\`PUT /api/v1/runtime/mcp/sessions/{sessionId}/context\`) for the
form's fields when every required field is present and fits its type, enum and bounds, else decline; URL-mode elicitation is
declined. Every request leaves one audit record (\`GET /api/v1/runtime/mcp/interactions\`; at most 25 per tool call) with ids,
outcome, reason and token counts — never the messages, the answer or elicited values.`;

export function registerToolInteractionRoutes(app: App, tools: ToolRuntime): void {
  app.get(
    '/api/v1/runtime/mcp/interaction-policy',
    {
      schema: {
        ...base,
        summary: "The realm's sampling and elicitation policy",
        description: `${POLICY_DOC} Readable by every role of the realm.`,
        response: { 200: Policy, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getInteractionPolicy(tools, principalOf(request)),
  );
  app.put(
    '/api/v1/runtime/mcp/interaction-policy',
    {
      schema: {
        ...base,
        summary: 'Set the sampling and elicitation policy',
        description: `${POLICY_DOC} Owner or admin only (it lets servers spend model tokens and read session context). Fields left
out keep their value; \`max_tokens_per_request\` must not exceed \`max_tokens_per_call\` (400); an unknown or foreign
\`provider_id\` is a 404. Takes effect on the next request, on every instance.`,
        body: PolicyBody,
        response: { 200: Policy, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => putInteractionPolicy(tools, principalOf(request), request.body as never),
  );
  app.get(
    '/api/v1/runtime/mcp/interactions',
    {
      schema: {
        ...base,
        summary: 'Audit of sampling and elicitation requests',
        description:
          'Newest first (core cursor). Filters: `kind`, `mcp_server_id`, `session_id`. Ids, outcome, reason and token counts only.',
        querystring: Type.Object({
          ...PageQuery,
          kind: Type.Optional(OneOf(['sampling', 'elicitation'] as const)),
          mcp_server_id: Type.Optional(Uuid()),
          session_id: Type.Optional(Uuid()),
        }),
        response: { 200: page(Interaction), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listInteractions(tools, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
}
