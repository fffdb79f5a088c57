import { AsyncLocalStorage } from 'node:async_hooks';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type {
  Attributes,
  Context,
  Histogram,
  Meter,
  ObservableCounter,
  ObservableGauge,
  ObservableResult,
  ObservableUpDownCounter,
  Span,
  Tracer,
} from '@opentelemetry/api';
import type { MetricReader, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent, type TraceContext } from './trace-context.ts';

/** The span a piece of work runs in: its W3C context and, when the OpenTelemetry SDK records, the SDK span. */
export interface ActiveSpan extends TraceContext {
  span?: Span;
  parentSpanId?: string;
  /** The tenant the work belongs to (the engine's realm), inherited by child spans; see `setSpanTenant`. */
  tenant?: string;
  name: string;
  kind: SpanKindName;
  peer?: OutboundPeer;
  /** Epoch milliseconds. */
  startedAt: number;
}

export type SpanKindName = 'server' | 'client' | 'internal';

/** A span that ended, as `onSpanEnd` listeners see it (whether or not the SDK records spans). */
export interface FinishedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  tenant: string | undefined;
  name: string;
  kind: SpanKindName;
  peer: OutboundPeer | undefined;
  startedAt: number;
  durationMs: number;
  failed: boolean;
  attributes: Attributes;
}

/** Who an outgoing call goes to: the `keel.peer` attribute of its span and duration metric. */
export type OutboundPeer = 'provider' | 'tool_server' | 'webhook';

const SPAN_KIND_SERVER = 1;
const SPAN_KIND_CLIENT = 2;
const SPAN_KIND_INTERNAL = 0;
const STATUS_ERROR = 2;
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface Instruments {
  requestDuration: Histogram;
  requests: ObservableCounter;
  activeRequests: ObservableUpDownCounter;
  requestErrors: ObservableCounter;
  outboundDuration: Histogram;
  queueDepth: ObservableGauge;
}

/**
 * One attribute set of the HTTP metrics and the counts under it. The SDK hashes the attributes of every synchronous
 * measurement (sorts and serializes them), so the per-request counters are counted here and observed when the
 * metrics are collected; the duration histogram gets this one attributes object (read-only) instead of a new one.
 */
interface RequestSeries {
  attributes: Attributes;
  count: number;
  errors: number;
  errorAttributes: Attributes;
}

/** Distinct attribute sets kept per process, like the SDK's own cardinality limit; the rest share one series. */
const SERIES_LIMIT = 2000;
const requestSeries = new Map<string, RequestSeries>();
const OVERFLOW: RequestSeries = {
  attributes: { 'otel.metric.overflow': true },
  count: 0,
  errors: 0,
  errorAttributes: { 'otel.metric.overflow': true },
};
/** Requests in flight per service, observed at collection like the counters above. */
const activeByService = new Map<string, { attributes: Attributes; count: number }>();

function seriesFor(service: string, method: string, route: string, statusCode: number): RequestSeries {
  const key = `${service} ${method} ${statusCode} ${route}`;
  let series = requestSeries.get(key);
  if (series) return series;
  if (requestSeries.size >= SERIES_LIMIT) return OVERFLOW;
  series = {
    attributes: {
      'keel.service': service,
      'http.request.method': method,
      'http.route': route,
      'http.response.status_code': statusCode,
    },
    count: 0,
    errors: 0,
    errorAttributes: { 'keel.service': service, 'http.route': route },
  };
  requestSeries.set(key, series);
  return series;
}

/** The attributes of `keel.outbound.duration`, one object per peer and outcome. */
const outboundAttributes = new Map<string, Attributes>();
function outboundAttributesFor(peer: OutboundPeer, outcome: 'ok' | 'error'): Attributes {
  const key = `${peer} ${outcome}`;
  let attributes = outboundAttributes.get(key);
  if (!attributes) {
    attributes = { 'keel.peer': peer, outcome };
    outboundAttributes.set(key, attributes);
  }
  return attributes;
}

interface TelemetryState {
  api: typeof import('@opentelemetry/api');
  /** Present only when OTLP trace export is configured: spans are then recorded and exported. */
  tracer: Tracer | undefined;
  meter: Meter;
  instruments: Instruments;
  prometheusReader: MetricReader;
  serialize: (metrics: ResourceMetrics) => string;
  flush: () => Promise<void>;
  otlpTraces: boolean;
  otlpMetrics: boolean;
}

const activeSpan = new AsyncLocalStorage<ActiveSpan>();
const spanListeners = new Set<(span: FinishedSpan) => void>();
const queueSources = new Set<(observe: (queue: string, depth: number) => void) => Promise<void>>();
let loading: Promise<TelemetryState> | undefined;
let state: TelemetryState | undefined;

