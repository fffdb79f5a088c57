// Durable flow executions under governance and usage: model steps are usage records priced from the provider and
// charged to the realm quota (tokens, cost), tool steps count against the tool-call quota and are usage records;
// a quota used up mid-execution stops it as a retryable failure before the refused step does anything; the pinned
// policy version's allowed_actions decides the output and its allowed_provider_types refuses model steps; a chat
// turn is one request of the quota on every path; REST and public-endpoint tool calls are usage records (an MCP
// error result a failed one); a quota threshold sends `usage.threshold_reached` once per threshold and window
// through the outbox.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createOutboxWorker } from '@keel/core';
import { Webhook } from 'standardwebhooks';
import { createExecutionWorker } from '../src/executions/execution-worker.ts';
import { BASE_CONFIG } from './execution-helper.ts';
import { startReceiver, until } from './helper.ts';
import { defaultTools, startMcpServer } from './mcp-servers.ts';
import {
  type RuntimeUnderTest,
  setupAgent,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

const G = '/api/v1/governance';
const EXECUTIONS = '/api/v1/runtime/executions';
type Context = { after(fn: () => unknown): void };

/** Creates a flow, tests it against one fixture with `mocks` (expected to succeed) and activates it. */
async function activeFlow(
  engine: RuntimeUnderTest,
  token: string,
  nodes: Record<string, unknown>[],
  mocks: Record<string, unknown> = {},
): Promise<string> {
  const created = await engine.call('POST', '/api/v1/runtime/flows', {
    token,
    body: { name: `Flow ${Math.random().toString(36).slice(2, 8)}`, config: { ...BASE_CONFIG, nodes } },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const fixture = await engine.call('POST', `/api/v1/runtime/flows/${id}/fixtures`, {
    token,
    body: { name: 'smoke', input: {}, mocks, expect: { state: 'succeeded' } },
  });
  assert.equal(fixture.status, 201, JSON.stringify(fixture.body));
  const tested = await engine.call('POST', `/api/v1/runtime/flows/${id}/test`, { token, body: {} });
  assert.equal(tested.body.passed, true, JSON.stringify(tested.body));
  const activated = await engine.call('POST', `/api/v1/runtime/flows/${id}/activate`, { token, body: {} });
  assert.equal(activated.status, 200, JSON.stringify(activated.body));
  return id;
}

/** An agent on an upstream double (100 input + 20 output tokens per call, EUR 1 / 2 per million) with a tool server. */
async function agentWithTools(engine: RuntimeUnderTest, t: Context & Parameters<typeof startUpstream>[0]) {
  const upstream = await startUpstream(t, (call) => {
    const system = call.body?.messages?.[0]?.content ?? '';
    return {
      content: system.includes('Choose exactly one') ? '{"choice": "look", "confidence": 0.9}' : 'In stock.',
      usage: { prompt_tokens: 100, completion_tokens: 20 },
    };
  });
  const server = await startMcpServer(t, { tools: defaultTools() });
  const registered = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
    token: engine.a.token,
    body: { name: 'stock', url: server.url, auto_discover: true },
  });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  const ids = await setupAgent(engine, engine.a, upstream.url, {
    provider: { input_price_per_million: 1, output_price_per_million: 2, currency: 'EUR' },
    settings: { max_node_retries: 0, retry_base_ms: 10 },
    config: { allowed_mcp_servers: [registered.body.id] },
  });
  return { ...ids, upstream, server, serverId: registered.body.id as string };
}

async function putQuota(engine: RuntimeUnderTest, body: Record<string, unknown>) {
  const quota = await engine.call('PUT', `${G}/quotas`, {
    token: engine.a.token,
    body: { window_seconds: 3600, ...body },
  });
  assert.equal(quota.status, 200, JSON.stringify(quota.body));
  return quota.body;
}

const execute = (engine: RuntimeUnderTest, flowId: string, agentId: string) =>
  engine.call('POST', `/api/v1/runtime/flows/${flowId}/execute`, {
    token: engine.a.token,
    body: { agent_id: agentId, input: {} },
  });

const lookup = (id: string, next: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'tool',
  tool: 'lookup_stock',
  arguments: { object: { sku: 'TENT-2P' } },
  effect: 'read',
  next,
  ...extra,
});

