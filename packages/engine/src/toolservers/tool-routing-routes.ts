import type { App } from '@keel/core';
import { Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import { JsonRecord, OneOf, runtimeConfig, runtimeErrors, runtimeSecurity, Uuid } from '../runtime/http-schemas.ts';
import { RoutingRuleInputSchema } from './routing/index.ts';
import {
  aggregateTool,
  createRule,
  executeParallelTools,
  executeTool,
  getRule,
  getSessionContext,
  getTrace,
  listRules,
  previewRoute,
  proxyCall,
  putSessionContext,
  reloadRules,
  removeRule,
  replaceRule,
} from './tool-execution-service.ts';
import type { ToolRuntime } from './tool-runtime.ts';
import * as S from './toolserver-schemas.ts';

const base = { tags: ['tool-routing'], security: runtimeSecurity };
const ToolName = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.-]+$' });
const Arguments = JsonRecord({ maxProperties: 100, description: 'Validated against the stored input schema' });
const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Sent to the server as `_meta["io.keel/idempotency-key"]`; a write is retried only with one',
});
const Strategy = OneOf(['registry', 'first_healthy', 'parallel'] as const, {
  description: 'Used when no routing rule matches the tool (a rule always wins)',
});
const SessionFields = {
  session_id: Type.Optional(Uuid({ description: "The session whose agent's attached servers bound the call" })),
  resume_token: Type.Optional(Type.String({ maxLength: 256, description: 'Or header X-Resume-Token' })),
};
const RuleParams = Type.Object({ id: Uuid() });

const EXECUTION_DOC = `Fails closed before anything is sent: an unknown or undiscovered tool (404 TOOL_NOT_AVAILABLE), no approved
server reachable (409 TOOL_ROUTE_FAILED with the decision's reason code), a destructive, financial, external-message or
sensitive tool (403 TOOL_HIGH_IMPACT_DIRECT_CALL: those run only in flows with an approval step), arguments the stored input
schema refuses or does not declare (400 TOOL_ARGUMENTS_INVALID), ids of another realm (404). With \`session_id\` only
the servers attached to the session's agent (\`allowed_mcp_servers\`) are reachable, and its \`provider_region\` and
\`data_handling\` filter them; without a session the caller must be a developer or above and every server of the realm
is a candidate. A rule's timeout and retries apply; a write is retried only with \`idempotency_key\`. Upstream failures
answer 502 TOOL_CALL_FAILED with a secret-free message. Every decision is kept for 24 h under the request's trace id
(\`x-request-id\`, \`GET /api/v1/runtime/mcp/routing/trace/{traceId}\`).`;

function resumeToken(request: { headers: Record<string, unknown>; body?: unknown }): string | undefined {
  const header = request.headers['x-resume-token'];
  if (typeof header === 'string') return header;
  return (request.body as { resume_token?: string } | undefined)?.resume_token;
}

