import { createHash } from 'node:crypto';
import {
  checkIdempotencyKey,
  type FinishedSpan,
  fromJsonColumn,
  type IdempotentResponse,
  isTraceId,
  observeQueueDepth,
  onSpanEnd,
  runtimeSignals,
  toBoolean,
  toIsoString,
} from '@keel/core';
import { type FlowStepRecord, NODE_SPAN } from '../flows/index.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { runWrite } from '../write.ts';
import {
  type AlertFiringRow,
  type AlertRuleRow,
  alertFirings,
  countAlertRules,
  eventTotals,
  insertAlertFiring,
  insertAlertRule,
  insertObservabilityEvents,
  listAlertRules,
  listObservabilityEvents,
  noteAlertValue,
  type ObservabilityEventRow,
  pruneObservabilityEvents,
  queuedExecutions,
  recentDurations,
  resolveAlertFirings,
  traceEvents,
  traceSteps,
  transitionAlertRule,
} from './observability-store.ts';

export const LOG_LEVELS = ['info', 'warn', 'error'] as const;
export const EVENT_KINDS = ['request', 'step', 'provider_call', 'tool_call', 'webhook_delivery'] as const;
export const ALERT_METRICS = [
  'request_count',
  'error_count',
  'error_rate',
  'latency_p95_ms',
  'provider_call_count',
  'provider_error_count',
  'tool_call_count',
  'tool_error_count',
  'queued_executions',
  'event_loop_delay_p99_ms',
] as const;
export const ALERT_OPERATORS = ['gt', 'gte', 'lt', 'lte'] as const;
export type AlertMetric = (typeof ALERT_METRICS)[number];
export type AlertOperator = (typeof ALERT_OPERATORS)[number];

/** Bounds of the stored events and rules (documented in the routes and the README). */
export const OBSERVABILITY_LIMITS = {
  /** Events kept per realm (the oldest beyond are pruned). */
  eventsPerRealm: 100_000,
  /** Events older than this are pruned. */
  retentionHours: 72,
  /** Events written per batch; the buffer is written at least every second. */
  flushBatch: 200,
  flushIntervalMs: 1000,
  /** Events a trace timeline returns. */
  traceEvents: 1000,
  /** Durations a latency percentile is computed from (the newest of the window). */
  percentileSample: 10_000,
  rulesPerRealm: 100,
  firingsPerRule: 20,
  evaluationIntervalMs: 30_000,
} as const;

const ATTRIBUTE_KEYS = [
  'http.route',
  'http.request.method',
  'keel.execution.id',
  'keel.peer',
  'gen_ai.request.model',
  'gen_ai.tool.name',
  NODE_SPAN.nodeId,
  NODE_SPAN.nodeType,
  NODE_SPAN.outcome,
  NODE_SPAN.errorCode,
  NODE_SPAN.attempts,
] as const;

function eventKind(span: FinishedSpan): (typeof EVENT_KINDS)[number] {
  if (span.kind === 'server') return 'request';
  if (span.kind === 'internal') return 'step';
  return span.peer === 'provider' ? 'provider_call' : span.peer === 'tool_server' ? 'tool_call' : 'webhook_delivery';
}

/** A finished span of a realm as a stored event: names, ids, codes and numbers only. */
function toEventRow(span: FinishedSpan & { tenant: string }): ObservabilityEventRow {
  const status = span.attributes['http.response.status_code'];
  const statusCode = typeof status === 'number' ? status : null;
  const level =
    statusCode !== null
      ? statusCode >= 500
        ? 'error'
        : statusCode >= 400
          ? 'warn'
          : 'info'
      : span.failed
        ? 'error'
        : 'info';
  const attributes: Record<string, unknown> = {};
  for (const key of ATTRIBUTE_KEYS) if (span.attributes[key] !== undefined) attributes[key] = span.attributes[key];
  return {
    id: newId(span.startedAt),
    realm_id: span.tenant,
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId ?? null,
    kind: eventKind(span),
    level,
    name: span.name.slice(0, 255),
    status_code: statusCode,
    failed: span.failed,
    duration_ms: Math.max(0, Math.round(span.durationMs)),
    attributes: JSON.stringify(attributes),
    occurred_at: new Date(span.startedAt).toISOString(),
  };
}

