import { type App, sendIdempotent } from '@keel/core';
import { type Static, Type } from 'typebox';
import { ExecutionCreateBody } from '../executions/execution-routes.ts';
import { principalOf } from '../identity/runtime-auth.ts';
import { SessionCreateBody } from '../sessions/session-routes.ts';
import { ACTION_TYPES } from './actions.ts';
import {
  component,
  JsonRecord,
  Metadata,
  OneOf,
  ref,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
  Uuid,
} from './http-schemas.ts';
import { CONTRACT_VERSION, type QueuedRunResult, type RunRequest, type RunResult, runTurn } from './orchestrator.ts';
import type { RuntimeContext } from './runtime-context.ts';
import { runtimeCapabilities, runtimeStatus, sdkConfig } from './status-service.ts';

const Text = Type.String({ minLength: 1, maxLength: 16_000 });
const Channel = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._:-]+$' });
const Locale = Type.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$' });
const Capabilities = Type.Object(
  {
    vision: Type.Optional(Type.Boolean()),
    actions: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 40 }), {
        maxItems: 30,
        description: 'Actions the client renders; when sent, unsupported product actions are downgraded',
      }),
    ),
  },
  { description: 'Omitted: every action is assumed supported' },
);
const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7E]+$',
  description: 'Same key and body within 24 h replays the first answer (Idempotent-Replayed: true)',
});

export const ChatBody = Type.Object({
  agent_id: Uuid(),
  messages: Type.Array(Type.Object({ role: OneOf(['user', 'assistant']), content: Text }), {
    minItems: 1,
    maxItems: 50,
    description: 'With session_id: only the new turn(s); without: the conversation',
  }),
  session_id: Type.Optional(Uuid()),
  resume_token: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  flow_id: Type.Optional(Uuid()),
  channel: Type.Optional(Channel),
  locale: Type.Optional(Locale),
  client_capabilities: Type.Optional(Capabilities),
  metadata: Type.Optional(Metadata),
  idempotency_key: Type.Optional(IdempotencyKey),
});

export const ExecuteBody = Type.Object({
  version: Type.Optional(
    Type.String({ minLength: 1, maxLength: 40, description: `Pinned contract: ${CONTRACT_VERSION}` }),
  ),
  agent_id: Type.Optional(Uuid()),
  flow_id: Type.Optional(Uuid()),
  session_id: Type.Optional(Uuid()),
  resume_token: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  channel: Type.Optional(Channel),
  locale: Type.Optional(Locale),
  input: Type.Object({ message: Text }),
  client_capabilities: Type.Optional(Capabilities),
  metadata: Type.Optional(Metadata),
  idempotency_key: Type.Optional(IdempotencyKey),
  mode: Type.Optional(OneOf(['sync', 'async'], { default: 'sync' })),
});

export const ActionSchema = component(
  'RtAction',
  Type.Object({
    type: OneOf(ACTION_TYPES),
    content: Type.Union([Type.String(), Type.Null()]),
    data: Type.Union([JsonRecord(), Type.Null()]),
    metadata: JsonRecord({ description: 'original_type after a downgrade' }),
  }),
);

export const RunResultSchema = component(
  'RtRunResult',
  Type.Object({
    version: Type.String(),
    execution_id: Type.String(),
    session_id: Type.Union([Type.String(), Type.Null()]),
    trace_id: Type.String(),
    status: Type.String({ description: 'succeeded, or failed with an ERROR action' }),
    agent_id: Type.String(),
    flow_id: Type.Union([Type.String(), Type.Null()]),
    content: Type.Union([Type.String(), Type.Null()]),
    message: Type.Union([Type.Object({ role: Type.Literal('assistant'), content: Type.String() }), Type.Null()]),
    action: ref<Static<typeof ActionSchema>>('RtAction'),
    data: Type.Union([JsonRecord(), Type.Null()]),
    usage: Type.Union([
      Type.Object({
        input_tokens: Type.Integer(),
        output_tokens: Type.Integer(),
        cost: Type.String({ description: 'Exact decimal in `currency`' }),
        currency: Type.String(),
        cost_limit_exceeded: Type.Boolean(),
      }),
      Type.Null(),
    ]),
    routing: JsonRecord({ description: 'How the agent, flow, provider and prompt were chosen' }),
    created_at: Timestamp,
  }),
);