export function registerToolRoutingRoutes(app: App, tools: ToolRuntime): void {
  /** `tools/route` and `routing/preview` take the same request fields (preview adds a few it records only). */
  const preview = (request: {
    body: {
      realm_id?: string;
      agent_id?: string;
      session_id?: string;
      tool_name?: string;
      intent?: string;
      strategy?: 'registry' | 'first_healthy' | 'parallel';
    };
    headers: Record<string, unknown>;
    id: string;
  }) =>
    previewRoute(
      tools,
      principalOf(request as never),
      {
        realm_id: request.body.realm_id,
        intent: request.body.intent,
        strategy: request.body.strategy,
        tool_name: request.body.tool_name ?? '',
        sessionId: request.body.session_id,
        agentId: request.body.agent_id,
        resumeToken: resumeToken(request),
      },
      request.id,
    );
  app.post(
    '/api/v1/runtime/mcp/tools/execute',
    {
      schema: {
        ...base,
        summary: 'Route and execute one approved tool',
        description: `Response \`{mcp_server_id, tool_name, result {content, structured_content?, is_error?}, trace_id, attempts}\`. It does not classify intent, select a flow or return an action. ${EXECUTION_DOC}`,
        body: Type.Object(
          {
            ...SessionFields,
            tool_name: ToolName,
            arguments: Type.Optional(Arguments),
            strategy: Type.Optional(Strategy),
            idempotency_key: Type.Optional(IdempotencyKey),
          },
          { examples: [{ tool_name: 'lookup_stock', arguments: { sku: 'MUG-1' }, strategy: 'first_healthy' }] },
        ),
        response: { 200: S.ExecutionView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      executeTool(
        tools,
        principalOf(request),
        { ...request.body, resumeToken: resumeToken(request), sessionId: request.body.session_id },
        request.id,
      ),
  );
  app.post(
    '/api/v1/runtime/mcp/tools/execute-parallel',
    {
      schema: {
        ...base,
        summary: 'Execute an approved tool set in parallel',
        description: `1–16 calls, each routed and executed on its own, at most the agent's \`max_dependency_concurrency\` (default 4) at once. A call that fails does not fail the others: \`results\` holds, in request order, \`{ok, tool_name, mcp_server_id, result}\` or \`{ok: false, error {code, message, retryable}}\`. ${EXECUTION_DOC}`,
        body: Type.Object(
          {
            ...SessionFields,
            calls: Type.Array(
              Type.Object({
                tool_name: ToolName,
                arguments: Type.Optional(Arguments),
                strategy: Type.Optional(Strategy),
                idempotency_key: Type.Optional(IdempotencyKey),
              }),
              { minItems: 1, maxItems: 16 },
            ),
          },
          { examples: [{ calls: [{ tool_name: 'lookup_stock', arguments: { sku: 'MUG-1' } }] }] },
        ),
        response: { 200: S.ParallelView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      executeParallelTools(
        tools,
        principalOf(request),
        { sessionId: request.body.session_id, resumeToken: resumeToken(request), calls: request.body.calls },
        request.id,
      ),
  );
  app.post(
    '/api/v1/runtime/mcp/tools/aggregate',
    {
      schema: {
        ...base,
        summary: 'Aggregate compatible tool results',
        description: `Calls the tool on every eligible server of a parallel route (at most the rule's \`max_parallel\`, default 4; servers whose contract refuses the arguments are left out), each with its own timeout and retries, and answers the successful per-server results in route order plus bounded failure metadata: \`{tool_name, trace_id, results [{mcp_server_id, result}], failures [{mcp_server_id, code, message, retryable}] (at most 16), succeeded, failed, failures_omitted}\`. ${EXECUTION_DOC}`,
        body: Type.Object(
          {
            ...SessionFields,
            tool_name: ToolName,
            arguments: Type.Optional(Arguments),
            idempotency_key: Type.Optional(IdempotencyKey),
          },
          { examples: [{ tool_name: 'lookup_stock', arguments: { sku: 'MUG-1' } }] },
        ),
        response: { 200: S.AggregateView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      aggregateTool(
        tools,
        principalOf(request),
        { ...request.body, resumeToken: resumeToken(request), sessionId: request.body.session_id },
        request.id,
      ),
  );
  app.post(
    '/api/v1/runtime/mcp/tools/route',
    {
      schema: {
        ...base,
        summary: 'Select a route for a tool or intent',
        description:
          'The routing decision without executing: strategy, rule, chosen server, fallbacks, parallel set and every candidate with its filter reasons, health and score. `intent` (without tool_name) picks the approved tool of the realm whose name equals it or shares the most words with its name and description.',
        body: Type.Object(
          {
            ...SessionFields,
            agent_id: Type.Optional(Uuid()),
            tool_name: Type.Optional(ToolName),
            intent: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
            strategy: Type.Optional(Strategy),
          },
          { examples: [{ tool_name: 'lookup_stock' }] },
        ),
        response: { 200: S.DecisionView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => preview(request),
  );
  app.post(
    '/api/v1/runtime/mcp/routing/preview',
    {
      schema: {
        ...base,
        summary: 'Resolve a route without executing',
        description:
          "As `tools/route`, with the preview request fields: `realm_id` (must be the token's), `agent_id` (bounds the route to its attached servers), `session_id`, `intent`, `tool_name`; `flow_id`, `messages` and `context` are accepted (bounded) but do not change a tool route: flows are routed by the flow engine.",
        body: Type.Object(
          {
            realm_id: Type.Optional(Uuid()),
            agent_id: Type.Optional(Uuid()),
            flow_id: Type.Optional(Uuid()),
            ...SessionFields,
            intent: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
            tool_name: Type.Optional(ToolName),
            messages: Type.Optional(Type.Array(JsonRecord(), { maxItems: 50 })),
            context: Type.Optional(JsonRecord()),
          },
          { examples: [{ tool_name: 'lookup_stock' }] },
        ),
        response: { 200: S.DecisionView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => preview(request),
  );
  app.post(
    '/api/v1/runtime/mcp/proxy',
    {
      schema: {
        ...base,
        summary: 'Call a specific registered server through the engine',
        description:
          'Developer or above. The named server must offer the tool approved (404 / 409 TOOL_NOT_ENABLED otherwise), and the same gating as execute applies (high-impact tools 403, arguments validated); no agent restriction, no fallback. Response as execute.',
        body: Type.Object(
          {
            server_id: Uuid(),
            tool_name: ToolName,
            arguments: Type.Optional(Arguments),
            idempotency_key: Type.Optional(IdempotencyKey),
          },
          {
            examples: [
              {
                server_id: '0194f3a2-7c1d-7abc-8def-0123456789ab',
                tool_name: 'lookup_stock',
                arguments: { sku: 'MUG-1' },
              },
            ],
          },
        ),
        response: { 200: S.ExecutionView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => proxyCall(tools, principalOf(request), request.body, request.id),
  );
  app.get(
    '/api/v1/runtime/mcp/routing/trace/:traceId',
    {
      schema: {
        ...base,
        summary: 'Routing decision trace',
        description:
          'Every decision made under a trace id (the `x-request-id` of the call) in the realm, in order, kept 24 h: the decision (candidates, reasons, scores, chosen, fallbacks) and the attempts (server, attempt, ok, code, duration, backoff). Ids, codes and numbers only; no arguments, results or secrets.',
        params: Type.Object({ traceId: Type.String({ minLength: 1, maxLength: 128 }) }),
        response: { 200: S.TraceView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getTrace(tools, principalOf(request), request.params.traceId),
  );
  app.post(
    '/api/v1/runtime/mcp/routing/reload',
    {
      schema: {
        ...base,
        summary: 'Reload the active rule set',
        description:
          "Re-reads the realm's rules from the store on every instance (rule writes already do this). Answers `{rules, enabled, reloaded_at}`.",
        response: { 200: S.ReloadView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => reloadRules(tools, principalOf(request)),
  );
  const RuleBody = Type.Object(RoutingRuleInputSchema.properties, {
    additionalProperties: false,
    examples: [
      { tool_name: 'lookup_stock', strategy: 'first_healthy', priority: 10, timeout_ms: 5000, max_retries: 1 },
    ],
  });
  app.get(
    '/api/v1/runtime/mcp/routing/rules',
    {
      schema: {
        ...base,
        summary: 'List routing rules',
        description: 'All of the realm (at most 500).',
        response: { 200: S.RuleList, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listRules(tools, principalOf(request)),
  );
  app.post(
    '/api/v1/runtime/mcp/routing/rules',
    {
      schema: {
        ...base,
        summary: 'Create a routing rule',
        description: `Fields: \`tool_name\` (exact or \`*\`), \`strategy\` (explicit, registry, first_healthy, parallel), \`servers\` (1–64 distinct ids of the realm, required for explicit: explicit routes are exclusive and keep the listed order), \`priority\` (−1000–1000), \`enabled\`, \`region\`, \`data_handling\`, \`max_cost\` (picos), \`require_healthy\`, \`weights\` {health, latency, error_rate, cost}, \`latency_target_ms\`, \`cost_target\`, \`max_parallel\` (parallel only, 1–16), \`timeout_ms\` (100–120,000, default 30,000), \`max_retries\` (0–5, default 2). Candidates are filtered (disabled, not attached, tool not approved, not in the rule, unhealthy, region, data handling, cost) and scored by health, latency, error rate and cost.`,
        body: RuleBody,
        response: { 201: S.RuleView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      reply.status(201).send(await createRule(tools, principalOf(request), request.body as never)),
  );
  app.get(
    '/api/v1/runtime/mcp/routing/rules/:id',
    {
      schema: {
        ...base,
        summary: 'Read a routing rule',
        params: RuleParams,
        response: { 200: S.RuleView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getRule(tools, principalOf(request), request.params.id),
  );
  app.put(
    '/api/v1/runtime/mcp/routing/rules/:id',
    {
      schema: {
        ...base,
        summary: 'Replace a routing rule',
        params: RuleParams,
        body: RuleBody,
        response: { 200: S.RuleView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => replaceRule(tools, principalOf(request), request.params.id, request.body as never),
  );
  app.delete(
    '/api/v1/runtime/mcp/routing/rules/:id',
    {
      schema: {
        ...base,
        summary: 'Delete a routing rule',
        params: RuleParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await removeRule(tools, principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
  const SessionParams = Type.Object({ sessionId: Uuid() });
  const ResumeHeader = Type.Object({
    'x-resume-token': Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          "The session's resume token (required for reads; a write may send `resume_token` in the body instead)",
      }),
    ),
  });
  app.get(
    '/api/v1/runtime/mcp/sessions/:sessionId/context',
    {
      schema: {
        ...base,
        summary: 'Read tool session context',
        description:
          "The session's tool context (a store of its own, separate from typed state and messages); `{}` with version 0 until written. Needs the session's resume token (X-Resume-Token).",
        params: SessionParams,
        headers: ResumeHeader,
        response: { 200: S.SessionContextView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getSessionContext(tools, principalOf(request), request.params.sessionId, resumeToken(request)),
  );
  app.put(
    '/api/v1/runtime/mcp/sessions/:sessionId/context',
    {
      schema: {
        ...base,
        summary: 'Replace tool session context',
        description:
          'An object of at most 16 KiB and 8 levels; card data, secrets and credentials are refused (400 RUNTIME_SENSITIVE_DATA_REJECTED). Each write bumps `version`.',
        params: SessionParams,
        headers: ResumeHeader,
        body: Type.Object(
          { context: JsonRecord({ maxProperties: 100 }), resume_token: Type.Optional(Type.String({ maxLength: 256 })) },
          { examples: [{ context: { preferred_warehouse: 'main', last_sku: 'MUG-1' } }] },
        ),
        response: { 200: S.SessionContextView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      putSessionContext(
        tools,
        principalOf(request),
        request.params.sessionId,
        resumeToken(request),
        request.body.context,
      ),
  );
}
