// One execution of a flow (a model node, then an MCP tool node) is one trace: an OTLP/HTTP collector double on
// 127.0.0.1 receives the engine's server span, the execution's span, the provider call and the tool call with the
// caller's trace id, and the provider double and the MCP server both receive a traceparent of that trace. Each flow
// node's execution is a span under the execution's span (ids, type, outcome; no payload), the provider and tool calls
// are children of their node's span, and the trace timeline route shows the steps under the same span ids.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { flushTelemetry } from '@keel/core';
import { waitUntil } from '@keel/core/testing';
import { createExecutionWorker, type ExecutionWorker } from '../src/executions/execution-worker.ts';
import { BASE_CONFIG, publishedFlow } from './execution-helper.ts';
import { startMcpServer } from './mcp-servers.ts';
import { setupAgent, sharedRuntime, startUpstream, testDatabaseTargets } from './runtime-helper.ts';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
  status?: { code?: number };
}

/** One attribute of an exported span (OTLP JSON carries ints as strings or numbers). */
const attribute = (span: ExportedSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

/** The collector double: every span of every OTLP/HTTP JSON export, with its resource's service.name. */
const spans: ExportedSpan[] = [];
const collector = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    if (req.url === '/v1/traces') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = resourceSpans.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value
          ?.stringValue;
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? []) spans.push({ ...span, service });
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
after(() => new Promise<void>((resolve) => collector.close(() => resolve())));
// The standard variables, read when the first app of the process loads the SDK.
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
process.env.OTEL_SERVICE_NAME = 'keel-otlp-test';

