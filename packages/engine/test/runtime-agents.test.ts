import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { effectiveSettings, SETTING_BOUNDS } from '../src/agents/agent-settings.ts';
import { downgradeForClient, type NormalizedAction, sanitizeHandoff } from '../src/runtime/actions.ts';
import type { FlowEngine } from '../src/runtime/extensions.ts';
import { type BudgetExceeded, createRunBudget } from '../src/runtime/run-budget.ts';
import {
  type RuntimeUnderTest,
  setupAgent,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

const action = (type: NormalizedAction['type']): NormalizedAction => ({
  type,
  content: 'x',
  data: { a: 1 },
  metadata: {},
});

describe('normalized actions and run budgets (pure)', () => {
  test('client downgrades exactly as the contract lists', () => {
    const caps = { actions: ['RESPOND', 'DATA_RESULT'] };
    assert.equal(downgradeForClient(action('OFFER_PRODUCT_ALTERNATIVES'), caps).type, 'RESPOND');
    const alternatives = downgradeForClient(action('RENDER_PRODUCT_ALTERNATIVES'), caps);
    assert.equal(alternatives.type, 'DATA_RESULT');
    assert.equal(alternatives.metadata.original_type, 'RENDER_PRODUCT_ALTERNATIVES');
    assert.deepEqual(alternatives.data, { a: 1 });
    const details = downgradeForClient(action('RENDER_PRODUCT_DETAILS'), caps);
    assert.equal(details.type, 'DATA_RESULT');
    assert.equal(details.metadata.original_type, 'RENDER_PRODUCT_DETAILS');
    // Supported actions and actions without a listed downgrade stay as they are.
    assert.equal(
      downgradeForClient(action('RENDER_PRODUCT_DETAILS'), { actions: ['RENDER_PRODUCT_DETAILS'] }).type,
      'RENDER_PRODUCT_DETAILS',
    );
    assert.equal(downgradeForClient(action('RENDER_PRODUCTS'), caps).type, 'RENDER_PRODUCTS');
    assert.equal(downgradeForClient(action('CLARIFY'), caps).type, 'CLARIFY');
    // No declared capabilities: everything is supported.
    assert.equal(
      downgradeForClient(action('OFFER_PRODUCT_ALTERNATIVES'), undefined).type,
      'OFFER_PRODUCT_ALTERNATIVES',
    );
  });

  test('CHECKOUT_HANDOFF and OPEN_WIDGET keep only opaque metadata', () => {
    const handoff = sanitizeHandoff({
      type: 'CHECKOUT_HANDOFF',
      content: null,
      data: {
        checkout_id: 'chk_1',
        handoff_reference: 'hof_1',
        email: 'a@b.c',
        shippingAddress: { line1: 'x' },
        payment: { card: '4111' },
        nested: { phone: '+1 555', surface: 'hosted' },
      },
      metadata: { customer: { name: 'Eve' }, url: 'https://pay.example.com/x' },
    });
    assert.deepEqual(handoff.data, { checkout_id: 'chk_1', handoff_reference: 'hof_1', nested: { surface: 'hosted' } });
    assert.deepEqual(handoff.metadata, { url: 'https://pay.example.com/x' });
    assert.deepEqual(sanitizeHandoff(action('RESPOND')), action('RESPOND'));
  });

  test('run budgets enforce tool calls, depth, parallelism, cost and retries', async () => {
    const budget = createRunBudget(
      effectiveSettings({
        max_tool_calls: 2,
        max_orchestration_depth: 1,
        max_dependency_concurrency: 2,
        max_execution_cost: 0.000001,
        max_node_retries: 2,
        retry_base_ms: 10,
      }),
    );
    budget.useToolCall();
    budget.useToolCall();
    assert.throws(
      () => budget.useToolCall(),
      (e: BudgetExceeded) => e.limit === 'tool_calls',
    );
    const leave = budget.enter();
    assert.throws(
      () => budget.enter(),
      (e: BudgetExceeded) => e.limit === 'orchestration_depth',
    );
    leave();
    budget.enter()();
    let inFlight = 0;
    let peak = 0;
    await budget.parallel(
      Array.from({ length: 6 }, () => async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
      }),
    );
    assert.equal(peak, 2);
    budget.checkCost(1_000_000n);
    assert.throws(
      () => budget.checkCost(1_000_001n),
      (e: BudgetExceeded) => e.limit === 'execution_cost',
    );
    let calls = 0;
    await assert.rejects(
      budget.retry(
        async () => {
          calls++;
          throw new Error('transient');
        },
        () => true,
      ),
    );
    assert.equal(calls, 3);
    budget.dispose();
  });
});