export interface ObservabilityRecorder {
  /** Writes the buffered events now (reads call it first, so an instance sees its own events). */
  flush(): Promise<void>;
  /** Evaluates every alert rule of every realm (the timer calls it). */
  evaluateAll(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Records every span of a realm's work (requests, execution steps, provider and tool calls) as events, written
 * in batches off the request path, pruned by age and count; evaluates the alert rules on a timer.
 */
export function createObservabilityRecorder(rt: RuntimeContext): ObservabilityRecorder {
  let buffer: ObservabilityEventRow[] = [];
  let writing: Promise<void> = Promise.resolve();
  let lastPrune = 0;
  const write = (): Promise<void> => {
    if (buffer.length === 0) return writing;
    const rows = buffer;
    buffer = [];
    writing = writing
      .then(async () => {
        await insertObservabilityEvents(rt.db, rows);
        if (Date.now() - lastPrune > 60_000) {
          lastPrune = Date.now();
          const before = new Date(Date.now() - OBSERVABILITY_LIMITS.retentionHours * 3_600_000).toISOString();
          await pruneObservabilityEvents(rt.db, before, OBSERVABILITY_LIMITS.eventsPerRealm);
        }
      })
      .catch((error) => rt.log.warn({ err: error }, 'observability: storing events failed'));
    return writing;
  };
  const stop = onSpanEnd((span) => {
    if (span.tenant === undefined) return;
    // A flow node's span that ended normally is in its execution's step log (the timeline reads it from there):
    // storing it again would cost a row per node on the execution path. Failed node spans have no step: stored.
    if (!span.failed && span.attributes[NODE_SPAN.nodeId] !== undefined) return;
    buffer.push(toEventRow(span as FinishedSpan & { tenant: string }));
    if (buffer.length >= OBSERVABILITY_LIMITS.flushBatch) void write();
  });
  const flushTimer = setInterval(() => void write(), OBSERVABILITY_LIMITS.flushIntervalMs).unref();
  // The durable-execution queue in the Prometheus `keel_queue_depth` gauge (an autoscaling signal).
  const stopQueueGauge = observeQueueDepth(async (observe) =>
    observe('executions', await queuedExecutions(rt.db, undefined).catch(() => 0)),
  );
  let evaluating: Promise<void> | undefined;
  const evaluateAll = async () => {
    let afterId: string | undefined;
    for (;;) {
      const rules = await listAlertRules(rt.db, undefined, 500, afterId);
      if (rules.length === 0) return;
      await evaluateRules(rt, rules);
      afterId = rules.at(-1)!.id;
    }
  };
  const evaluationTimer = setInterval(() => {
    evaluating ??= evaluateAll()
      .catch((error) => rt.log.warn({ err: error }, 'observability: evaluating alert rules failed'))
      .finally(() => {
        evaluating = undefined;
      });
  }, OBSERVABILITY_LIMITS.evaluationIntervalMs).unref();
  return {
    flush: write,
    evaluateAll,
    async close() {
      stop();
      stopQueueGauge();
      clearInterval(flushTimer);
      clearInterval(evaluationTimer);
      await evaluating;
      await write();
    },
  };
}

const levelsFrom = (level: string | undefined) =>
  level === undefined ? undefined : LOG_LEVELS.slice(LOG_LEVELS.indexOf(level as (typeof LOG_LEVELS)[number]));

function toEventView(row: ObservabilityEventRow) {
  return {
    id: row.id,
    trace_id: row.trace_id,
    span_id: row.span_id,
    parent_span_id: row.parent_span_id,
    kind: row.kind,
    level: row.level,
    name: row.name,
    status_code: row.status_code,
    failed: toBoolean(row.failed),
    duration_ms: row.duration_ms,
    attributes: fromJsonColumn<Record<string, string | number | boolean>>(row.attributes),
    occurred_at: toIsoString(row.occurred_at),
  };
}

export interface LogQuery {
  level?: string | undefined;
  kind?: string | undefined;
  trace_id?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** GET /api/v1/observability/logs (any role): the realm's events, newest first, filtered. */
export async function queryLogs(
  rt: RuntimeContext,
  recorder: ObservabilityRecorder,
  principal: RuntimePrincipal,
  query: LogQuery,
) {
  const realmId = requirePermission(principal, 'config:read');
  const since = query.since === undefined ? undefined : new Date(query.since).toISOString();
  const until = query.until === undefined ? undefined : new Date(query.until).toISOString();
  if (since && until && since >= until) throw RuntimeErrors.invalid('since must be before until');
  const beforeId = cursorAfterId('observability-logs', query.cursor);
  await recorder.flush();
  const rows = await listObservabilityEvents(
    rt.db,
    realmId,
    { levels: levelsFrom(query.level), kind: query.kind, traceId: query.trace_id, since, until },
    query.limit + 1,
    beforeId,
  );
  return idPage('observability-logs', rows, query.limit, toEventView);
}

/** GET /api/v1/observability/traces/{trace_id} (any role): the realm's events of a trace; another realm's is a 404. */
export async function traceTimeline(
  rt: RuntimeContext,
  recorder: ObservabilityRecorder,
  principal: RuntimePrincipal,
  traceId: string,
) {
  const realmId = requirePermission(principal, 'config:read');
  if (!isTraceId(traceId)) throw RuntimeErrors.notFound('Trace', traceId);
  await recorder.flush();
  const limit = OBSERVABILITY_LIMITS.traceEvents;
  const [stored, steps] = await Promise.all([
    traceEvents(rt.db, realmId, traceId, limit),
    traceSteps(rt.db, realmId, traceId, limit),
  ]);
  // In one millisecond, steps from the execution log come before stored spans: the only stored spans beside steps
  // are failed nodes, and a failed node is the last step of its run (children follow their parents anyway).
  const logged = steps.map((step) => stepEventRow(realmId, traceId, step));
  const fromLog = new Set(logged);
  const rows = parentsFirst(
    [...stored, ...logged].sort(
      (a, b) =>
        compareTimes(a.occurred_at, b.occurred_at) ||
        Number(fromLog.has(b)) - Number(fromLog.has(a)) ||
        a.id.localeCompare(b.id),
    ),
  ).slice(0, limit);
  if (rows.length === 0) throw RuntimeErrors.notFound('Trace', traceId);
  const started = Date.parse(toIsoString(rows[0]!.occurred_at));
  const ended = Math.max(...rows.map((row) => Date.parse(toIsoString(row.occurred_at)) + row.duration_ms));
  return {
    trace_id: traceId,
    started_at: new Date(started).toISOString(),
    duration_ms: ended - started,
    failed: rows.some((row) => toBoolean(row.failed)),
    events: rows.map(toEventView),
  };
}

const compareTimes = (a: string | Date, b: string | Date) => Date.parse(toIsoString(a)) - Date.parse(toIsoString(b));

/**
 * Time order, except that an event never comes before its parent span's event: spans and step records are timed
 * to the millisecond by different clocks, so a child can tie with or precede its parent by a fraction of one.
 */
export function parentsFirst(rows: ObservabilityEventRow[]): ObservabilityEventRow[] {
  const present = new Set(rows.map((row) => row.span_id));
  const emitted = new Set<string>();
  const waiting = new Map<string, ObservabilityEventRow[]>();
  const out: ObservabilityEventRow[] = [];
  const emit = (row: ObservabilityEventRow) => {
    out.push(row);
    emitted.add(row.span_id);
    const children = waiting.get(row.span_id);
    if (!children) return;
    waiting.delete(row.span_id);
    for (const child of children) emit(child);
  };
  for (const row of rows) {
    const parent = row.parent_span_id;
    if (parent && parent !== row.span_id && present.has(parent) && !emitted.has(parent)) {
      const list = waiting.get(parent);
      if (list) list.push(row);
      else waiting.set(parent, [row]);
    } else emit(row);
  }
  // A cycle of parent ids (malformed data) leaves rows waiting: they follow in time order.
  for (const list of waiting.values()) out.push(...list);
  return out;
}

/**
 * A flow node step of the execution log as a timeline event (`kind: step`, named like its span): ids, type,
 * outcome, attempts and the handled error's code — never its input or result. Steps saved before node spans
 * existed get a span id derived from the execution and step key.
 */
function stepEventRow(
  realmId: string,
  traceId: string,
  step: { execution_id: string; seq: number; record: unknown },
): ObservabilityEventRow {
  const record = fromJsonColumn<FlowStepRecord>(step.record);
  const error = (record.outcome as { error?: { code?: unknown } } | null)?.error;
  const outcome =
    record.phase === 'wait' ? 'waiting' : record.phase === 'undo' ? 'compensated' : error ? 'error' : 'succeeded';
  const attributes: Record<string, string | number> = {
    'keel.execution.id': step.execution_id,
    [NODE_SPAN.nodeId]: record.node_id,
    [NODE_SPAN.nodeType]: record.type,
    [NODE_SPAN.outcome]: outcome,
    [NODE_SPAN.attempts]: record.attempts,
  };
  if (error && typeof error.code === 'string') attributes[NODE_SPAN.errorCode] = error.code;
  return {
    id: `${step.execution_id}:${step.seq}`,
    realm_id: realmId,
    trace_id: traceId,
    span_id:
      record.span_id ??
      createHash('sha256').update(step.execution_id).update('\n').update(record.key).digest('hex').slice(0, 16),
    parent_span_id: record.parent_span_id ?? null,
    kind: 'step',
    level: error ? 'warn' : 'info',
    name: `flow.node ${record.type}`,
    status_code: null,
    failed: false,
    duration_ms: Math.max(0, Date.parse(record.finished_at) - Date.parse(record.started_at)),
    attributes: JSON.stringify(attributes),
    occurred_at: record.started_at,
  };
}

const percentile = (sorted: readonly number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const ratio = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000);
const average = (total: number, count: number) => (count === 0 ? 0 : Math.round(total / count));

/** The realm's metrics over the last `windowSeconds`, from its stored events and the process's signals. */
async function realmMetrics(rt: RuntimeContext, realmId: string, windowSeconds: number) {
  // Events carry the wall-clock time of their spans, so windows are measured on it too.
  const since = new Date(Date.now() - windowSeconds * 1000).toISOString();
  const [requests, durations, provider, tools, queued] = await Promise.all([
    eventTotals(rt.db, realmId, 'request', since),
    recentDurations(rt.db, realmId, 'request', since, OBSERVABILITY_LIMITS.percentileSample),
    eventTotals(rt.db, realmId, 'provider_call', since),
    eventTotals(rt.db, realmId, 'tool_call', since),
    queuedExecutions(rt.db, realmId),
  ]);
  const sorted = durations.sort((a, b) => a - b);
  const signals = runtimeSignals();
  return {
    window_seconds: windowSeconds,
    requests: {
      count: requests.count,
      errors: requests.failed,
      client_errors: requests.clientErrors,
      error_rate: ratio(requests.failed, requests.count),
      latency_ms: {
        avg: average(requests.totalMs, requests.count),
        p50: percentile(sorted, 50),
        p95: percentile(sorted, 95),
        p99: percentile(sorted, 99),
      },
    },
    provider: {
      calls: provider.count,
      errors: provider.failed,
      avg_latency_ms: average(provider.totalMs, provider.count),
    },
    tool_servers: { calls: tools.count, errors: tools.failed, avg_latency_ms: average(tools.totalMs, tools.count) },
    queue: { queued_executions: queued },
    autoscaling: {
      active_requests: signals.activeRequests,
      event_loop_delay_p99_ms: signals.eventLoopDelayP99Ms,
      event_loop_utilization: signals.eventLoopUtilization,
      heap_used_bytes: signals.heapUsedBytes,
      queued_executions: queued,
    },
  };
}

type RealmMetrics = Awaited<ReturnType<typeof realmMetrics>>;

function metricValue(metrics: RealmMetrics, metric: AlertMetric): number {
  switch (metric) {
    case 'request_count':
      return metrics.requests.count;
    case 'error_count':
      return metrics.requests.errors;
    case 'error_rate':
      return metrics.requests.error_rate;
    case 'latency_p95_ms':
      return metrics.requests.latency_ms.p95;
    case 'provider_call_count':
      return metrics.provider.calls;
    case 'provider_error_count':
      return metrics.provider.errors;
    case 'tool_call_count':
      return metrics.tool_servers.calls;
    case 'tool_error_count':
      return metrics.tool_servers.errors;
    case 'queued_executions':
      return metrics.queue.queued_executions;
    case 'event_loop_delay_p99_ms':
      return metrics.autoscaling.event_loop_delay_p99_ms;
  }
}

function breaches(value: number, operator: string, threshold: number): boolean {
  if (operator === 'gt') return value > threshold;
  if (operator === 'gte') return value >= threshold;
  if (operator === 'lt') return value < threshold;
  return value <= threshold;
}

/**
 * Evaluates rules on their realm's metrics: ok → firing records a firing, firing → ok resolves it. Each transition
 * is a conditional update, so with several instances exactly one records it.
 */
async function evaluateRules(rt: RuntimeContext, rules: readonly AlertRuleRow[]): Promise<void> {
  const computed = new Map<string, RealmMetrics>();
  for (const rule of rules) {
    const key = `${rule.realm_id}:${rule.window_seconds}`;
    let metrics = computed.get(key);
    if (!metrics) {
      metrics = await realmMetrics(rt, rule.realm_id, rule.window_seconds);
      computed.set(key, metrics);
    }
    const value = metricValue(metrics, rule.metric as AlertMetric);
    const firing = breaches(value, rule.operator, Number(rule.threshold));
    const at = nowIso(rt);
    if (firing && rule.state === 'ok') {
      await runWrite(rt.engine, undefined, async (trx) => {
        if (await transitionAlertRule(trx, rule.id, 'ok', 'firing', value, at))
          await insertAlertFiring(trx, {
            id: newId(),
            rule_id: rule.id,
            realm_id: rule.realm_id,
            value,
            fired_at: at,
            resolved_at: null,
          });
        return { statusCode: 200, body: null };
      });
    } else if (!firing && rule.state === 'firing') {
      await runWrite(rt.engine, undefined, async (trx) => {
        if (await transitionAlertRule(trx, rule.id, 'firing', 'ok', value, at))
          await resolveAlertFirings(trx, rule.id, at);
        return { statusCode: 200, body: null };
      });
    } else await noteAlertValue(rt.db, rule.id, value, at);
  }
}

function toFiringView(row: AlertFiringRow) {
  return {
    id: row.id,
    value: Number(row.value),
    fired_at: toIsoString(row.fired_at),
    resolved_at: row.resolved_at === null ? null : toIsoString(row.resolved_at),
  };
}

function toRuleView(rule: AlertRuleRow, firings: readonly AlertFiringRow[]) {
  return {
    id: rule.id,
    name: rule.name,
    metric: rule.metric,
    operator: rule.operator,
    threshold: Number(rule.threshold),
    window_seconds: rule.window_seconds,
    state: rule.state,
    last_value: rule.last_value === null ? null : Number(rule.last_value),
    last_evaluated_at: rule.last_evaluated_at === null ? null : toIsoString(rule.last_evaluated_at),
    created_at: toIsoString(rule.created_at),
    firings: firings
      .filter((firing) => firing.rule_id === rule.id)
      .slice(0, OBSERVABILITY_LIMITS.firingsPerRule)
      .map(toFiringView),
  };
}

async function ruleViews(rt: RuntimeContext, realmId: string, rules: readonly AlertRuleRow[]) {
  const firings = await alertFirings(
    rt.db,
    realmId,
    rules.map((rule) => rule.id),
    rules.length * OBSERVABILITY_LIMITS.firingsPerRule,
  );
  return rules.map((rule) => toRuleView(rule, firings));
}

/** Evaluates the realm's rules now and returns them fresh (the reads below show the current state). */
async function evaluatedRealmRules(rt: RuntimeContext, realmId: string, limit: number, afterId?: string) {
  await evaluateRules(rt, await listAlertRules(rt.db, realmId, limit, afterId));
  return listAlertRules(rt.db, realmId, limit, afterId);
}

/** GET /api/v1/observability/metrics (any role): the realm's metrics and its alerts that fired in the window. */
export async function metricsView(
  rt: RuntimeContext,
  recorder: ObservabilityRecorder,
  principal: RuntimePrincipal,
  windowSeconds: number,
) {
  const realmId = requirePermission(principal, 'config:read');
  await recorder.flush();
  const rules = await evaluatedRealmRules(rt, realmId, OBSERVABILITY_LIMITS.rulesPerRealm);
  const metrics = await realmMetrics(rt, realmId, windowSeconds);
  const since = new Date(Date.now() - windowSeconds * 1000).toISOString();
  const views = await ruleViews(rt, realmId, rules);
  const fired = views.flatMap((rule) =>
    rule.firings
      .filter((firing) => firing.resolved_at === null || firing.fired_at >= since)
      .map((firing) => ({
        rule_id: rule.id,
        name: rule.name,
        metric: rule.metric,
        threshold: rule.threshold,
        ...firing,
      })),
  );
  return {
    generated_at: nowIso(rt),
    ...metrics,
    alerts: { firing: views.filter((r) => r.state === 'firing').length, fired },
  };
}

export interface AlertRuleInput {
  name: string;
  metric: AlertMetric;
  operator: AlertOperator;
  threshold: number;
  window_seconds?: number | undefined;
}

/** POST /api/v1/observability/alerts (developer or stronger): a new rule, evaluated from now on. */
export async function createAlertRule(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: AlertRuleInput,
  idempotencyKey: unknown,
): Promise<IdempotentResponse<unknown>> {
  const realmId = requirePermission(principal, 'config:write');
  const key = checkIdempotencyKey(idempotencyKey, false);
  return runWrite(
    rt.engine,
    key === undefined
      ? undefined
      : { scope: `${principal.keyId}|POST /api/v1/observability/alerts`, key, payload: input },
    async (trx) => {
      if ((await countAlertRules(trx, realmId)) >= OBSERVABILITY_LIMITS.rulesPerRealm)
        throw RuntimeErrors.invalid(`A realm has at most ${OBSERVABILITY_LIMITS.rulesPerRealm} alert rules`);
      const row: AlertRuleRow = {
        id: newId(),
        realm_id: realmId,
        name: input.name.trim(),
        metric: input.metric,
        operator: input.operator,
        threshold: input.threshold,
        window_seconds: input.window_seconds ?? 300,
        state: 'ok',
        last_value: null,
        last_evaluated_at: null,
        created_by: principal.identityId,
        created_at: nowIso(rt),
      };
      await insertAlertRule(trx, row);
      return { statusCode: 201, body: toRuleView(row, []) };
    },
  );
}

/** GET /api/v1/observability/alerts (any role): the realm's rules, evaluated now, with their firing history. */
export async function listAlerts(
  rt: RuntimeContext,
  recorder: ObservabilityRecorder,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const afterId = cursorAfterId('observability-alerts', query.cursor);
  await recorder.flush();
  const rows = await evaluatedRealmRules(rt, realmId, query.limit + 1, afterId);
  const page = idPage('observability-alerts', rows, query.limit, (row) => row);
  return { data: await ruleViews(rt, realmId, page.data), next_cursor: page.next_cursor };
}