const envFlag = (env: NodeJS.ProcessEnv, name: string) => (env[name] ?? '').trim();

/** Whether the standard OTEL_* variables ask for OTLP export of one signal. */
function otlpWanted(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): boolean {
  if (envFlag(env, 'OTEL_SDK_DISABLED').toLowerCase() === 'true') return false;
  if (envFlag(env, `OTEL_${signal}_EXPORTER`).toLowerCase() === 'none') return false;
  return (
    envFlag(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== '' || envFlag(env, `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`) !== ''
  );
}

async function load(env: NodeJS.ProcessEnv): Promise<TelemetryState> {
  const [api, sdkMetrics, resources, prometheus] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-prometheus'),
  ]);
  const otlpTraces = otlpWanted(env, 'TRACES');
  const otlpMetrics = otlpWanted(env, 'METRICS');
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) override the default name.
  const resource = resources
    .resourceFromAttributes({ 'service.name': 'keel' })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));

  let tracer: Tracer | undefined;
  const flushers: (() => Promise<void>)[] = [];
  if (otlpTraces) {
    const [traceSdk, traceExporter] = await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-http'),
    ]);
    // The provider reads OTEL_TRACES_SAMPLER(_ARG), span limits and OTEL_BSP_* itself; the exporter reads the
    // endpoint, headers, timeout and compression variables.
    const provider = new traceSdk.BasicTracerProvider({
      resource,
      spanProcessors: [new traceSdk.BatchSpanProcessor(new traceExporter.OTLPTraceExporter())],
    });
    tracer = provider.getTracer('keel');
    flushers.push(() => provider.forceFlush());
  }

  const prometheusReader = new prometheus.PrometheusExporter({ preventServerStart: true });
  const readers: MetricReader[] = [prometheusReader];
  if (otlpMetrics) {
    const metricExporter = await import('@opentelemetry/exporter-metrics-otlp-http');
    const interval = Number(envFlag(env, 'OTEL_METRIC_EXPORT_INTERVAL')) || 60_000;
    readers.push(
      new sdkMetrics.PeriodicExportingMetricReader({
        exporter: new metricExporter.OTLPMetricExporter(),
        exportIntervalMillis: interval,
        exportTimeoutMillis: Math.min(interval, 30_000),
      }),
    );
  }
  const meterProvider = new sdkMetrics.MeterProvider({ resource, readers });
  flushers.push(() => meterProvider.forceFlush());
  const meter = meterProvider.getMeter('keel');
  const serializer = new prometheus.PrometheusSerializer();
  const loaded: TelemetryState = {
    api,
    tracer,
    meter,
    instruments: createInstruments(meter),
    prometheusReader,
    serialize: (metrics) => serializer.serialize(metrics),
    flush: async () => {
      await Promise.all(flushers.map((flush) => flush()));
    },
    otlpTraces,
    otlpMetrics,
  };
  observeRuntime(meter);
  return loaded;
}

/** An observable instrument with its callback added. */
function observed<T extends ObservableCounter | ObservableUpDownCounter>(
  instrument: T,
  callback: (result: ObservableResult) => void,
): T {
  instrument.addCallback(callback);
  return instrument;
}

/** The callback that reports one count of every request series that has counted something. */
function observeSeries(count: 'count' | 'errors', attributes: 'attributes' | 'errorAttributes') {
  return (result: ObservableResult) => {
    for (const series of [...requestSeries.values(), OVERFLOW])
      if (series[count] > 0) result.observe(series[count], series[attributes]);
  };
}

