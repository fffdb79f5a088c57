import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  type RuntimeUnderTest,
  setupAgent,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

const OBS = '/api/v1/observability';
const traceparent = (traceId: string) => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
const newTrace = () => randomBytes(16).toString('hex');

async function memberToken(engine: RuntimeUnderTest, role: string): Promise<string> {
  const created = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/identities/services`, {
    token: engine.a.token,
    body: { username: `svc-${role}-${Math.random().toString(36).slice(2, 8)}`, role },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const c = created.body.credentials;
  return (await engine.exchange(c.access_key, c.secret_key)).body.access_token;
}

for (const target of testDatabaseTargets()) {
  describe(`observability (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('logs hold each request of the realm with its trace id, filtered by level, kind, trace and time', async () => {
      const engine = await shared.fresh();
      const trace = newTrace();
      const ok = await engine.call('GET', '/api/v1/runtime/executions', {
        token: engine.a.token,
        headers: { traceparent: traceparent(trace) },
      });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['x-request-id'], trace);
      const missing = await engine.call('GET', '/api/v1/runtime/executions/0193b0a5-0000-7000-8000-000000000000', {
        token: engine.a.token,
      });
      assert.equal(missing.status, 404);

      const byTrace = await engine.call('GET', `${OBS}/logs?trace_id=${trace}`, { token: engine.a.token });
      assert.equal(byTrace.status, 200, JSON.stringify(byTrace.body));
      assert.equal(byTrace.body.data.length, 1);
      const [event] = byTrace.body.data;
      assert.equal(event.kind, 'request');
      assert.equal(event.level, 'info');
      assert.equal(event.name, 'GET /api/v1/runtime/executions');
      assert.equal(event.status_code, 200);
      assert.equal(event.trace_id, trace);
      assert.equal(event.attributes['http.route'], '/api/v1/runtime/executions');

      const warnings = await engine.call('GET', `${OBS}/logs?level=warn&kind=request`, { token: engine.a.token });
      assert.ok(warnings.body.data.length >= 1);
      assert.ok(warnings.body.data.every((e: any) => e.level !== 'info'));
      const notFound = warnings.body.data.find((e: any) => e.trace_id === missing.headers['x-request-id']);
      assert.equal(notFound.status_code, 404);
      assert.equal(notFound.name, 'GET /api/v1/runtime/executions/:id', 'route patterns, never raw paths');

      const future = new Date(Date.now() + 3_600_000).toISOString();
      const none = await engine.call('GET', `${OBS}/logs?since=${encodeURIComponent(future)}`, {
        token: engine.a.token,
      });
      assert.deepEqual(none.body.data, []);
      const inverted = await engine.call(
        'GET',
        `${OBS}/logs?since=${encodeURIComponent(future)}&until=${encodeURIComponent(new Date().toISOString())}`,
        { token: engine.a.token },
      );
      assert.equal(inverted.status, 400);
      assert.equal(inverted.body.error.code, 'RUNTIME_INVALID_REQUEST');
      assert.equal((await engine.call('GET', `${OBS}/logs?level=debug`, { token: engine.a.token })).status, 400);

      const paged = await engine.call('GET', `${OBS}/logs?limit=1`, { token: engine.a.token });
      assert.equal(paged.body.data.length, 1);
      assert.ok(paged.body.next_cursor);
      const next = await engine.call(
        'GET',
        `${OBS}/logs?limit=1&cursor=${encodeURIComponent(paged.body.next_cursor)}`,
        {
          token: engine.a.token,
        },
      );
      assert.notEqual(next.body.data[0].id, paged.body.data[0].id);

      // Realm b sees none of realm a's events, not even by naming the trace.
      const foreign = await engine.call('GET', `${OBS}/logs?trace_id=${trace}`, { token: engine.b.token });
      assert.deepEqual(foreign.body.data, []);
      assert.equal((await engine.call('GET', `${OBS}/logs`, { token: null })).status, 401);
    });

    test('a chat turn is one trace: the request and the provider call in one timeline; a foreign trace is a 404', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t, () => ({ content: 'Hello there' }));
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const session = await engine.call('POST', '/api/v1/runtime/sessions', {
        token: engine.a.token,
        body: { agent_id: ids.agentId, channel: 'web' },
      });
      const trace = newTrace();
      const turn = await engine.call('POST', '/api/v1/runtime/execute', {
        token: engine.a.token,
        headers: { traceparent: traceparent(trace) },
        body: {
          version: '2026-08-22',
          session_id: session.body.session_id,
          resume_token: session.body.resume_token,
          input: { message: 'my email is jane@example.com' },
        },
      });
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      assert.equal(turn.body.trace_id, trace);
      assert.match(String(upstream.calls.at(-1)!.headers.traceparent), new RegExp(`^00-${trace}-`));

      const timeline = await engine.call('GET', `${OBS}/traces/${trace}`, { token: engine.a.token });
      assert.equal(timeline.status, 200, JSON.stringify(timeline.body));
      assert.equal(timeline.body.trace_id, trace);
      const kinds = timeline.body.events.map((e: any) => e.kind);
      assert.ok(kinds.includes('request') && kinds.includes('provider_call'), kinds.join(','));
      const request = timeline.body.events.find((e: any) => e.kind === 'request');
      const provider = timeline.body.events.find((e: any) => e.kind === 'provider_call');
      assert.equal(request.name, 'POST /api/v1/runtime/execute');
      assert.equal(provider.parent_span_id, request.span_id, 'the provider call is a child of the request');
      assert.equal(provider.attributes['gen_ai.request.model'], 'test-model');
      assert.ok(!JSON.stringify(timeline.body).includes('jane@example.com'), 'no message text is stored');

      assert.equal((await engine.call('GET', `${OBS}/traces/${trace}`, { token: engine.b.token })).status, 404);
      assert.equal((await engine.call('GET', `${OBS}/traces/${newTrace()}`, { token: engine.a.token })).status, 404);
      const malformed = await engine.call('GET', `${OBS}/traces/not-a-trace`, { token: engine.a.token });
      assert.equal(malformed.status, 404);
      assert.equal(malformed.body.error.code, 'RUNTIME_NOT_FOUND');

      const metrics = await engine.call('GET', `${OBS}/metrics?window_seconds=600`, { token: engine.a.token });
      assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
      assert.equal(metrics.body.window_seconds, 600);
      assert.ok(metrics.body.requests.count >= 3);
      assert.equal(metrics.body.provider.calls, 1);
      assert.equal(metrics.body.provider.errors, 0);
      assert.ok(metrics.body.requests.latency_ms.p95 >= metrics.body.requests.latency_ms.p50);
      assert.equal(typeof metrics.body.autoscaling.event_loop_delay_p99_ms, 'number');
      assert.equal(metrics.body.queue.queued_executions, 0);
      const foreign = await engine.call('GET', `${OBS}/metrics`, { token: engine.b.token });
      assert.equal(foreign.body.provider.calls, 0, "realm b's metrics do not count realm a's calls");
      assert.equal(
        (await engine.call('GET', `${OBS}/metrics?window_seconds=5`, { token: engine.a.token })).status,
        400,
      );
    });

    test('alert rules fire on the metrics with their history; developers create them, viewers read them', async () => {
      const engine = await shared.fresh();
      const rule = { name: 'Any traffic', metric: 'request_count', operator: 'gte', threshold: 1, window_seconds: 300 };
      const viewer = await memberToken(engine, 'viewer');
      const operator = await memberToken(engine, 'operator');
      for (const token of [viewer, operator]) {
        const denied = await engine.call('POST', `${OBS}/alerts`, { token, body: rule });
        assert.equal(denied.status, 403);
        assert.equal(denied.body.error.code, 'RUNTIME_FORBIDDEN');
      }
      const developer = await memberToken(engine, 'developer');
      const created = await engine.call('POST', `${OBS}/alerts`, {
        token: developer,
        headers: { 'idempotency-key': 'rule-1' },
        body: rule,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.state, 'ok');
      assert.deepEqual(created.body.firings, []);
      const replay = await engine.call('POST', `${OBS}/alerts`, {
        token: developer,
        headers: { 'idempotency-key': 'rule-1' },
        body: rule,
      });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.id, created.body.id);
      const conflict = await engine.call('POST', `${OBS}/alerts`, {
        token: developer,
        headers: { 'idempotency-key': 'rule-1' },
        body: { ...rule, threshold: 2 },
      });
      assert.equal(conflict.status, 409);
      const quiet = await engine.call('POST', `${OBS}/alerts`, {
        token: engine.a.token,
        body: { name: 'Errors', metric: 'error_count', operator: 'gt', threshold: 1000 },
      });
      assert.equal(quiet.body.window_seconds, 300);

      for (const body of [
        { ...rule, metric: 'cpu' },
        { ...rule, operator: 'eq' },
        { ...rule, window_seconds: 10 },
        { ...rule, name: '   ' },
        { ...rule, threshold: '1' },
      ]) {
        const bad = await engine.call('POST', `${OBS}/alerts`, { token: engine.a.token, body });
        assert.equal(bad.status, 400, JSON.stringify(body));
      }

      const listed = await engine.call('GET', `${OBS}/alerts`, { token: viewer });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      const fired = listed.body.data.find((r: any) => r.id === created.body.id);
      assert.equal(fired.state, 'firing', 'the realm had requests in the window');
      assert.equal(fired.firings.length, 1);
      assert.ok(fired.last_value >= 1);
      assert.equal(fired.firings[0].resolved_at, null);
      assert.equal(listed.body.data.find((r: any) => r.id === quiet.body.id).state, 'ok');

      // Reading again does not fire again: one firing per transition.
      const again = await engine.call('GET', `${OBS}/alerts`, { token: viewer });
      assert.equal(again.body.data.find((r: any) => r.id === created.body.id).firings.length, 1);
      const metrics = await engine.call('GET', `${OBS}/metrics`, { token: engine.a.token });
      assert.equal(metrics.body.alerts.firing, 1);
      assert.deepEqual(
        metrics.body.alerts.fired.map((f: any) => f.rule_id),
        [created.body.id],
      );

      const foreign = await engine.call('GET', `${OBS}/alerts`, { token: engine.b.token });
      assert.deepEqual(foreign.body.data, []);
    });
  });
}
