import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import {
  type App,
  createApp,
  currentTraceparent,
  type HttpConfig,
  newSpanId,
  newTraceId,
  observeQueueDepth,
  parseTraceparent,
  withClientSpan,
} from '../src/index.ts';

const http: HttpConfig = {
  maxRequestSizeBytes: 4096,
  corsAllowedOrigins: [],
  securityHeadersEnabled: true,
  rateLimitMax: 1000,
  rateLimitWindowMs: 60_000,
};

async function buildApp(
  t: { after: (fn: () => Promise<void>) => void },
  extra: Partial<HttpConfig> = {},
): Promise<App> {
  const app = await createApp({
    name: 'teltest',
    version: '1',
    description: 'x',
    http: { ...http, ...extra },
    logLevel: 'silent',
  });
  // The handler awaits a timer and then reads the trace context: the request's span survives async hops.
  app.post('/work/:id', async (request) => {
    assert.ok(request.body, 'the body was parsed before the handler');
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { traceparent: currentTraceparent() };
  });
  app.get('/fail', async () => {
    throw new Error('boom');
  });
  await app.ready();
  t.after(() => app.close());
  return app;
}

const caller = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('telemetry', () => {
  test('trace and span ids cut from the random pool are well formed and never repeat across refills', () => {
    const traces = Array.from({ length: 2000 }, () => newTraceId());
    const spans = Array.from({ length: 2000 }, () => newSpanId());
    assert.ok(traces.every((id) => /^[0-9a-f]{32}$/.test(id)));
    assert.ok(spans.every((id) => /^[0-9a-f]{16}$/.test(id)));
    assert.equal(new Set(traces).size, traces.length);
    assert.equal(new Set(spans).size, spans.length);
  });

  test('a valid traceparent is continued: the request id is its trace id, and handlers see a child span', async (t) => {
    const app = await buildApp(t);
    // A real socket: the body arrives in the socket's async context, after the onRequest hook.
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const sent = await fetch(`${address}/work/1`, {
      method: 'POST',
      headers: { traceparent: caller, 'content-type': 'application/json' },
      body: JSON.stringify({ a: 'x'.repeat(2000) }),
    });
    const response = { headers: Object.fromEntries(sent.headers), json: async () => sent.json() };
    assert.equal(response.headers['x-request-id'], '4bf92f3577b34da6a3ce929d0e0e4736');
    const inner = parseTraceparent((await response.json()).traceparent);
    assert.equal(inner?.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.notEqual(inner?.spanId, '00f067aa0ba902b7');
  });

  test('a malformed traceparent starts a new trace; so does none', async (t) => {
    const app = await buildApp(t);
    for (const traceparent of ['00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'ff-x', 'garbage']) {
      const response = await app.inject({ method: 'POST', url: '/work/1', headers: { traceparent }, payload: {} });
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['x-request-id']), /^[0-9a-f]{32}$/);
      assert.notEqual(response.headers['x-request-id'], '00000000000000000000000000000000');
      assert.equal(parseTraceparent(response.json().traceparent)?.traceId, response.headers['x-request-id']);
    }
  });

  test('an outgoing call gets a traceparent of the same trace with its own span', async (t) => {
    const app = await buildApp(t);
    app.log.level = 'silent';
    const sent = await withClientSpan('call', 'webhook', {}, async (traceparent) => traceparent, { parent: caller });
    assert.equal(parseTraceparent(sent)?.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.notEqual(parseTraceparent(sent)?.spanId, '00f067aa0ba902b7');
  });

  test('GET /metrics is valid Prometheus text with request, error, latency, outbound, queue and runtime metrics', async (t) => {
    const app = await buildApp(t);
    const stop = observeQueueDepth(async (observe) => observe('executions', 7));
    t.after(stop);
    await app.inject({ method: 'POST', url: '/work/abc', payload: {} });
    await app.inject({ method: 'GET', url: '/fail' });
    await withClientSpan('call', 'provider', {}, async () => 'ok');
    const response = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const families = new Map(parsePrometheusTextFormat(response.body).map((family) => [family.name, family]));
    const duration = families.get('http_server_request_duration');
    assert.ok(duration, [...families.keys()].join(' '));
    assert.equal(duration?.type, 'HISTOGRAM');
    assert.ok(duration.metrics.some((m) => m.buckets?.['+Inf'] !== undefined));
    const requests = families.get('keel_http_server_requests_total');
    const work = requests?.metrics.find((m) => m.labels?.http_route === '/work/:id');
    assert.ok(Number(work?.value) >= 1, 'the request is counted (the counters are per process)');
    assert.equal(work?.labels?.keel_service, 'teltest');
    assert.equal(work?.labels?.http_response_status_code, '200');
    assert.ok(!response.body.includes('/work/abc'), 'paths never appear, only route patterns');
    const errors = families.get('keel_http_server_errors_total');
    assert.equal(errors?.metrics.find((m) => m.labels?.http_route === '/fail')?.value, '1');
    assert.equal(
      requests?.metrics.find((m) => m.labels?.http_route === '/fail')?.labels?.http_response_status_code,
      '500',
    );
    // The parser keeps one flattened sample per labelled histogram, so the labels are checked on the text itself.
    assert.equal(families.get('keel_outbound_duration')?.type, 'HISTOGRAM');
    assert.match(response.body, /^keel_outbound_duration_count\{keel_peer="provider",outcome="ok"[^}]*\} [1-9]/m);
    assert.equal(families.get('keel_queue_depth')?.metrics.find((m) => m.labels?.queue === 'executions')?.value, '7');
    for (const name of ['http_server_active_requests', 'nodejs_eventloop_delay_p99', 'nodejs_eventloop_utilization'])
      assert.ok(families.has(name), `${name} is exported`);
  });

  test('with KEEL_METRICS_TOKEN set, /metrics needs the bearer token', async (t) => {
    const app = await buildApp(t, { metricsToken: 'scrape-token-0123456789' });
    assert.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
    const wrong = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.statusCode, 401);
    const ok = await app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer scrape-token-0123456789' },
    });
    assert.equal(ok.statusCode, 200);
  });
});