/** An ai_decision node `route` (is it a stock question?) whose every branch goes to `next`. */
const stockDecision = (next: string) => ({
  id: 'route',
  type: 'ai_decision',
  instructions: 'Does the shopper ask about stock?',
  choices: [
    { key: 'look', description: 'Stock question' },
    { key: 'other', description: 'Anything else' },
  ],
  minimum_confidence: 0.5,
  fallback_choice: 'other',
  branches: { look: next, other: next },
});

/** Creates and activates a policy version with these rules. */
async function activatePolicy(engine: RuntimeUnderTest, name: string, rules: Record<string, unknown>) {
  const created = await engine.call('POST', `${G}/policies`, { token: engine.a.token, body: { name, rules } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const activated = await engine.call('POST', `${G}/policies/${created.body.id}/activate`, { token: engine.a.token });
  assert.equal(activated.status, 200, JSON.stringify(activated.body));
}

/** Queues an execution (no compensation, no retries) for a worker the test runs itself. */
async function queueExecution(engine: RuntimeUnderTest, body: Record<string, unknown>): Promise<string> {
  const created = await engine.call('POST', EXECUTIONS, {
    token: engine.a.token,
    body: { ...body, compensate_on_failure: false, max_retries: 0 },
  });
  assert.equal(created.status, 202, JSON.stringify(created.body));
  return created.body.id as string;
}

for (const target of testDatabaseTargets()) {
  describe(`durable flows: quotas, policy and usage (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });

    /** A fresh realm whose agent has the stock server, and an active flow of one lookup step `one`. */
    const lookupFlow = async (t: Context & Parameters<typeof startUpstream>[0]) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const a = await agentWithTools(engine, t);
      const flowId = await activeFlow(
        engine,
        token,
        [lookup('one', 'done'), { id: 'done', type: 'output', action: 'DATA_RESULT', data: { var: 'vars.one' } }],
        { tools: { lookup_stock: { ok: true } } },
      );
      return { engine, token, a, flowId };
    };

    test('model and tool steps are usage records written with their step, priced from the provider, and charged to the quota', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const a = await agentWithTools(engine, t);
      await putQuota(engine, { max_requests: 100, max_tokens: 1_000_000, max_tool_calls: 100 });
      const flowId = await activeFlow(
        engine,
        token,
        [
          stockDecision('lookup'),
          lookup('lookup', 'answer'),
          { id: 'answer', type: 'ai', instructions: 'Answer briefly', next: 'done' },
          { id: 'done', type: 'output', action: 'RESPOND', content: { var: 'vars.answer' } },
        ],
        {
          decisions: { route: { choice: 'look', confidence: 0.9 } },
          tools: { lookup_stock: { ok: true } },
          generate: { answer: 'In stock.' },
        },
      );
      const run = await execute(engine, flowId, a.agentId);
      assert.equal(run.status, 200, JSON.stringify(run.body));
      assert.equal(run.body.state, 'succeeded', JSON.stringify(run.body));
      assert.equal(a.upstream.calls.length, 2);
      assert.equal(a.server.calls.length, 1);

      const list = await engine.call('GET', '/api/v1/usages?source=flow', { token });
      assert.equal(list.status, 200);
      const records = [...list.body.data].sort((x: any, y: any) => x.step_key.localeCompare(y.step_key));
      assert.deepEqual(
        records.map((r: any) => [r.step_key, r.type, r.name, r.input_tokens, r.output_tokens, r.cost, r.currency]),
        [
          ['answer#1', 'ai', 'test-model', 100, 20, '0.00014', 'EUR'],
          ['lookup#1', 'tool', 'lookup_stock', 0, 0, '0', null],
          ['route#1', 'ai', 'test-model', 100, 20, '0.00014', 'EUR'],
        ],
      );
      for (const record of records) {
        assert.equal(record.flow_execution_id, run.body.id);
        assert.equal(record.execution_id, null);
        assert.equal(record.agent_id, a.agentId);
        assert.equal(record.status, 'succeeded');
      }
      assert.equal(records[0].provider_id, a.providerId);
      assert.equal(records[0].cost_source, 'provider_prices');
      assert.equal(records[1].tool_server_id, a.serverId);
      assert.equal(records[1].unit, 'call');
      // The execution's own usage and the records agree (0.00028 EUR = 280,000,000 picos); nothing else was recorded.
      assert.equal(run.body.usage.cost_picos, '280000000');
      const all = await engine.call('GET', '/api/v1/usages', { token });
      assert.equal(all.body.data.length, 3);

      const summary = await engine.call('GET', '/api/v1/usages/summary?source=flow', { token });
      assert.equal(summary.body.totals.records, 3);
      assert.equal(summary.body.totals.input_tokens, 200);
      assert.equal(summary.body.totals.output_tokens, 40);
      assert.deepEqual(summary.body.totals.cost, { EUR: '0.00028' });
      const stats = await engine.call('GET', '/api/v1/runtime/ai/usage/stats', { token });
      assert.equal(stats.body.providers[0].provider_id, a.providerId);
      assert.equal(stats.body.providers[0].records, 2);
      const tools = await engine.call('GET', '/api/v1/usages/tools/summary', { token });
      assert.deepEqual(
        tools.body.tools.map((row: any) => [row.tool_name, row.tool_server_id, row.records]),
        [['lookup_stock', a.serverId, 1]],
      );
      const exported = await engine.call('POST', '/api/v1/usages/export', { token, body: { format: 'json' } });
      assert.equal(exported.status, 200);
      const rows = (typeof exported.body === 'string' ? JSON.parse(exported.body) : exported.body).data;
      assert.equal(rows.length, 3);
      assert.ok(rows.every((row: any) => row.flow_execution_id === run.body.id && row.source === 'flow'));

      // The realm quota counted the run (one request), its model tokens and its tool call.
      const snapshot = await engine.call('GET', G, { token });
      assert.equal(snapshot.body.quota.usage.requests, 1);
      assert.equal(snapshot.body.quota.usage.tokens, 240);
      assert.equal(snapshot.body.quota.usage.tool_calls, 1);
    });

    test('tokens used up mid-execution: the next model step is refused before it calls anything, a retryable failure until the window ends', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const a = await agentWithTools(engine, t);
      await putQuota(engine, { max_tokens: 100 });
      const flowId = await activeFlow(
        engine,
        token,
        [
          { id: 'first', type: 'ai', instructions: 'Answer', next: 'second' },
          // on_error does not take a quota refusal: the run stops instead of continuing on the fallback.
          { id: 'second', type: 'ai', instructions: 'Answer again', next: 'done', on_error: 'fallback' },
          { id: 'done', type: 'output', action: 'RESPOND', content: { var: 'vars.second' } },
          { id: 'fallback', type: 'output', action: 'RESPOND', content: 'fallback' },
        ],
        { generate: { first: 'one', second: 'two' } },
      );
      const run = await execute(engine, flowId, a.agentId);
      assert.equal(run.status, 200, JSON.stringify(run.body));
      assert.equal(run.body.state, 'retryable_failure', JSON.stringify(run.body));
      assert.equal(run.body.error.code, 'GOVERNANCE_QUOTA_EXCEEDED');
      assert.equal(run.body.error.node_id, 'second');
      assert.match(run.body.error.message, /tokens per 3600 s is used up \(100 of 100\)/);
      const retryAt = Date.parse(run.body.error.retry_at);
      assert.ok(retryAt > Date.now() && retryAt <= Date.now() + 3_600_000, run.body.error.retry_at);
      assert.equal(run.body.action.type, 'ERROR');
      assert.deepEqual(run.body.action.data, { code: 'GOVERNANCE_QUOTA_EXCEEDED', retryable: true });
      assert.equal(a.upstream.calls.length, 1, 'the refused step called no model');
      const events = await engine.call('GET', `${EXECUTIONS}/${run.body.id}/events`, { token });
      const done = events.body.data.filter((e: any) => e.type === 'step.done').map((e: any) => e.data.key);
      assert.deepEqual(done, ['first#1'], 'the refused step was not stored');
      const usage = await engine.call('GET', '/api/v1/usages', { token });
      assert.deepEqual(
        usage.body.data.map((r: any) => r.step_key),
        ['first#1'],
      );
      // A retry is queued no earlier than the end of the quota window.
      const retried = await engine.call('POST', `${EXECUTIONS}/${run.body.id}/retry`, { token });
      assert.equal(retried.status, 200, JSON.stringify(retried.body));
      assert.equal(retried.body.state, 'queued');
      assert.ok(Date.parse(retried.body.run_at) >= retryAt, `${retried.body.run_at} < ${run.body.error.retry_at}`);
    });

    test('tool calls used up mid-execution: the next tool step is refused and never reaches the server', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const a = await agentWithTools(engine, t);
      await putQuota(engine, { max_tool_calls: 1 });
      const flowId = await activeFlow(
        engine,
        token,
        [
          lookup('one', 'two'),
          lookup('two', 'done', { on_error: 'fallback' }),
          { id: 'done', type: 'output', action: 'DATA_RESULT', data: { var: 'vars.two' } },
          { id: 'fallback', type: 'output', action: 'RESPOND', content: 'fallback' },
        ],
        { tools: { lookup_stock: { ok: true } } },
      );
      const run = await execute(engine, flowId, a.agentId);
      assert.equal(run.body.state, 'retryable_failure', JSON.stringify(run.body));
      assert.equal(run.body.error.code, 'GOVERNANCE_QUOTA_EXCEEDED');
      assert.equal(run.body.error.node_id, 'two');
      assert.ok(run.body.error.retry_at);
      assert.equal(a.server.calls.length, 1);
      const usage = await engine.call('GET', '/api/v1/usages?type=tool', { token });
      assert.deepEqual(
        usage.body.data.map((r: any) => [r.source, r.step_key]),
        [['flow', 'one#1']],
      );
    });

    test('the calls of a tool step that failed are usage records too, written with the final state', async (t) => {
      const { engine, token, a, flowId } = await lookupFlow(t);
      a.server.state.failCalls = 503;
      const run = await execute(engine, flowId, a.agentId);
      assert.ok(['retryable_failure', 'terminal_failure'].includes(run.body.state), JSON.stringify(run.body));
      assert.equal(run.body.error.node_id, 'one');
      const usage = await engine.call('GET', '/api/v1/usages', { token });
      assert.ok(usage.body.data.length >= 1);
      for (const record of usage.body.data)
        assert.deepEqual(
          [record.source, record.name, record.status, record.step_key, record.flow_execution_id],
          ['flow', 'lookup_stock', 'failed', 'one#1', run.body.id],
        );
    });

    test("the pinned policy version's allowed_actions decides a durable execution's output, whatever was activated since", async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const flowId = await activeFlow(engine, token, [
        { id: 'done', type: 'output', action: 'RESPOND', content: 'Hello' },
      ]);
      const activate = (actions: string[]) =>
        activatePolicy(engine, `Only ${actions.join(' ')}`, { allowed_actions: actions });
      const queue = () => queueExecution(engine, { flow_id: flowId });
      await activate(['DATA_RESULT']);
      const forbidden = await queue();
      await activate(['RESPOND']);
      const allowed = await queue();
      await activate(['DATA_RESULT']);

      const worker = createExecutionWorker(engine.runtime, { concurrency: 1, leaseMs: 3000, pollMs: 50 });
      t.after(() => worker.stop());
      assert.ok(await worker.runOne(forbidden), 'the worker ran it');
      assert.ok(await worker.runOne(allowed), 'the worker ran it');
      const refused = (await engine.call('GET', `${EXECUTIONS}/${forbidden}`, { token })).body;
      assert.equal(refused.state, 'terminal_failure', JSON.stringify(refused));
      assert.equal(refused.error.code, 'POLICY_ACTION_BLOCKED');
      assert.equal(refused.error.node_id, 'done');
      assert.equal(refused.action.type, 'ERROR');
      assert.equal(refused.action.data.code, 'POLICY_ACTION_BLOCKED');
      const kept = (await engine.call('GET', `${EXECUTIONS}/${allowed}`, { token })).body;
      assert.equal(kept.state, 'succeeded', JSON.stringify(kept));
      assert.equal(kept.action.type, 'RESPOND');
      assert.equal(kept.action.content, 'Hello');
    });

    test('a chat turn is one request of the realm quota: answered directly, through a flow synchronously or queued', async (t) => {
      const N = 3;
      for (const path of ['direct', 'flow sync', 'flow async'] as const) {
        const engine = await shared.fresh();
        const token = engine.a.token;
        const a = await agentWithTools(engine, t);
        const flowId = await activeFlow(engine, token, [
          { id: 'done', type: 'output', action: 'RESPOND', content: 'Hello' },
        ]);
        await putQuota(engine, { max_requests: N });
        const turn = () =>
          path === 'direct'
            ? engine.call('POST', '/api/v1/runtime/ai/chat', {
                token,
                body: { agent_id: a.agentId, messages: [{ role: 'user', content: 'hi' }] },
              })
            : path === 'flow sync'
              ? engine.call('POST', '/api/v1/runtime/ai/chat', {
                  token,
                  body: { agent_id: a.agentId, flow_id: flowId, messages: [{ role: 'user', content: 'hi' }] },
                })
              : engine.call('POST', '/api/v1/runtime/execute', {
                  token,
                  body: { agent_id: a.agentId, flow_id: flowId, mode: 'async', input: { message: 'hi' } },
                });
        for (let i = 1; i <= N; i++) {
          const passed = await turn();
          assert.equal(
            passed.status,
            path === 'flow async' ? 202 : 200,
            `${path} #${i}: ${JSON.stringify(passed.body)}`,
          );
          if (path !== 'flow async')
            assert.equal(passed.body.flow_id, path === 'direct' ? null : flowId, `${path} #${i}`);
        }
        const refused = await turn();
        assert.equal(refused.status, 429, `${path}: ${JSON.stringify(refused.body)}`);
        assert.equal(refused.body.error.code, 'GOVERNANCE_QUOTA_EXCEEDED');
        assert.match(refused.body.error.message, new RegExp(`requests per 3600 s is used up \\(${N} of ${N}\\)`));
        assert.ok(Number(refused.headers['retry-after']) >= 1);
        // N turns and the refused one, each counted once.
        const snapshot = await engine.call('GET', G, { token });
        assert.equal(snapshot.body.quota.usage.requests, N + 1, path);
      }
    });

    test('model steps (ai, ai_decision, specialist) are refused a provider type the pinned policy version does not allow, calling nothing', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const a = await agentWithTools(engine, t);
      const flows = {
        answer: await activeFlow(
          engine,
          token,
          [
            { id: 'answer', type: 'ai', instructions: 'Answer briefly', next: 'done', on_error: 'fallback' },
            { id: 'done', type: 'output', action: 'RESPOND', content: { var: 'vars.answer' } },
            { id: 'fallback', type: 'output', action: 'RESPOND', content: 'fallback' },
          ],
          { generate: { answer: 'In stock.' } },
        ),
        route: await activeFlow(
          engine,
          token,
          [stockDecision('done'), { id: 'done', type: 'output', action: 'RESPOND', content: 'Routed' }],
          { decisions: { route: { choice: 'look', confidence: 0.9 } } },
        ),
        expert: await activeFlow(
          engine,
          token,
          [
            { id: 'expert', type: 'specialist', agent_id: a.agentId, instructions: 'Advise', next: 'done' },
            { id: 'done', type: 'output', action: 'RESPOND', content: { var: 'vars.expert' } },
          ],
          { specialists: { expert: 'Advice.' } },
        ),
      };
      const queue = (flowId: string) => queueExecution(engine, { flow_id: flowId, agent_id: a.agentId });
      // Queued before the policy: no policy pinned, so every provider type serves.
      const before = await queue(flows.answer);
      await activatePolicy(engine, 'Bedrock only', { allowed_provider_types: ['bedrock'] });
      const after = {
        answer: await queue(flows.answer),
        route: await queue(flows.route),
        expert: await queue(flows.expert),
      };

      const worker = createExecutionWorker(engine.runtime, { concurrency: 1, leaseMs: 3000, pollMs: 50 });
      t.after(() => worker.stop());
      // A refused step is a failure like a chat turn's refusal (same code, not retried): the node's on_error takes it.
      assert.ok(await worker.runOne(after.answer), 'the worker ran it');
      const handled = (await engine.call('GET', `${EXECUTIONS}/${after.answer}`, { token })).body;
      assert.equal(handled.state, 'succeeded', JSON.stringify(handled));
      assert.equal(handled.action.content, 'fallback');
      const events = await engine.call('GET', `${EXECUTIONS}/${after.answer}/events`, { token });
      assert.ok(
        events.body.data.some((e: any) => e.type === 'step.done' && e.data.key === 'fallback#1'),
        JSON.stringify(events.body.data),
      );
      // Without on_error the execution fails with the refusal.
      for (const node of ['route', 'expert'] as const) {
        assert.ok(await worker.runOne(after[node]), 'the worker ran it');
        const refused = (await engine.call('GET', `${EXECUTIONS}/${after[node]}`, { token })).body;
        assert.equal(refused.state, 'terminal_failure', `${node}: ${JSON.stringify(refused)}`);
        assert.equal(refused.error.code, 'GOVERNANCE_POLICY_DENIED', node);
        assert.equal(refused.error.node_id, node);
        assert.match(refused.error.message, /openai_compatible is not allowed by the realm policy \(version 1\)/);
        assert.equal(refused.action.type, 'ERROR');
        assert.equal(refused.action.data.code, 'GOVERNANCE_POLICY_DENIED');
      }
      assert.equal(a.upstream.calls.length, 0, 'no refused step called the provider');
      const usage = await engine.call('GET', '/api/v1/usages', { token });
      assert.equal(usage.body.data.length, 0);

      // The execution queued before the activation keeps its (empty) pin and is served.
      assert.ok(await worker.runOne(before), 'the worker ran it');
      const served = (await engine.call('GET', `${EXECUTIONS}/${before}`, { token })).body;
      assert.equal(served.state, 'succeeded', JSON.stringify(served));
      assert.equal(served.action.content, 'In stock.');
      assert.equal(a.upstream.calls.length, 1);
    });

    test('an MCP error result (isError) is a failed call in usage: flow tool steps and REST tool calls alike', async (t) => {
      const { engine, token, a, flowId } = await lookupFlow(t);
      // The server no longer knows the tool: it answers every call with an `isError` result.
      a.server.state.tools = [];
      const run = await execute(engine, flowId, a.agentId);
      assert.equal(run.body.state, 'terminal_failure', JSON.stringify(run.body));
      assert.equal(run.body.error.code, 'TOOL_RESULT_ERROR');
      // Every REST way of calling the tool answers 200 with the error result, and records a failed call.
      const lookupOf = (sku: string) => ({ tool_name: 'lookup_stock', arguments: { sku } });
      const calls: [string, Record<string, unknown>][] = [
        ['tools/execute', lookupOf('M-1')],
        ['tools/execute-parallel', { calls: [lookupOf('M-2')] }],
        ['tools/aggregate', lookupOf('M-3')],
        ['proxy', { server_id: a.serverId, ...lookupOf('M-4') }],
      ];
      for (const [path, body] of calls) {
        const called = await engine.call('POST', `/api/v1/runtime/mcp/${path}`, { token, body });
        assert.equal(called.status, 200, `${path}: ${JSON.stringify(called.body)}`);
        if (path === 'tools/execute') assert.equal(called.body.result.is_error, true);
      }
      assert.equal(a.server.calls.length, 5);
      const usage = await engine.call('GET', '/api/v1/usages?type=tool', { token });
      assert.deepEqual(usage.body.data.map((r: any) => [r.source, r.name, r.status]).sort(), [
        ['flow', 'lookup_stock', 'failed'],
        ['tools', 'lookup_stock', 'failed'],
        ['tools', 'lookup_stock', 'failed'],
        ['tools', 'lookup_stock', 'failed'],
        ['tools', 'lookup_stock', 'failed'],
      ]);
      const flowRecord = usage.body.data.find((r: any) => r.source === 'flow');
      assert.equal(flowRecord.flow_execution_id, run.body.id);
      assert.equal(flowRecord.step_key, 'one#1');
    });

    test('REST tool calls (execute, execute-parallel, aggregate, proxy) are usage records of source tools; a refused call is none', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const server = await startMcpServer(t, { tools: defaultTools() });
      const registered = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
        token,
        body: { name: 'stock', url: server.url, auto_discover: true },
      });
      const one = await engine.call('POST', '/api/v1/runtime/mcp/tools/execute', {
        token,
        body: { tool_name: 'lookup_stock', arguments: { sku: 'M-1' } },
      });
      assert.equal(one.status, 200, JSON.stringify(one.body));
      const parallel = await engine.call('POST', '/api/v1/runtime/mcp/tools/execute-parallel', {
        token,
        body: {
          calls: [
            { tool_name: 'lookup_stock', arguments: { sku: 'M-2' } },
            { tool_name: 'lookup_stock', arguments: { nope: 1 } },
          ],
        },
      });
      assert.equal(parallel.status, 200, JSON.stringify(parallel.body));
      assert.equal(parallel.body.succeeded, 1);
      const invalid = await engine.call('POST', '/api/v1/runtime/mcp/tools/execute', {
        token,
        body: { tool_name: 'lookup_stock', arguments: { nope: 1 } },
      });
      assert.equal(invalid.status, 400);
      const aggregate = await engine.call('POST', '/api/v1/runtime/mcp/tools/aggregate', {
        token,
        body: { tool_name: 'lookup_stock', arguments: { sku: 'M-3' } },
      });
      assert.equal(aggregate.status, 200, JSON.stringify(aggregate.body));
      const proxied = await engine.call('POST', '/api/v1/runtime/mcp/proxy', {
        token,
        body: { server_id: registered.body.id, tool_name: 'lookup_stock', arguments: { sku: 'M-4' } },
      });
      assert.equal(proxied.status, 200, JSON.stringify(proxied.body));
      assert.equal(server.calls.length, 4);
      const usage = await engine.call('GET', '/api/v1/usages', { token });
      assert.equal(usage.body.data.length, 4);
      for (const record of usage.body.data)
        assert.deepEqual(
          [record.type, record.source, record.name, record.tool_server_id, record.status, record.quantity, record.unit],
          ['tool', 'tools', 'lookup_stock', registered.body.id, 'succeeded', 1, 'call'],
        );
      assert.equal(usage.body.data.at(-1).metadata.attempts, 1);
      const tools = await engine.call('GET', '/api/v1/usages/tools/summary', { token });
      assert.equal(tools.body.totals.records, 4);
      // Another realm sees none of them.
      const foreign = await engine.call('GET', '/api/v1/usages', { token: engine.b.token });
      assert.equal(foreign.body.data.length, 0);
    });

    test('a quota threshold sends usage.threshold_reached once per threshold and window, signed, through the outbox', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const outbox = createOutboxWorker({
        db: engine.ctx.db,
        allowPrivate: true,
        timeoutMs: 5000,
        retryScheduleMs: [100, 200],
        pollIntervalMs: 20,
        resolveTarget: (message) => engine.ctx.destinations.resolve(message.target),
      });
      outbox.start();
      t.after(() => outbox.stop());
      const receiver = await startReceiver(t);
      const hook = await engine.call('POST', '/api/v1/runtime/webhooks', {
        token,
        body: { url: receiver.url, events: ['usage.threshold_reached'] },
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      const quota = await putQuota(engine, { max_tool_calls: 4, notify_at_percent: [100, 50, 50] });
      assert.deepEqual(quota.notify_at_percent, [50, 100]);
      const invalid = await engine.call('PUT', `${G}/quotas`, {
        token,
        body: { window_seconds: 60, max_tool_calls: 4, notify_at_percent: [0] },
      });
      assert.equal(invalid.status, 400);
      const server = await startMcpServer(t, { tools: defaultTools() });
      await engine.call('POST', '/api/v1/runtime/mcp/servers', {
        token,
        body: { name: 'stock', url: server.url, auto_discover: true },
      });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const call = await engine.call('POST', '/api/v1/runtime/mcp/tools/execute', {
          token,
          body: { tool_name: 'lookup_stock', arguments: { sku: `M-${i}` } },
        });
        statuses.push(call.status);
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
      await until(() => receiver.received.length >= 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.received.length, 2, 'one event per threshold');
      const bodies = receiver.received.map((delivery) => {
        new Webhook(hook.body.signing_secret).verify(delivery.raw, delivery.headers as Record<string, string>);
        return delivery.body;
      });
      bodies.sort((x: any, y: any) => x.data.threshold_percent - y.data.threshold_percent);
      for (const body of bodies) {
        assert.equal(body.type, 'usage.threshold_reached');
        assert.equal(body.realm_id, engine.a.realmId);
        assert.equal(body.data.metric, 'tool_calls');
        assert.equal(body.data.limit, '4');
        assert.equal(body.data.window_seconds, 3600);
        assert.ok(Date.parse(body.data.window_resets_at) > Date.now());
      }
      assert.deepEqual(
        bodies.map((body: any) => [body.data.threshold_percent, body.data.used]),
        [
          [50, '2'],
          [100, '4'],
        ],
      );
    });
  });
}