function createInstruments(meter: Meter): Instruments {
  const queueDepth = meter.createObservableGauge('keel.queue.depth', {
    description: 'Work waiting to be picked up, per queue (executions, outbox deliveries).',
  });
  queueDepth.addCallback(async (result: ObservableResult) => {
    await Promise.all([...queueSources].map((source) => source((queue, depth) => result.observe(depth, { queue }))));
  });
  return {
    requestDuration: meter.createHistogram('http.server.request.duration', {
      unit: 's',
      description: 'Duration of HTTP server requests, by service, method, route pattern and status code.',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    requests: observed(
      meter.createObservableCounter('keel.http.server.requests', {
        description: 'Requests answered, by service, method, route pattern and status code.',
      }),
      observeSeries('count', 'attributes'),
    ),
    activeRequests: observed(
      meter.createObservableUpDownCounter('http.server.active_requests', {
        description: 'Requests in flight (an autoscaling signal).',
      }),
      (result) => {
        for (const active of activeByService.values()) result.observe(active.count, active.attributes);
      },
    ),
    requestErrors: observed(
      meter.createObservableCounter('keel.http.server.errors', {
        description: 'Requests answered with a 5xx status, by service and route pattern.',
      }),
      observeSeries('errors', 'errorAttributes'),
    ),
    outboundDuration: meter.createHistogram('keel.outbound.duration', {
      unit: 's',
      description: 'Duration of outgoing calls to model providers, tool servers and webhook receivers, by outcome.',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    queueDepth,
  };
}

/** The autoscaling signals of this process, as `runtimeSignals` reports them. */
export interface RuntimeSignals {
  /** 99th percentile of the event-loop delay over the last minute or so, in ms. */
  eventLoopDelayP99Ms: number;
  /** Share of time the event loop was busy since the previous reading (0–1). */
  eventLoopUtilization: number;
  /** HTTP requests in flight across the listeners of this process. */
  activeRequests: number;
  heapUsedBytes: number;
}

const eventLoopDelay = monitorEventLoopDelay({ resolution: 20 });
let lastUtilization = performance.eventLoopUtilization();
let activeRequestCount = 0;

/** Event-loop delay and utilization, in-flight requests and heap: the signals an autoscaler reads. */
export function runtimeSignals(): RuntimeSignals {
  const now = performance.eventLoopUtilization();
  const utilization = performance.eventLoopUtilization(now, lastUtilization).utilization;
  lastUtilization = now;
  const p99 = eventLoopDelay.count > 0 ? eventLoopDelay.percentile(99) / 1e6 : 0;
  return {
    eventLoopDelayP99Ms: Math.round(p99 * 100) / 100,
    eventLoopUtilization: Math.round(utilization * 1000) / 1000,
    activeRequests: activeRequestCount,
    heapUsedBytes: process.memoryUsage().heapUsed,
  };
}

function observeRuntime(meter: Meter): void {
  eventLoopDelay.enable();
  // A rolling window: the histogram restarts every minute so the percentile follows the current load.
  setInterval(() => eventLoopDelay.reset(), 60_000).unref();
  meter
    .createObservableGauge('nodejs.eventloop.delay.p99', {
      unit: 's',
      description: 'Event-loop delay, 99th percentile.',
    })
    .addCallback((result) => result.observe(runtimeSignals().eventLoopDelayP99Ms / 1000));
  meter
    .createObservableGauge('nodejs.eventloop.utilization', { description: 'Share of time the event loop was busy.' })
    .addCallback((result) => result.observe(runtimeSignals().eventLoopUtilization));
  meter
    .createObservableGauge('process.memory.heap_used', { unit: 'By', description: 'V8 heap in use.' })
    .addCallback((result) => result.observe(process.memoryUsage().heapUsed));
}

/**
 * Loads the OpenTelemetry SDK once per process (metrics always, for the Prometheus endpoint; OTLP trace and metric
 * export when the standard OTEL_* variables ask for it). Lazy, so commands that serve nothing never load it.
 */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  loading ??= load(env).then((loaded) => {
    state = loaded;
    return loaded;
  });
  return loading.then(() => undefined);
}

/** Exports every span and metric recorded so far (tests and shutdown). */
export async function flushTelemetry(): Promise<void> {
  await state?.flush();
}

/** Whether spans are recorded and exported over OTLP. */
export function tracingExported(): boolean {
  return state?.tracer !== undefined;
}

function sdkContext(parent: TraceContext | undefined): Context {
  const api = state!.api;
  if (!parent) return api.ROOT_CONTEXT;
  const span = (parent as ActiveSpan).span;
  if (span) return api.trace.setSpan(api.ROOT_CONTEXT, span);
  return api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.sampled ? 1 : 0,
    isRemote: true,
  });
}

const KIND_CODES: Record<SpanKindName, number> = {
  server: SPAN_KIND_SERVER,
  client: SPAN_KIND_CLIENT,
  internal: SPAN_KIND_INTERNAL,
};

/** Starts a span under `parent` (the SDK's span when tracing is exported; a bare context otherwise). */
function startSpan(
  name: string,
  kind: SpanKindName,
  parent: (TraceContext & { tenant?: string }) | undefined,
  attributes: Attributes,
): ActiveSpan {
  const tracer = state?.tracer;
  const base = { name, kind, startedAt: Date.now(), parentSpanId: parent?.spanId, tenant: parent?.tenant };
  if (tracer) {
    const span = tracer.startSpan(name, { kind: KIND_CODES[kind], attributes }, sdkContext(parent));
    const context = span.spanContext();
    return { ...base, traceId: context.traceId, spanId: context.spanId, sampled: (context.traceFlags & 1) === 1, span };
  }
  return { ...base, traceId: parent?.traceId ?? newTraceId(), spanId: newSpanId(), sampled: parent?.sampled ?? false };
}

function endSpan(active: ActiveSpan, failure: string | undefined, attributes: Attributes = {}): void {
  if (active.span) {
    active.span.setAttributes(attributes);
    if (failure !== undefined) active.span.setStatus({ code: STATUS_ERROR, message: failure });
    active.span.end();
  }
  if (spanListeners.size === 0) return;
  const finished: FinishedSpan = {
    traceId: active.traceId,
    spanId: active.spanId,
    parentSpanId: active.parentSpanId,
    tenant: active.tenant,
    name: active.name,
    kind: active.kind,
    peer: active.peer,
    startedAt: active.startedAt,
    durationMs: Date.now() - active.startedAt,
    failed: failure !== undefined,
    attributes,
  };
  for (const listener of spanListeners) listener(finished);
}

/**
 * Calls `listener` with every span that ends in this process (server, client and internal), traced or not; the
 * engine stores them as its per-realm logs and timelines. Returns the function that removes the listener.
 */
export function onSpanEnd(listener: (span: FinishedSpan) => void): () => void {
  spanListeners.add(listener);
  return () => spanListeners.delete(listener);
}

/** Marks the current span (and the spans it starts from now on) as work of `tenant`. */
export function setSpanTenant(tenant: string): void {
  const active = activeSpan.getStore();
  if (active) active.tenant = tenant;
}

/** The span the current code runs in, if any. */
export function currentSpan(): ActiveSpan | undefined {
  return activeSpan.getStore();
}

/** The trace id of the current request or job, if any: the correlation id of its logs and events. */
export function currentTraceId(): string | undefined {
  return activeSpan.getStore()?.traceId;
}

/** The `traceparent` to send on an outgoing call made from the current span (a new trace when there is none). */
export function currentTraceparent(): string {
  const active = activeSpan.getStore();
  return formatTraceparent(active ?? { traceId: newTraceId(), spanId: newSpanId(), sampled: false });
}

/**
 * Runs `work` as a continuation of trace `traceId` (work queued by a request and run later, e.g. by a worker):
 * spans it starts join that trace and belong to `tenant`.
 */
export function continueTrace<T>(traceId: string, tenant: string | undefined, work: () => T): T {
  return activeSpan.run(
    {
      traceId,
      spanId: newSpanId(),
      sampled: true,
      tenant,
      name: 'continuation',
      kind: 'internal',
      startedAt: Date.now(),
    },
    work,
  );
}

/** Runs `work` inside `span` (so the calls it makes are its children). */
export function runInSpan<T>(span: ActiveSpan, work: () => T): T {
  return activeSpan.run(span, work);
}

/**
 * Starts the server span of an incoming request: a child of the caller's `traceparent` when it is valid, a new
 * trace otherwise. The caller ends it with `endServerSpan`.
 */
export function startServerSpan(traceparent: string | string[] | undefined, name: string): ActiveSpan {
  return startSpan(name, 'server', parseTraceparent(traceparent), {});
}

/** Ends a request's server span and records its duration, status and route in the HTTP metrics. */
export function endServerSpan(
  span: ActiveSpan,
  request: { service: string; method: string; route: string; statusCode: number; seconds: number },
): void {
  const series = seriesFor(request.service, request.method, request.route, request.statusCode);
  // The span's name and attributes are only needed when someone reads them: the SDK span or a listener.
  if (span.span || spanListeners.size > 0) {
    span.name = `${request.method} ${request.route}`;
    if (span.span) span.span.updateName(span.name);
    endSpan(span, request.statusCode >= 500 ? `HTTP ${request.statusCode}` : undefined, series.attributes);
  }
  series.count++;
  if (request.statusCode >= 500) series.errors++;
  state?.instruments.requestDuration.record(request.seconds, series.attributes);
}

/** Counts a request in flight (+1 when it starts, -1 when it ends). */
export function countActiveRequest(service: string, delta: 1 | -1): void {
  activeRequestCount += delta;
  let active = activeByService.get(service);
  if (!active) {
    active = { attributes: { 'keel.service': service }, count: 0 };
    activeByService.set(service, active);
  }
  active.count += delta;
}

/**
 * Runs an internal step (an execution step, a flow node) as a child span of the current one: traced when the SDK
 * records, a no-op wrapper otherwise.
 */
export async function withSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  const span = startSpan(name, 'internal', activeSpan.getStore(), attributes);
  try {
    const result = await activeSpan.run(span, work);
    endSpan(span, undefined, attributes);
    return result;
  } catch (error) {
    endSpan(span, (error as Error)?.name ?? 'error', attributes);
    throw error;
  }
}

