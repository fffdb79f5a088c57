import { type App, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { IdempotencyHeaders } from '../http/schemas.ts';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  OneOf,
  PageQuery,
  page,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import {
  ALERT_METRICS,
  ALERT_OPERATORS,
  type AlertRuleInput,
  createAlertRule,
  EVENT_KINDS,
  LOG_LEVELS,
  listAlerts,
  metricsView,
  OBSERVABILITY_LIMITS,
  type ObservabilityRecorder,
  queryLogs,
  traceTimeline,
} from './observability-service.ts';

const TraceId = Type.String({ pattern: '^[0-9a-f]{32}$', description: 'W3C trace id (32 lower-case hex digits)' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

const EventSchema = Type.Object({
  id: Type.String(),
  trace_id: Type.String(),
  span_id: Type.String(),
  parent_span_id: Nullable(Type.String()),
  kind: Type.String({ description: EVENT_KINDS.join(', ') }),
  level: Type.String({ description: LOG_LEVELS.join(', ') }),
  name: Type.String({ description: 'Route pattern, step or call name (never a raw path, argument or message text)' }),
  status_code: Nullable(Type.Integer()),
  failed: Type.Boolean(),
  duration_ms: Type.Integer(),
  attributes: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
  occurred_at: Timestamp,
});

const FiringSchema = Type.Object({
  id: Type.String(),
  value: Type.Number(),
  fired_at: Timestamp,
  resolved_at: Nullable(Timestamp),
});

const RuleSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  metric: Type.String(),
  operator: Type.String(),
  threshold: Type.Number(),
  window_seconds: Type.Integer(),
  state: Type.String({ description: '`ok` or `firing`' }),
  last_value: Nullable(Type.Number()),
  last_evaluated_at: Nullable(Timestamp),
  created_at: Timestamp,
  firings: Type.Array(FiringSchema, { description: `Newest first, at most ${OBSERVABILITY_LIMITS.firingsPerRule}` }),
});

const Window = Type.Integer({ minimum: 60, maximum: 86_400 });
const Latency = Type.Object({ avg: Type.Integer(), p50: Type.Integer(), p95: Type.Integer(), p99: Type.Integer() });
const Calls = Type.Object({ calls: Type.Integer(), errors: Type.Integer(), avg_latency_ms: Type.Integer() });

const MetricsSchema = Type.Object({
  generated_at: Timestamp,
  window_seconds: Type.Integer(),
  requests: Type.Object({
    count: Type.Integer(),
    errors: Type.Integer({ description: '5xx answers' }),
    client_errors: Type.Integer({ description: '4xx answers' }),
    error_rate: Type.Number({ description: 'errors / count' }),
    latency_ms: Latency,
  }),
  provider: Calls,
  tool_servers: Calls,
  queue: Type.Object({ queued_executions: Type.Integer() }),
  autoscaling: Type.Object({
    active_requests: Type.Integer({ description: 'Requests in flight in this instance' }),
    event_loop_delay_p99_ms: Type.Number(),
    event_loop_utilization: Type.Number(),
    heap_used_bytes: Type.Integer(),
    queued_executions: Type.Integer(),
  }),
  alerts: Type.Object({
    firing: Type.Integer({ description: 'Rules firing now' }),
    fired: Type.Array(
      Type.Object({
        rule_id: Type.String(),
        name: Type.String(),
        metric: Type.String(),
        threshold: Type.Number(),
        ...FiringSchema.properties,
      }),
      { description: 'Firings still open or started in the window' },
    ),
  }),
});

const STORAGE = `Events are the spans of the realm's work — each request, durable-execution run, provider call and tool call — written in batches (at most ${OBSERVABILITY_LIMITS.flushIntervalMs} ms after they end; an instance reads its own at once) and kept ${OBSERVABILITY_LIMITS.retentionHours} h, at most ${OBSERVABILITY_LIMITS.eventsPerRealm.toLocaleString('en')} per realm (the oldest go first). They hold names, ids, status codes and durations only: no paths, arguments, messages or secrets. The trace id is the request's \`x-request-id\` (a caller's W3C \`traceparent\` is continued).`;

/** Registers the observability routes; `recorder` stores the spans and evaluates the alert rules. */
export function registerObservabilityRoutes(app: App, rt: RuntimeContext, recorder: ObservabilityRecorder): void {
  const base = { tags: ['observability'], security: runtimeSecurity };
  app.get(
    '/api/v1/observability/logs',
    {
      schema: {
        ...base,
        summary: 'Query structured events',
        description: `Any role. The realm's events, newest first. \`level\` is a minimum (\`warn\` returns warn and error); \`since\`/\`until\` bound \`occurred_at\` ([since, until)); \`trace_id\` and \`kind\` filter. ${STORAGE}`,
        querystring: Type.Object(
          {
            level: Type.Optional(OneOf(LOG_LEVELS)),
            kind: Type.Optional(OneOf(EVENT_KINDS)),
            trace_id: Type.Optional(TraceId),
            since: Type.Optional(Type.String({ format: 'date-time' })),
            until: Type.Optional(Type.String({ format: 'date-time' })),
            ...PageQuery,
          },
          { additionalProperties: false },
        ),
        response: { 200: page(EventSchema), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => queryLogs(rt, recorder, principalOf(request), request.query as Parameters<typeof queryLogs>[3]),
  );
  app.get(
    '/api/v1/observability/traces/:trace_id',
    {
      schema: {
        ...base,
        summary: 'Correlated timeline of a trace',
        description: `Any role. Every event of the trace in this realm in time order (at most ${OBSERVABILITY_LIMITS.traceEvents}): the request, the execution run, each flow node step of the trace's executions (flow.node <type>, from the execution's step log: node id, type, outcome, attempts; failed nodes as their stored span), provider calls, tool calls and webhook delivery attempts (outbox messages continue the trace of the write that queued them), with span and parent span ids. A trace with no event in this realm — unknown, expired or another realm's — is a 404. ${STORAGE}`,
        params: Type.Object({ trace_id: Type.String({ maxLength: 64 }) }),
        response: {
          200: Type.Object({
            trace_id: Type.String(),
            started_at: Timestamp,
            duration_ms: Type.Integer(),
            failed: Type.Boolean(),
            events: Type.Array(EventSchema),
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) => traceTimeline(rt, recorder, principalOf(request), request.params.trace_id),
  );
  app.get(
    '/api/v1/observability/metrics',
    {
      schema: {
        ...base,
        summary: 'Realm metrics and fired alerts',
        description: `Any role. Over the last \`window_seconds\` (60–86400, default 300): requests, errors, latency percentiles, provider and tool-server calls from the realm's events; the realm's queued durable executions; the autoscaling signals of the instance that answers (requests in flight, event-loop delay and utilization, heap); and the alerts that fired (rules are evaluated on this read and every ${OBSERVABILITY_LIMITS.evaluationIntervalMs / 1000} s). Operators scrape the same instruments, for the whole process, in Prometheus format at \`GET /metrics\`.`,
        querystring: Type.Object(
          { window_seconds: Type.Optional({ ...Window, default: 300 }) },
          { additionalProperties: false },
        ),
        response: { 200: MetricsSchema, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => metricsView(rt, recorder, principalOf(request), request.query.window_seconds ?? 300),
  );
  app.get(
    '/api/v1/observability/alerts',
    {
      schema: {
        ...base,
        summary: 'List alert rules',
        description:
          'Any role. Oldest first; each rule is evaluated on this read and shows its state, last value and newest firings.',
        querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
        response: { 200: page(RuleSchema), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listAlerts(rt, recorder, principalOf(request), {
        limit: request.query.limit ?? 20,
        cursor: request.query.cursor,
      }),
  );
  app.post(
    '/api/v1/observability/alerts',
    {
      schema: {
        ...base,
        summary: 'Create an alert rule',
        description: `Developer role or stronger. The rule fires when \`metric\` over the last \`window_seconds\` (60–86400, default 300) compares to \`threshold\` by \`operator\` (gt, gte, lt, lte); a firing is recorded when it starts and resolved when the condition clears. Metrics: ${ALERT_METRICS.join(', ')} (as in GET /api/v1/observability/metrics; error_rate is a ratio 0–1). At most ${OBSERVABILITY_LIMITS.rulesPerRealm} rules per realm (400 beyond). \`Idempotency-Key\` replays the first answer.`,
        headers: IdempotencyHeaders,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 120, pattern: '\\S' }),
            metric: OneOf(ALERT_METRICS),
            operator: OneOf(ALERT_OPERATORS),
            threshold: Type.Number({ minimum: -1e12, maximum: 1e12 }),
            window_seconds: Type.Optional(Window),
          },
          { additionalProperties: false },
        ),
        response: { 201: RuleSchema, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await createAlertRule(
          rt,
          principalOf(request),
          request.body as AlertRuleInput,
          request.headers['idempotency-key'],
        ),
      ),
  );
}