const FLOW_ID = '01900000-0000-7000-8000-000000000001';

/** A stand-in flow engine driving the budget and returning product actions. */
function testFlows(): FlowEngine {
  return {
    exists: async (_realm, id) => id === FLOW_ID,
    select: async (_run, requested) => ({
      selection: requested === FLOW_ID ? { flowId: FLOW_ID, version: 3, source: 'explicit', pin: true } : undefined,
      diagnostics: {},
    }),
    queue: async () => {
      throw new Error('not queued in this test');
    },
    run: async (_selection, run) => {
      switch (run.message) {
        case 'tools':
          for (let i = 0; i < 100; i++) run.budget.useToolCall();
          break;
        case 'depth':
          for (let i = 0; i < 100; i++) run.budget.enter();
          break;
        case 'parallel': {
          let inFlight = 0;
          let peak = 0;
          await run.budget.parallel(
            Array.from({ length: 8 }, () => async () => {
              inFlight++;
              peak = Math.max(peak, inFlight);
              await new Promise((r) => setTimeout(r, 5));
              inFlight--;
            }),
          );
          return { action: { type: 'DATA_RESULT', content: null, data: { peak }, metadata: {} } };
        }
        case 'offer':
          return {
            action: {
              type: 'OFFER_PRODUCT_ALTERNATIVES',
              content: 'Nothing exact. Shall I look wider?',
              data: null,
              metadata: {},
            },
          };
        case 'alternatives':
          return {
            action: {
              type: 'RENDER_PRODUCT_ALTERNATIVES',
              content: 'Broader results',
              data: { requested_query: 'red size 42', applied_query: 'red', relaxed: ['size'] },
              metadata: {},
            },
          };
        case 'handoff':
          return {
            action: {
              type: 'CHECKOUT_HANDOFF',
              content: 'Opening checkout',
              data: { checkout_id: 'chk_1', email: 'eve@example.com', shipping_address: { line1: 'x' } },
              metadata: { surface: 'hosted', phone: '+15551234567' },
            },
          };
      }
      return { action: { type: 'RESPOND', content: `flow: ${run.message}`, data: null, metadata: {} } };
    },
  };
}

async function withFlows<T>(engine: RuntimeUnderTest, work: () => Promise<T>): Promise<T> {
  const flows = engine.runtime.extensions.flows;
  engine.runtime.extensions.flows = testFlows();
  try {
    return await work();
  } finally {
    engine.runtime.extensions.flows = flows;
  }
}