/** The span `withStepSpan` runs work in: its ids, and attributes the work adds once it knows them. */
export interface StepSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  /** Adds attributes to the span (recorded when it ends: an outcome, a code). */
  set(attributes: Attributes): void;
}

/**
 * Runs a step (a flow node) as an internal child span of the current one, with attributes `work` adds as it learns
 * them. With `activate: false` the span is not made current, so `work` must start no span of its own (pure
 * computations): that skips an AsyncLocalStorage switch. A throw ends the span failed with the error's name. Without
 * OTLP export no SDK span is made (ids come from a pooled random buffer), so the cost is a few small objects.
 */
export async function withStepSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: StepSpan) => Promise<T>,
  options: { activate?: boolean } = {},
): Promise<T> {
  const span = startSpan(name, 'internal', activeSpan.getStore(), attributes);
  const recorded: Attributes = { ...attributes };
  const handle: StepSpan = {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    set: (more) => Object.assign(recorded, more),
  };
  try {
    const result = await (options.activate === false ? work(handle) : activeSpan.run(span, () => work(handle)));
    endSpan(span, undefined, recorded);
    return result;
  } catch (error) {
    endSpan(span, (error as Error)?.name ?? 'error', recorded);
    throw error;
  }
}

/** Where queued work came from: the W3C `traceparent` of the span that queued it and that span's tenant. */
export interface SpanOrigin {
  traceparent: string;
  tenant: string | undefined;
}

