import { type App, sendIdempotent } from '@keel/core';
import { type Static, Type } from 'typebox';
import { ACTION_TYPES, EXECUTION_STATES } from '../flows/index.ts';
import { IdempotencyHeaders } from '../http/schemas.ts';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  component,
  IdParams,
  JsonRecord,
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
  cancelExecution,
  createExecution,
  DEFAULT_MAX_RETRIES,
  decideApproval,
  executeFlow,
  getExecution,
  listExecutionActions,
  listExecutionEvents,
  listExecutions,
  resumeExecution,
  retryExecution,
} from './execution-service.ts';

const ExecutionSchema = component(
  'RtExecution',
  Type.Object({
    id: Type.String(),
    realm_id: Type.String(),
    flow_id: Type.String(),
    flow_version: Type.Integer({ description: 'The flow version pinned at creation' }),
    agent_id: Type.Union([Type.String(), Type.Null()]),
    state: OneOf(EXECUTION_STATES),
    input: JsonRecord(),
    action: Type.Union([JsonRecord(), Type.Null()], {
      description: 'The latest normalized action (the result once succeeded; APPROVAL_REQUIRED while waiting; ERROR)',
    }),
    error: Type.Union([
      Type.Object({
        code: Type.String({
          description:
            'Why it failed, e.g. GOVERNANCE_QUOTA_EXCEEDED (a model or tool step refused by the realm quota: a retryable failure, the step not applied), POLICY_ACTION_BLOCKED (the pinned policy version refuses the output action), GOVERNANCE_POLICY_DENIED, TOOL_CALL_LIMIT, COST_LIMIT',
        }),
        message: Type.String(),
        node_id: Type.Union([Type.String(), Type.Null()]),
        retry_at: Type.Optional(
          Type.String({
            format: 'date-time',
            description: 'GOVERNANCE_QUOTA_EXCEEDED: when the quota window ends (a retry is not queued before)',
          }),
        ),
      }),
      Type.Null(),
    ]),
    wait: Type.Union([JsonRecord(), Type.Null()], {
      description: 'What a waiting execution waits for: an approval (`approval_id`), a delay (`resume_at`), an event',
    }),
    usage: Type.Union([JsonRecord(), Type.Null()]),
    pinned: JsonRecord({
      description: 'Versions pinned to the execution: flow (version, plan hash), prompt, provider',
    }),
    compensate_on_failure: Type.Boolean(),
    compensation_pending: Type.Boolean(),
    cancel_requested: Type.Boolean(),
    attempts: Type.Integer(),
    max_retries: Type.Integer(),
    run_at: Timestamp,
    trace_id: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
    started_at: NullableTimestamp,
    finished_at: NullableTimestamp,
  }),
);
const ExecutionRef = ref<Static<typeof ExecutionSchema>>('RtExecution');

/** The body of POST /api/v1/runtime/executions (also a bounded schema of the client contract). */
export const ExecutionCreateBody = Type.Object(
  {
    flow_id: Uuid(),
    version: Type.Optional(
      Type.Integer({ minimum: 1, description: 'A published version to pin; default the active version' }),
    ),
    agent_id: Type.Optional(
      Uuid({ description: "Whose settings bound the run and whose provider answers the flow's model nodes" }),
    ),
    input: Type.Optional(JsonRecord({ maxProperties: 64, description: "Checked against the flow's input contract" })),
    compensate_on_failure: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'Run the completed steps’ compensations, newest first, after a terminal failure or a cancel',
      }),
    ),
    max_retries: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10,
        default: DEFAULT_MAX_RETRIES,
        description: 'Retries of a retryable failure',
      }),
    ),
  },
  {
    examples: [
      {
        flow_id: '0192f5a0-7c4e-7d3a-9b1e-2f6c8d4e5a10',
        input: { query: 'red mug' },
      },
    ],
  },
);

const EventSchema = Type.Object({
  id: Type.Integer({ description: 'Increasing per execution; the SSE `id` (send it back as `Last-Event-ID`)' }),
  type: Type.String({
    description:
      '`execution.<state>` on every state change, `step.done` / `step.wait` / `step.undo` per saved step, `approval.approved` / `approval.denied`, `execution.resumed`, `execution.retry`, `execution.cancel_requested`',
  }),
  data: JsonRecord(),
  created_at: Timestamp,
});

const ApprovalParams = Type.Object({
  id: Uuid(),
  approvalId: Type.String({ pattern: '^apr_[0-9a-f]{24}$', description: '`wait.approval_id` of the execution' }),
});

const DecisionBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 1000 })) },
  { examples: [{ reason: 'Checked with the customer' }] },
);

const STATES_DOC = `States: queued → running → succeeded | waiting_for_approval | queued (a delay or an event wait) | retryable_failure | terminal_failure | cancelled; waiting_for_approval → running (approved or denied) | cancelled; retryable_failure → queued (retry) | terminal_failure | cancelled | compensated; terminal_failure and cancelled → compensated when compensations ran. succeeded and compensated are final. Any other move is a 409 EXECUTION_ILLEGAL_TRANSITION. Running needs operator or above; reading any role. An execution of another realm is a 404 like an unknown one.`;