for (const target of testDatabaseTargets()) {
  describe(`runtime agents (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('configuration: defaults, references checked within the realm, every settings bound validated', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const a = await setupAgent(engine, engine.a, upstream.url);
      const b = await setupAgent(engine, engine.b, upstream.url);
      const fresh = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token: engine.a.token,
        body: { username: 'plain' },
      });
      const plainId = fresh.body.identity.id;
      const defaults = await engine.call('GET', `/api/v1/runtime/agents/${plainId}/config`, { token: engine.a.token });
      assert.equal(defaults.status, 200);
      assert.equal(defaults.body.updated_at, null);
      assert.deepEqual(defaults.body.settings, effectiveSettings(null));
      const path = `/api/v1/runtime/agents/${a.agentId}/config`;
      for (const [body, status] of [
        [{ ai_provider_id: b.providerId }, 404],
        [{ system_prompt_id: b.promptId }, 404],
        [{ default_flow_id: FLOW_ID }, 404],
        [{ allowed_mcp_servers: [FLOW_ID] }, 404],
        [{ realm_id: engine.b.realmId }, 403],
        [{ settings: { node_timeout_ms: 5000, max_latency_ms: 1000 } }, 400],
        [{ profile: { priority: 1 } }, 400],
        [{ settings: { quality_tier: 'ultra' } }, 400],
        [{ settings: { data_handling: 'keep_forever' } }, 400],
        [{ settings: { max_execution_cost: -1 } }, 400],
        [{ settings: { max_execution_cost: 10_001 } }, 400],
      ] as [Record<string, unknown>, number][]) {
        const reply = await engine.call('PUT', path, { token: engine.a.token, body });
        assert.equal(reply.status, status, JSON.stringify(body));
      }
      for (const [key, [min, max]] of Object.entries(SETTING_BOUNDS)) {
        for (const value of [min - 1, max + 1, min + 0.5]) {
          const reply = await engine.call('PUT', path, { token: engine.a.token, body: { settings: { [key]: value } } });
          assert.equal(reply.status, 400, `${key}=${value}`);
        }
        const ok = await engine.call('PUT', path, {
          token: engine.a.token,
          body: { settings: { [key]: max, ...(key === 'node_timeout_ms' ? { max_latency_ms: max } : {}) } },
        });
        assert.equal(ok.status, 200, `${key}=${max}: ${JSON.stringify(ok.body)}`);
        assert.equal(ok.body.settings[key], max);
      }
      for (const method of ['GET', 'PUT']) {
        const reply = await engine.call(method, `/api/v1/runtime/agents/${b.agentId}/config`, {
          token: engine.a.token,
          ...(method === 'PUT' ? { body: {} } : {}),
        });
        assert.equal(reply.status, 404, method);
      }
      const notAnAgent = await engine.call('GET', `/api/v1/runtime/agents/${engine.a.identityId}/config`, {
        token: engine.a.token,
      });
      assert.equal(notAnAgent.status, 404, 'a service identity is not an agent');
    });

    test('profile rules pick the agent by descending priority; else the realm default; else 409', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const make = (config: Record<string, unknown>) => setupAgent(engine, engine.a, upstream.url, { config });
      const web = await make({ profile: { priority: 10, channel: ['web'] } });
      const vip = await make({ profile: { priority: 20, channel: ['web'], user_segment: ['vip'] } });
      const vision = await make({
        profile: { priority: 5, client_capabilities: { vision: true, actions: ['RENDER_PRODUCTS'] } },
      });
      const eu = await make({ profile: { priority: 1, deployment: ['eu'] } });
      const fallback = await make({ is_default: true });
      const pick = async (body: Record<string, unknown>) => {
        const reply = await engine.call('POST', '/api/v1/runtime/execute', {
          token: engine.a.token,
          body: { input: { message: 'hi' }, ...body },
        });
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        return reply.body;
      };
      assert.equal((await pick({ channel: 'web', metadata: { user_segment: 'vip' } })).agent_id, vip.agentId);
      const webPick = await pick({ channel: 'web', metadata: { user_segment: 'regular' } });
      assert.equal(webPick.agent_id, web.agentId);
      assert.equal(webPick.routing.agent_source, 'profile_rule');
      assert.equal(webPick.routing.matched_priority, 10);
      assert.equal(
        (await pick({ channel: 'app', client_capabilities: { vision: true, actions: ['RENDER_PRODUCTS', 'RESPOND'] } }))
          .agent_id,
        vision.agentId,
      );
      assert.equal(
        (await pick({ channel: 'app', client_capabilities: { vision: true, actions: ['RESPOND'] } })).agent_id,
        fallback.agentId,
      );
      assert.equal((await pick({ metadata: { deployment: 'eu' } })).agent_id, eu.agentId);
      const none = await pick({ channel: 'kiosk' });
      assert.equal(none.agent_id, fallback.agentId);
      assert.equal(none.routing.agent_source, 'realm_default');
      // A second default replaces the first.
      const second = await make({ is_default: true });
      const first = await engine.call('GET', `/api/v1/runtime/agents/${fallback.agentId}/config`, {
        token: engine.a.token,
      });
      assert.equal(first.body.is_default, false);
      assert.equal((await pick({ channel: 'kiosk' })).agent_id, second.agentId);
      await engine.call('PUT', `/api/v1/runtime/agents/${second.agentId}/config`, { token: engine.a.token, body: {} });
      const unresolved = await engine.call('POST', '/api/v1/runtime/execute', {
        token: engine.a.token,
        body: { channel: 'kiosk', input: { message: 'hi' } },
      });
      assert.equal(unresolved.status, 409);
      assert.equal(unresolved.body.error.code, 'RUNTIME_AGENT_NOT_RESOLVED');
    });

    test('max_latency_ms stops a slow execution with a 503', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t, () => ({ delayMs: 1500 }));
      const ids = await setupAgent(engine, engine.a, upstream.url, {
        settings: { max_latency_ms: 300, node_timeout_ms: 300 },
      });
      const started = Date.now();
      const reply = await engine.call('POST', '/api/v1/runtime/execute', {
        token: engine.a.token,
        body: { agent_id: ids.agentId, input: { message: 'hi' } },
      });
      assert.equal(reply.status, 503);
      assert.equal(reply.body.error.code, 'RUNTIME_LATENCY_BUDGET_EXCEEDED');
      assert.ok(Date.now() - started < 1400, 'the deadline, not the upstream, ended it');
    });

    test('node_timeout_ms bounds each attempt; max_node_retries and retry_base_ms shape the retries', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t, () => ({ delayMs: 1000 }));
      const ids = await setupAgent(engine, engine.a, upstream.url, {
        settings: { max_latency_ms: 10_000, node_timeout_ms: 150, max_node_retries: 2, retry_base_ms: 100 },
      });
      const reply = await engine.call('POST', '/api/v1/runtime/execute', {
        token: engine.a.token,
        body: { agent_id: ids.agentId, input: { message: 'hi' } },
      });
      assert.equal(reply.status, 502);
      assert.match(reply.body.error.message, /no answer within 150 ms \(after 3 attempt\(s\)\)/);
      assert.equal(upstream.calls.length, 3);
      const gaps = upstream.calls.slice(1).map((call, i) => call.at - upstream.calls[i]!.at);
      assert.ok(gaps[0]! >= 150 + 100 - 20, `first retry after the timeout plus retry_base_ms (${gaps})`);
      assert.ok(gaps[1]! >= 150 + 200 - 20, `second retry doubles the delay (${gaps})`);
    });

    test('max_execution_cost: a turn whose estimate passes the cap answers an ERROR action without calling the model', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url, {
        settings: { max_execution_cost: 0.001 },
        provider: { input_price_per_million: 1000, output_price_per_million: 1000 },
      });
      const reply = await engine.call('POST', '/api/v1/runtime/execute', {
        token: engine.a.token,
        body: { agent_id: ids.agentId, input: { message: 'hi' } },
      });
      assert.equal(reply.status, 200);
      assert.equal(reply.body.status, 'failed');
      assert.equal(reply.body.action.type, 'ERROR');
      assert.deepEqual(reply.body.action.data, { code: 'EXECUTION_COST_LIMIT', retryable: false });
      assert.equal(reply.body.message, null);
      assert.equal(upstream.calls.length, 0);
      const cheap = await setupAgent(engine, engine.a, upstream.url, { settings: { max_execution_cost: 1 } });
      const ok = await engine.call('POST', '/api/v1/runtime/execute', {
        token: engine.a.token,
        body: { agent_id: cheap.agentId, input: { message: 'hi' } },
      });
      assert.equal(ok.body.status, 'succeeded');
    });

    test('max_concurrency: executions beyond the bound get a 429 with Retry-After', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t, () => ({ delayMs: 300 }));
      const ids = await setupAgent(engine, engine.a, upstream.url, { settings: { max_concurrency: 1 } });
      const run = () =>
        engine.call('POST', '/api/v1/runtime/execute', {
          token: engine.a.token,
          body: { agent_id: ids.agentId, input: { message: 'hi' } },
        });
      const [first, second] = await Promise.all([run(), new Promise((r) => setTimeout(r, 50)).then(run)]);
      assert.equal(first.status, 200);
      assert.equal(second.status, 429);
      assert.equal(second.body.error.code, 'RUNTIME_CONCURRENCY_LIMIT');
      assert.equal(second.headers['retry-after'], '1');
      const after = await run();
      assert.equal(after.status, 200, 'the slot is free again');
    });

    test('max_concurrency: a chat turn that fails or times out gives its slot back', async (t) => {
      const engine = await shared.fresh();
      // The first turn's call fails upstream, the second's outlives the turn's deadline, later calls answer at once.
      let before = Number.POSITIVE_INFINITY;
      const upstream = await startUpstream(t, (_call, n) =>
        n === before + 1 ? { status: 500 } : n === before + 2 ? { delayMs: 3000 } : undefined,
      );
      const ids = await setupAgent(engine, engine.a, upstream.url, {
        settings: { max_concurrency: 1, max_latency_ms: 400, node_timeout_ms: 300, max_node_retries: 0 },
      });
      const chat = () =>
        engine.call('POST', '/api/v1/runtime/ai/chat', {
          token: engine.a.token,
          body: { agent_id: ids.agentId, messages: [{ role: 'user', content: 'hi' }] },
        });
      before = upstream.calls.length;
      const failed = await chat();
      assert.notEqual(failed.status, 429);
      assert.equal(upstream.calls.length, before + 1);
      const timedOut = await chat();
      assert.notEqual(timedOut.status, 429);
      assert.equal(upstream.calls.length, before + 2);
      const after = await chat();
      assert.equal(after.status, 200, `the slot is free again: ${JSON.stringify(after.body)}`);
    });

    test('flow slot: tool calls, parallelism and depth bounds hold; product actions downgrade for the client; handoffs stay opaque; the flow is pinned', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url, {
        settings: { max_tool_calls: 3, max_dependency_concurrency: 2, max_orchestration_depth: 2 },
      });
      await withFlows(engine, async () => {
        const session = await engine.call('POST', '/api/v1/runtime/sessions', {
          token: engine.a.token,
          body: { agent_id: ids.agentId },
        });
        const turn = (message: string, extra: Record<string, unknown> = {}) =>
          engine.call('POST', '/api/v1/runtime/execute', {
            token: engine.a.token,
            body: {
              session_id: session.body.session_id,
              resume_token: session.body.resume_token,
              flow_id: FLOW_ID,
              input: { message },
              ...extra,
            },
          });
        const tools = await turn('tools');
        assert.equal(tools.body.action.type, 'ERROR');
        assert.equal(tools.body.action.data.code, 'TOOL_CALL_LIMIT');
        const depth = await turn('depth');
        assert.equal(depth.body.action.data.code, 'ORCHESTRATION_DEPTH_LIMIT');
        const parallel = await turn('parallel');
        assert.equal(parallel.body.action.type, 'DATA_RESULT');
        assert.equal(parallel.body.data.peak, 2);
        const caps = { client_capabilities: { actions: ['RESPOND', 'DATA_RESULT'] } };
        const offer = await turn('offer', caps);
        assert.equal(offer.body.action.type, 'RESPOND');
        assert.equal(offer.body.routing.downgraded_from, 'OFFER_PRODUCT_ALTERNATIVES');
        const alternatives = await turn('alternatives', caps);
        assert.equal(alternatives.body.action.type, 'DATA_RESULT');
        assert.equal(alternatives.body.action.metadata.original_type, 'RENDER_PRODUCT_ALTERNATIVES');
        assert.deepEqual(alternatives.body.data, {
          requested_query: 'red size 42',
          applied_query: 'red',
          relaxed: ['size'],
        });
        const native = await turn('alternatives', {
          client_capabilities: { actions: ['RENDER_PRODUCT_ALTERNATIVES'] },
        });
        assert.equal(native.body.action.type, 'RENDER_PRODUCT_ALTERNATIVES');
        const handoff = await turn('handoff');
        assert.equal(handoff.body.action.type, 'CHECKOUT_HANDOFF');
        assert.deepEqual(handoff.body.action.data, { checkout_id: 'chk_1' });
        assert.deepEqual(handoff.body.action.metadata, { surface: 'hosted' });
        assert.equal(handoff.body.flow_id, FLOW_ID);
        assert.equal(handoff.body.routing.flow_source, 'explicit');
        const status = await engine.call('GET', `/api/v1/runtime/sessions/${session.body.session_id}/status`, {
          token: engine.a.token,
        });
        assert.equal(status.body.has_pinned_flow, true);
        const reset = await engine.call('POST', `/api/v1/runtime/sessions/${session.body.session_id}/reset`, {
          token: engine.a.token,
          headers: { 'x-resume-token': session.body.resume_token },
        });
        assert.equal(reset.body.flow_id, null);
        assert.equal(upstream.calls.length, 0, 'flows answered; the provider was not needed');
      });
    });
  });
}