/** The origin of work queued now from the current span (to continue its trace later), if there is a span. */
export function spanOrigin(): SpanOrigin | undefined {
  const active = activeSpan.getStore();
  return active ? { traceparent: formatTraceparent(active), tenant: active.tenant } : undefined;
}

export interface ClientSpanOptions<T> {
  /**
   * A stored `traceparent` (work done later, such as webhook deliveries): the span is its child instead of the
   * current span's, and belongs to `tenant`.
   */
  parent?: string | null | undefined;
  tenant?: string | null | undefined;
  /** The HTTP status the call answered (recorded as `http.response.status_code`; 5xx marks the span failed). */
  statusOf?: (result: T) => number;
}

/**
 * Runs an outgoing call as a CLIENT span, a child of the current span (or of `options.parent`): `work` gets the
 * `traceparent` to send, and the call's duration and outcome land in `keel.outbound.duration`.
 */
export async function withClientSpan<T>(
  name: string,
  peer: OutboundPeer,
  attributes: Attributes,
  work: (traceparent: string) => Promise<T>,
  options: ClientSpanOptions<T> = {},
): Promise<T> {
  const spanAttributes: Attributes = { 'keel.peer': peer, ...attributes };
  const stored = options.parent ? parseTraceparent(options.parent) : undefined;
  const span = startSpan(
    name,
    'client',
    stored ? { ...stored, tenant: options.tenant ?? undefined } : activeSpan.getStore(),
    spanAttributes,
  );
  span.peer = peer;
  const started = performance.now();
  let failure: string | undefined;
  try {
    const result = await activeSpan.run(span, () => work(formatTraceparent(span)));
    if (options.statusOf) {
      const status = options.statusOf(result);
      spanAttributes['http.response.status_code'] = status;
      if (status >= 500) failure = `HTTP ${status}`;
    }
    return result;
  } catch (error) {
    failure = (error as Error)?.name ?? 'error';
    throw error;
  } finally {
    endSpan(span, failure, spanAttributes);
    state?.instruments.outboundDuration.record(
      (performance.now() - started) / 1000,
      outboundAttributesFor(peer, failure === undefined ? 'ok' : 'error'),
    );
  }
}

/**
 * Adds a queue to the `keel.queue.depth` gauge: `source` reports depths when metrics are collected. Returns the
 * function that removes it (call it when the service closes).
 */
export function observeQueueDepth(
  source: (observe: (queue: string, depth: number) => void) => Promise<void>,
): () => void {
  queueSources.add(source);
  return () => queueSources.delete(source);
}

/** One collection of every metric of the process (after `startTelemetry`). */
export async function collectMetrics(): Promise<ResourceMetrics> {
  if (!state) await startTelemetry();
  const { resourceMetrics } = await state!.prometheusReader.collect();
  return resourceMetrics;
}

/** The process's metrics in the Prometheus text exposition format (version 0.0.4). */
export async function prometheusText(): Promise<string> {
  const metrics = await collectMetrics();
  return state!.serialize(metrics);
}