const SSE_POLL_MS = 250;
const SSE_KEEPALIVE_MS = 15_000;
/** A stream ends after this; the client reconnects with Last-Event-ID and misses nothing. */
const SSE_MAX_MS = 10 * 60_000;

function isSettled(execution: { state: string; compensation_pending: boolean }): boolean {
  return (
    ['succeeded', 'compensated', 'terminal_failure', 'cancelled'].includes(execution.state) &&
    !execution.compensation_pending
  );
}

export function registerExecutionRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['executions'], security: runtimeSecurity };
  app.post(
    '/api/v1/runtime/executions',
    {
      schema: {
        ...base,
        summary: 'Queue an asynchronous execution',
        description: `202 with the queued execution; a worker runs it. The flow's active version (or the published \`version\` given), the agent's settings and its active prompt version are pinned. Each step's result is stored before the next starts; a worker that dies mid-run loses its lease and another resumes from the last stored step, and tool writes carry an idempotency key derived from the execution and step, so no side effect repeats. 409 FLOW_NOT_ACTIVE / FLOW_NOT_PUBLISHED; 400 when \`input\` breaks the input contract. Send \`Idempotency-Key\` to make retries safe. ${STATES_DOC}`,
        headers: IdempotencyHeaders,
        body: ExecutionCreateBody,
        response: { 202: ExecutionRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await createExecution(rt, principalOf(request), request.body, request.headers['idempotency-key']),
      ),
  );
  app.post(
    '/api/v1/runtime/flows/:id/execute',
    {
      schema: {
        tags: ['flows', 'executions'],
        security: runtimeSecurity,
        summary: 'Execute a flow',
        description: `Synchronous: the execution is stored and pinned like \`POST /executions\` (the same body without \`flow_id\`), then run at once in this process, each step stored before the next; 200 with the execution as it stopped — \`succeeded\`, a failure, or waiting (an approval, a delay, an event), from where workers continue it. A replay of an \`Idempotency-Key\` answers the same execution's current state (\`Idempotent-Replayed: true\`). ${STATES_DOC}`,
        headers: IdempotencyHeaders,
        params: IdParams,
        body: Type.Object(
          {
            version: ExecutionCreateBody.properties.version,
            agent_id: ExecutionCreateBody.properties.agent_id,
            input: ExecutionCreateBody.properties.input,
            compensate_on_failure: ExecutionCreateBody.properties.compensate_on_failure,
            max_retries: ExecutionCreateBody.properties.max_retries,
          },
          { examples: [{ input: { query: 'red mug' } }] },
        ),
        response: { 200: ExecutionRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await executeFlow(
          rt,
          principalOf(request),
          request.params.id,
          request.body,
          request.headers['idempotency-key'],
        ),
      ),
  );
  app.get(
    '/api/v1/runtime/executions',
    {
      schema: {
        ...base,
        summary: 'List recent executions',
        description: 'Newest first.',
        querystring: Type.Object({
          limit: PageQuery.limit,
          cursor: Type.Optional(Type.String({ maxLength: 512 })),
          state: Type.Optional(OneOf(EXECUTION_STATES)),
          flow_id: Type.Optional(Uuid()),
        }),
        response: { 200: page(ExecutionRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listExecutions(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.get(
    '/api/v1/runtime/executions/:id',
    {
      schema: {
        ...base,
        summary: 'State and result of an execution',
        params: IdParams,
        response: { 200: ExecutionRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getExecution(rt, principalOf(request), request.params.id),
  );
  app.post(
    '/api/v1/runtime/executions/:id/cancel',
    {
      schema: {
        ...base,
        summary: 'Cancel an execution',
        description:
          'Queued, waiting and retryable executions are cancelled at once; a running one gets `cancel_requested` and its worker stops it before the next step. With `compensate_on_failure`, completed steps with a compensation are undone newest first and the execution ends `compensated`. 409 for succeeded and compensated executions.',
        params: IdParams,
        response: { 200: ExecutionRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => cancelExecution(rt, principalOf(request), request.params.id),
  );
  app.post(
    '/api/v1/runtime/executions/:id/retry',
    {
      schema: {
        ...base,
        summary: 'Retry a retryable execution',
        description:
          'Only from `retryable_failure`: queued again after `retry_base_ms × 2^attempts` (the agent setting), and not before `error.retry_at` after a realm-quota refusal; completed steps are not run again. 409 RUNTIME_LIMIT_REACHED once `max_retries` are used (a retryable failure past the last retry ends `terminal_failure`).',
        params: IdParams,
        response: { 200: ExecutionRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => retryExecution(rt, principalOf(request), request.params.id),
  );
  app.post(
    '/api/v1/runtime/executions/:id/resume',
    {
      schema: {
        ...base,
        summary: 'Resume an execution waiting on an event or a delay',
        description:
          'An event wait continues with `payload` as the event (`event`, when sent, must name the awaited event: 409 otherwise); a delay continues now. Approvals use the approve and deny operations. 409 when the execution waits for nothing resumable.',
        params: IdParams,
        body: Type.Object(
          {
            event: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            payload: Type.Optional(JsonRecord({ maxProperties: 64 })),
          },
          { examples: [{ event: 'payment.confirmed', payload: { reference: 'pay_123' } }] },
        ),
        response: { 200: ExecutionRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => resumeExecution(rt, principalOf(request), request.params.id, request.body ?? {}),
  );
  for (const [verb, approved] of [
    ['approve', true],
    ['deny', false],
  ] as const)
    app.post(
      `/api/v1/runtime/executions/:id/approvals/:approvalId/${verb}`,
      {
        schema: {
          ...base,
          summary: approved ? 'Approve a waiting tool action' : 'Deny a waiting tool action',
          description: `The execution must be \`waiting_for_approval\` on this approval (\`wait.approval_id\`); it moves to running and continues on the approval node's ${approved ? '`next`' : '`on_deny` (or fails with APPROVAL_DENIED without one)'}. 404 for an unknown approval, 409 once decided.`,
          params: ApprovalParams,
          body: DecisionBody,
          response: { 200: ExecutionRef, ...runtimeErrors },
        },
        config: runtimeConfig,
      },
      async (request) =>
        decideApproval(
          rt,
          principalOf(request),
          request.params.id,
          request.params.approvalId,
          approved,
          request.body ?? {},
        ),
    );
  app.get(
    '/api/v1/runtime/executions/:id/events',
    {
      schema: {
        ...base,
        summary: 'Stream execution events',
        description:
          'With `Accept: text/event-stream`: Server-Sent Events (`id`, `event` = the type, `data` = the event as JSON), from after `Last-Event-ID` (or `after`), kept open until the execution settles (a `: keepalive` comment every 15 s; a stream ends after 10 minutes — reconnect with `Last-Event-ID`). Otherwise a JSON page of events after `after`.',
        params: IdParams,
        querystring: Type.Object({
          after: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Event id to continue after' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
        }),
        response: {
          200: Type.Object({
            execution_id: Type.String(),
            state: OneOf(EXECUTION_STATES),
            data: Type.Array(EventSchema),
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const lastEventId = request.headers['last-event-id'];
      const header =
        typeof lastEventId === 'string' && /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : undefined;
      let after = header ?? request.query.after ?? 0;
      const limit = request.query.limit ?? 100;
      const first = await listExecutionEvents(rt, principal, request.params.id, after, limit);
      if (!String(request.headers.accept ?? '').includes('text/event-stream'))
        return { execution_id: first.execution.id, state: first.execution.state, data: first.events };
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      let closed = false;
      raw.on('close', () => {
        closed = true;
      });
      const started = Date.now();
      let lastWrite = Date.now();
      let batch = first;
      while (!closed) {
        for (const event of batch.events) {
          raw.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
          after = event.id;
          lastWrite = Date.now();
        }
        if (batch.events.length === 0 && isSettled(batch.execution)) break;
        if (Date.now() - started > SSE_MAX_MS) break;
        if (batch.events.length < limit) {
          await new Promise((resolve) => setTimeout(resolve, SSE_POLL_MS));
          if (Date.now() - lastWrite > SSE_KEEPALIVE_MS) {
            raw.write(': keepalive\n\n');
            lastWrite = Date.now();
          }
        }
        if (closed) break;
        try {
          batch = await listExecutionEvents(rt, principal, request.params.id, after, limit);
        } catch {
          break;
        }
      }
      raw.end();
    },
  );
  app.get(
    '/api/v1/runtime/executions/:id/actions',
    {
      schema: {
        ...base,
        summary: 'Replay normalized actions',
        description:
          'The normalized actions the execution produced, oldest first (approval requests, the result or error), as a client with `actions` (comma-separated action names it renders; omitted: all) receives them: handoff fields stripped, unsupported OFFER_PRODUCT_ALTERNATIVES → RESPOND, unsupported RENDER_PRODUCT_ALTERNATIVES / RENDER_PRODUCT_DETAILS → DATA_RESULT with `metadata.original_type`.',
        params: IdParams,
        querystring: Type.Object({
          actions: Type.Optional(
            Type.String({
              maxLength: 400,
              pattern: '^[A-Z_]+(,[A-Z_]+)*$',
              description: `Among ${ACTION_TYPES.join(', ')}`,
            }),
          ),
        }),
        response: {
          200: Type.Object({
            execution_id: Type.String(),
            state: OneOf(EXECUTION_STATES),
            data: Type.Array(
              Type.Object({
                event_id: Type.Integer(),
                state: Type.String(),
                action: JsonRecord(),
                created_at: Timestamp,
              }),
            ),
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listExecutionActions(
        rt,
        principalOf(request),
        request.params.id,
        request.query.actions === undefined ? undefined : { actions: request.query.actions.split(',') as never },
      ),
  );
}