export const QueuedRunSchema = component(
  'RtQueuedRun',
  Type.Object({
    version: Type.String(),
    execution_id: Type.String({
      description: 'The durable execution: GET /api/v1/runtime/executions/{id}, …/events, …/actions',
    }),
    session_id: Type.Union([Type.String(), Type.Null()]),
    trace_id: Type.String(),
    status: Type.Literal('queued'),
    state: Type.String({ description: 'The execution state when queued (queued)' }),
    agent_id: Type.String(),
    flow_id: Type.String(),
    flow_version: Type.Integer(),
    routing: JsonRecord({
      description: 'How the agent and flow were chosen (flow_routing: candidates, scores, chosen, why)',
    }),
    created_at: Timestamp,
  }),
);

/**
 * The bounded schemas of the client contract: request bodies (every string, array and open object has a bound)
 * and the answers of execute and chat (`RtAction#` in run_result is schemas.action, whose $id it is; queued_run
 * answers a turn that queued a flow execution).
 */
const SDK_SCHEMAS = {
  execute_request: ExecuteBody,
  chat_request: ChatBody,
  session_create_request: SessionCreateBody,
  execution_create_request: ExecutionCreateBody,
  action: ActionSchema,
  run_result: RunResultSchema,
  queued_run: QueuedRunSchema,
};

const FLOW_DOC = `Flows: \`flow_id\` runs that active flow (409 FLOW_NOT_ACTIVE otherwise) and bypasses classification; without it, a session continues its pinned flow (until \`POST /sessions/{id}/reset\` or the flow stops being active), else automatic intent routing over the realm's active flows (routing policy, profiles, canary) picks one, else the agent's \`default_flow_id\`, else the agent answers directly. \`routing.flow_routing\` shows the decision: \`candidates\` with \`score\`, \`eligible\` and \`reason\`, \`chosen\`, \`why\`, \`strategy\` and the canary bucket; a flow run adds \`flow_execution_id\` and \`flow_execution_state\` (an approval step answers APPROVAL_REQUIRED and continues as that durable execution). A flow answering RENDER_PRODUCTS without products follows its \`behavior.unavailable_result\`: \`offer_first\` (default) answers OFFER_PRODUCT_ALTERNATIVES and keeps the offer for the session's next turn, which — when it accepts ("yes", "show me alternatives") — runs the bounded broader query (at most 4 catalog searches, dropping one filter at a time, then trailing words) and answers RENDER_PRODUCT_ALTERNATIVES with \`requested_query\`, \`applied_query\`, \`relaxed_constraints\` and \`products\`; any other answer drops the offer; \`show_immediately\` answers RENDER_PRODUCT_ALTERNATIVES at once; \`disabled\` answers the flow's empty RENDER_PRODUCTS. After products were shown, a later turn of the session without \`flow_id\` that names one by recent ordinal ("the second one", "#2", "the last one"), full name or catalog id answers RENDER_PRODUCT_DETAILS; a detail request with a missing or ambiguous reference answers CLARIFY with the candidate names in \`data.options\`. CHECKOUT_HANDOFF and OPEN_WIDGET keep only opaque references (address, contact and payment fields are removed), and \`client_capabilities.actions\` downgrades apply to every answer.`;

const RUN_DOC = `A \`Server-Timing\` header gives the engine's own time and the time it waited for the model. Card numbers, CVV/CVC, one-time and 3-D Secure codes, payment tokens, raw tokens and API keys, passwords and full postal addresses in the input are rejected (400 RUNTIME_SENSITIVE_DATA_REJECTED, naming the category and path, never the value); answers that would ask for them are replaced. Caller-supplied provider, server or tool ids are ignored: the agent's configuration decides. Continuing a session needs its resume token (or the subject user's own token). Failures of the model provider are 502 (503 when max_latency_ms passes); settings bounds that stop a run (cost) give an ERROR action with status failed. The agent's \`max_concurrency\` bounds its turns in flight (direct or through a flow): with REDIS_URL across every engine instance — each turn holds a slot in Redis, given back when the turn ends however it ends, or, if its instance dies, when the slot's lease (\`max_latency_ms\` + 30 s) runs out; beyond it 429 RUNTIME_CONCURRENCY_LIMIT with \`Retry-After: 1\`. Without REDIS_URL, or while Redis is unreachable, each instance counts its own turns (exact with one instance); a slot Redis does not confirm within 2 s is refused with the same 429.`;