for (const target of testDatabaseTargets()) {
  describe(`OpenTelemetry export of one flow execution (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });
    let worker: ExecutionWorker | undefined;
    after(async () => {
      await worker?.stop();
    });

    test('engine, provider and tool call spans share the caller traceparent trace id', async (t) => {
      const TRACE_ID = randomBytes(16).toString('hex');
      const engine = await shared.fresh();
      worker = createExecutionWorker(engine.runtime, { concurrency: 2, leaseMs: 3000, pollMs: 50 });
      engine.runtime.extensions.executions = worker;
      worker.start();
      const upstream = await startUpstream(t, () => ({ content: 'TRAIL-1' }));
      const mcp = await startMcpServer(t, { label: 'T' });
      const server = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
        token: engine.a.token,
        body: { name: `otlp-${Math.random().toString(36).slice(2, 6)}`, url: mcp.url, auto_discover: true },
      });
      assert.equal(server.status, 201, JSON.stringify(server.body));
      const { agentId } = await setupAgent(engine, engine.a, upstream.url, {
        config: { allowed_mcp_servers: [server.body.id] },
        settings: { max_node_retries: 0, retry_base_ms: 10 },
      });
      const nodes = [
        { id: 'think', type: 'ai', instructions: 'Name one SKU', input: { var: 'input.message' }, next: 'call' },
        { id: 'call', type: 'tool', tool: 'lookup_stock', arguments: { object: { sku: 'TRAIL-1' } }, next: 'done' },
        { id: 'done', type: 'output', action: 'DATA_RESULT', data: { var: 'vars.call' } },
      ];
      const flow = await engine.call('POST', '/api/v1/runtime/flows', {
        token: engine.a.token,
        body: { name: 'Traced', config: { ...BASE_CONFIG, nodes } },
      });
      assert.equal(flow.status, 201, JSON.stringify(flow.body));
      const fixture = await engine.call('POST', `/api/v1/runtime/flows/${flow.body.id}/fixtures`, {
        token: engine.a.token,
        body: {
          name: 'smoke',
          input: { message: 'shoes' },
          mocks: { generate: { think: 'TRAIL-1' }, tools: { lookup_stock: { ok: true } } },
          expect: { state: 'succeeded' },
        },
      });
      assert.equal(fixture.status, 201, JSON.stringify(fixture.body));
      const tested = await engine.call('POST', `/api/v1/runtime/flows/${flow.body.id}/test`, {
        token: engine.a.token,
        body: {},
      });
      assert.equal(tested.body.passed, true, JSON.stringify(tested.body));
      await engine.call('POST', `/api/v1/runtime/flows/${flow.body.id}/activate`, { token: engine.a.token, body: {} });

      const queued = await engine.call('POST', '/api/v1/runtime/executions', {
        token: engine.a.token,
        headers: { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` },
        body: { flow_id: flow.body.id, agent_id: agentId, input: { message: 'shoes' }, max_retries: 0 },
      });
      assert.equal(queued.status, 202, JSON.stringify(queued.body));
      assert.equal(queued.headers['x-request-id'], TRACE_ID);
      assert.equal(queued.body.trace_id, TRACE_ID);
      let last: any;
      await waitUntil(async () => {
        last = (await engine.call('GET', `/api/v1/runtime/executions/${queued.body.id}`, { token: engine.a.token }))
          .body;
        return ['succeeded', 'terminal_failure', 'retryable_failure'].includes(last.state);
      }, 15_000);
      assert.equal(last.state, 'succeeded', JSON.stringify(last));

      // The provider and the MCP server were called with a traceparent of the caller's trace.
      const providerCall = upstream.calls.at(-1)!;
      assert.match(String(providerCall.headers.traceparent), new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
      assert.ok(mcp.calls.some((call) => call.name === 'lookup_stock'));
      assert.ok(mcp.traceparents.some((value) => value.startsWith(`00-${TRACE_ID}-`)));

      await flushTelemetry();
      await waitUntil(async () => spans.filter((span) => span.traceId === TRACE_ID).length >= 7, 10_000);
      const trace = spans.filter((span) => span.traceId === TRACE_ID);
      const names = trace.map((span) => span.name);
      assert.ok(names.includes('POST /api/v1/runtime/executions'), names.join(', '));
      assert.ok(names.includes('execution.run'), names.join(', '));
      const providerSpan = trace.find((span) => span.name.startsWith('chat'));
      const toolSpan = trace.find((span) => span.name === 'tools/call lookup_stock');
      assert.ok(providerSpan && toolSpan, names.join(', '));
      assert.equal(providerSpan.kind, 3, 'SPAN_KIND_CLIENT in OTLP');
      // The provider received the span id of its CLIENT span as parent.
      assert.equal(String(providerCall.headers.traceparent).split('-')[2], providerSpan.spanId);
      const serverSpan = trace.find((span) => span.name === 'POST /api/v1/runtime/executions')!;
      assert.equal(serverSpan.parentSpanId, 'b7ad6b7169203331');
      assert.ok(
        trace.every((span) => span.service === 'keel-otlp-test'),
        'OTEL_SERVICE_NAME is honoured',
      );

      // Per-node spans: one per node execution, children of the execution's span, with id, type and outcome.
      const run = trace.find((span) => span.name === 'execution.run')!;
      const nodeSpans = trace.filter((span) => span.name.startsWith('flow.node '));
      assert.deepEqual(nodeSpans.map((span) => span.name).sort(), [
        'flow.node ai',
        'flow.node output',
        'flow.node tool',
      ]);
      for (const span of nodeSpans) {
        assert.equal(span.parentSpanId, run.spanId, `${span.name} is a child of execution.run`);
        assert.equal(attribute(span, 'keel.flow.node.outcome'), 'succeeded');
        assert.equal(attribute(span, 'keel.execution.id'), queued.body.id);
        assert.equal(attribute(span, 'keel.flow.node.type'), span.name.slice('flow.node '.length));
      }
      const node = (id: string) => nodeSpans.find((span) => attribute(span, 'keel.flow.node.id') === id)!;
      assert.equal(providerSpan.parentSpanId, node('think').spanId, 'the provider call is a child of its node');
      assert.equal(toolSpan.parentSpanId, node('call').spanId, 'the tool call is a child of its node');
      assert.equal(attribute(node('call'), 'keel.flow.node.attempts'), 1);
      const exported = JSON.stringify(nodeSpans);
      for (const payload of ['shoes', 'TRAIL-1', 'Name one SKU'])
        assert.ok(!exported.includes(payload), `no payload (${payload}) in node spans`);

      // The trace timeline shows the steps (from the execution's step log) under the exported span ids.
      const timeline = await engine.call('GET', `/api/v1/observability/traces/${TRACE_ID}`, { token: engine.a.token });
      assert.equal(timeline.status, 200, JSON.stringify(timeline.body));
      const steps = timeline.body.events.filter((event: any) => event.name.startsWith('flow.node '));
      assert.deepEqual(
        steps.map((event: any) => [
          event.attributes['keel.flow.node.id'],
          event.kind,
          event.span_id,
          event.parent_span_id,
        ]),
        ['think', 'call', 'done'].map((id) => [id, 'step', node(id).spanId, run.spanId]),
      );
      assert.ok(steps.every((event: any) => event.attributes['keel.flow.node.outcome'] === 'succeeded'));
      assert.ok(!JSON.stringify(steps).includes('shoes'), 'no payload in the timeline');
      const order = timeline.body.events.map((event: any) => event.name);
      assert.ok(order.indexOf('execution.run') < order.indexOf('flow.node ai'), order.join(', '));
    });

    test('a failed node ends its span failed with its code; the timeline shows it beside the stored steps', async () => {
      const TRACE_ID = randomBytes(16).toString('hex');
      const engine = await shared.fresh();
      const nodes = [
        { id: 'start', type: 'input', next: 'call' },
        { id: 'call', type: 'tool', tool: 'no_such_tool', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'never' },
      ];
      const flow = await publishedFlow(engine, engine.a.token, 'Failing', nodes);
      const run = await engine.call('POST', `/api/v1/runtime/flows/${flow.id}/execute`, {
        token: engine.a.token,
        headers: { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` },
        body: { input: {} },
      });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      assert.equal(run.body.state, 'terminal_failure');
      assert.equal(run.body.error.code, 'TOOL_UNAVAILABLE');

      await flushTelemetry();
      await waitUntil(
        async () => spans.some((span) => span.traceId === TRACE_ID && span.name === 'flow.node tool'),
        10_000,
      );
      const failed = spans.find((span) => span.traceId === TRACE_ID && span.name === 'flow.node tool')!;
      assert.equal(failed.status?.code, 2, 'STATUS_CODE_ERROR');
      assert.equal(attribute(failed, 'keel.flow.node.outcome'), 'failed');
      assert.equal(attribute(failed, 'keel.flow.node.error_code'), 'TOOL_UNAVAILABLE');

      const timeline = await engine.call('GET', `/api/v1/observability/traces/${TRACE_ID}`, { token: engine.a.token });
      assert.equal(timeline.status, 200, JSON.stringify(timeline.body));
      const steps = timeline.body.events.filter((event: any) => event.name.startsWith('flow.node '));
      assert.deepEqual(
        steps.map((event: any) => [event.name, event.failed, event.attributes['keel.flow.node.outcome']]),
        [
          ['flow.node input', false, 'succeeded'],
          ['flow.node tool', true, 'failed'],
        ],
      );
      assert.equal(steps[1].span_id, failed.spanId);
      assert.equal(steps[1].attributes['keel.flow.node.error_code'], 'TOOL_UNAVAILABLE');
      assert.equal(timeline.body.failed, true);
      // Another realm sees none of it.
      assert.equal(
        (await engine.call('GET', `/api/v1/observability/traces/${TRACE_ID}`, { token: engine.b.token })).status,
        404,
      );
    });
  });
}