export function registerRuntimeRoutes(app: App, rt: RuntimeContext): void {
  const ResultRef = ref<RunResult>('RtRunResult');
  const respond = async (
    request: Parameters<typeof sendIdempotent>[0],
    reply: Parameters<typeof sendIdempotent>[1],
    run: RunRequest,
  ) => {
    const outcome = await runTurn(rt, principalOf(request), run, request.id);
    // Server-Timing: the engine's own time for the turn and the time it waited for the model.
    const providerMs = outcome.replayed ? 0 : Number(outcome.body.routing.provider_ms ?? 0);
    const engineMs = Math.max(0, reply.elapsedTime - providerMs);
    reply.header(
      'server-timing',
      `engine;dur=${engineMs.toFixed(2)}${outcome.replayed ? '' : `, provider;dur=${providerMs.toFixed(2)}`}`,
    );
    return sendIdempotent(request, reply, outcome);
  };

  app.post(
    '/api/v1/runtime/execute',
    {
      schema: {
        tags: ['runtime'],
        security: runtimeSecurity,
        summary: 'Run one turn synchronously',
        description: `Contract ${CONTRACT_VERSION} (\`version\` omitted = current; any other value is a 400). Agent: \`agent_id\`, else the session's agent, else profile rules, else the realm default. \`mode\` sync (default) answers the turn; \`mode\` async selects the flow the same way and answers 202 with the queued durable execution's id and state (400 RUNTIME_MODE_UNSUPPORTED when no flow is selected); its \`idempotency_key\` replays the same execution. ${FLOW_DOC} ${RUN_DOC}`,
        body: ExecuteBody,
        response: { 200: ResultRef, 202: ref<QueuedRunResult>('RtQueuedRun'), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      const body = request.body;
      return respond(request, reply, {
        kind: 'execute',
        version: body.version,
        agentId: body.agent_id,
        flowId: body.flow_id,
        sessionId: body.session_id,
        resumeToken: body.resume_token,
        channel: body.channel,
        locale: body.locale,
        messages: [{ role: 'user', content: body.input.message }],
        messagePath: () => 'body/input/message',
        clientCapabilities: body.client_capabilities,
        metadata: body.metadata ?? undefined,
        idempotencyKey: body.idempotency_key,
        mode: body.mode,
        payload: body,
      });
    },
  );

  app.post(
    '/api/v1/runtime/ai/chat',
    {
      schema: {
        tags: ['runtime'],
        security: runtimeSecurity,
        summary: 'Message-oriented chat',
        description: `The same resolver and policy as execute; the last message must be the user's. ${FLOW_DOC} ${RUN_DOC}`,
        body: ChatBody,
        response: { 200: ResultRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      const body = request.body;
      return respond(request, reply, {
        kind: 'chat',
        agentId: body.agent_id,
        flowId: body.flow_id,
        sessionId: body.session_id,
        resumeToken: body.resume_token,
        channel: body.channel,
        locale: body.locale,
        messages: body.messages.map((m) => ({ role: m.role, content: m.content })),
        messagePath: (index) => `body/messages/${index}/content`,
        clientCapabilities: body.client_capabilities,
        metadata: body.metadata ?? undefined,
        idempotencyKey: body.idempotency_key,
        payload: body,
      });
    },
  );

  const Loose = JsonRecord();
  app.get(
    '/api/v1/runtime/status',
    {
      schema: {
        tags: ['runtime'],
        security: runtimeSecurity,
        summary: 'Realm runtime status',
        description: 'Counts, defaults and configuration issues of the token realm (`status` degraded when any).',
        response: { 200: Loose, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => runtimeStatus(rt, principalOf(request)),
  );
  app.get(
    '/api/v1/runtime/capabilities',
    {
      schema: {
        tags: ['runtime'],
        security: runtimeSecurity,
        summary: 'Capabilities of the running engine',
        response: { 200: Loose, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => runtimeCapabilities(rt, principalOf(request)),
  );
  app.get(
    '/api/v1/sdk/config',
    {
      schema: {
        tags: ['runtime'],
        security: [],
        summary: 'Versioned client contract',
        description:
          'Endpoint templates, transports, normalized actions with their fallbacks, and bounded request schemas. No authentication; nothing secret.',
        response: { 200: Loose },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return sdkConfig(rt, SDK_SCHEMAS);
    },
  );
}
