// Flows' tool and resource nodes through the tool-server registry: real MCP servers (official SDK) on 127.0.0.1,
// registered and reviewed through the API, reached only through the execution agent's attached servers.
import assert from 'node:assert/strict';
import { after, describe, type TestContext, test } from 'node:test';
import { waitUntil } from '@keel/core/testing';
import { createExecutionWorker, type ExecutionWorker } from '../src/executions/execution-worker.ts';
import { stepIdempotencyKey } from '../src/flows/index.ts';
import { BASE_CONFIG, publishedFlow } from './execution-helper.ts';
import { defaultTools, type FakeServer, reserveTool, startMcpServer } from './mcp-servers.ts';
import { type RuntimeUnderTest, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

const EXECUTIONS = '/api/v1/runtime/executions';

const deleteTool = {
  name: 'delete_sku',
  description: 'Delete a SKU',
  inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
};
const unreviewedTool = {
  name: 'hold_stock',
  description: 'Hold units of a SKU for a customer',
  inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
  annotations: { readOnlyHint: false, destructiveHint: false },
};

async function registerServer(engine: RuntimeUnderTest, server: FakeServer) {
  const created = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
    token: engine.a.token,
    body: {
      name: `srv-${server.label}-${Math.random().toString(36).slice(2, 6)}`,
      url: server.url,
      auto_discover: true,
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
}

async function approve(engine: RuntimeUnderTest, serverId: string, name: string) {
  const tools = await engine.call('GET', `/api/v1/runtime/mcp/servers/${serverId}/tools`, { token: engine.a.token });
  const tool = tools.body.data.find((t: { name: string }) => t.name === name);
  const reviewed = await engine.call('PUT', `/api/v1/runtime/mcp/tools/${tool.id}/review`, {
    token: engine.a.token,
    body: { decision: 'approve' },
  });
  assert.equal(reviewed.status, 200, JSON.stringify(reviewed.body));
}

async function agentWith(engine: RuntimeUnderTest, servers: string[], settings: Record<string, unknown> = {}) {
  const agent = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
    token: engine.a.token,
    body: { username: `agent-${Math.random().toString(36).slice(2, 8)}` },
  });
  const agentId = agent.body.identity.id as string;
  const config = await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
    token: engine.a.token,
    body: { allowed_mcp_servers: servers, settings: { retry_base_ms: 10, ...settings } },
  });
  assert.equal(config.status, 200, JSON.stringify(config.body));
  return agentId;
}

const toolFlow = (tool: string, args: unknown) => [
  { id: 'call', type: 'tool', tool, arguments: { object: args }, next: 'done' },
  { id: 'done', type: 'output', action: 'DATA_RESULT', data: { var: 'vars.call' } },
];

for (const target of testDatabaseTargets()) {
  describe(`flow tool nodes through registered MCP servers (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });
    let worker: ExecutionWorker | undefined;
    after(async () => {
      await worker?.stop();
    });

    /** A fresh realm pair, server A (lookup, reserve approved; hold unreviewed) and server B (lookup), registered. */
    async function setup(t: TestContext) {
      const engine = await shared.fresh();
      if (!worker) {
        worker = createExecutionWorker(engine.runtime, { concurrency: 4, leaseMs: 3000, pollMs: 50 });
        engine.runtime.extensions.executions = worker;
        worker.start();
      }
      const a = await startMcpServer(t, {
        label: 'A',
        tools: [...defaultTools(), reserveTool, deleteTool, unreviewedTool],
      });
      const b = await startMcpServer(t, { label: 'B' });
      const idA = await registerServer(engine, a);
      const idB = await registerServer(engine, b);
      await approve(engine, idA, 'reserve_stock');
      await approve(engine, idA, 'delete_sku');
      return { engine, a, b, idA, idB };
    }

    async function execute(
      engine: RuntimeUnderTest,
      flowId: string,
      agentId: string,
      states = ['succeeded', 'terminal_failure', 'retryable_failure'],
    ) {
      const created = await engine.call('POST', EXECUTIONS, {
        token: engine.a.token,
        body: { flow_id: flowId, agent_id: agentId, compensate_on_failure: false, max_retries: 0 },
      });
      assert.equal(created.status, 202, JSON.stringify(created.body));
      const id = created.body.id as string;
      let last: any;
      await waitUntil(async () => {
        last = (await engine.call('GET', `${EXECUTIONS}/${id}`, { token: engine.a.token })).body;
        return states.includes(last.state);
      }, 15_000).catch(() => {
        throw new Error(`execution stayed ${JSON.stringify(last)}`);
      });
      return last;
    }

    const stepAttempts = async (engine: RuntimeUnderTest, id: string) => {
      const events = await engine.call('GET', `${EXECUTIONS}/${id}/events?limit=100`, { token: engine.a.token });
      return events.body.data.filter((e: any) => e.data?.node_id === 'call').map((e: any) => e.data.attempts);
    };

    test('a write tool of an attached server runs once per step with the derived idempotency key', async (t) => {
      const { engine, a, b, idA } = await setup(t);
      const agentId = await agentWith(engine, [idA]);
      const flow = await publishedFlow(
        engine,
        engine.a.token,
        'Reserve',
        toolFlow('reserve_stock', { sku: 'MUG-1', quantity: 2 }),
      );
      const done = await execute(engine, flow.id, agentId);
      assert.equal(done.state, 'succeeded', JSON.stringify(done));
      assert.deepEqual(done.action.data.structured_content, {
        server: 'A',
        tool: 'reserve_stock',
        echo: { sku: 'MUG-1', quantity: 2 },
      });
      assert.equal(a.calls.length, 1);
      assert.deepEqual(a.calls[0]!.args, { sku: 'MUG-1', quantity: 2 });
      assert.equal(a.calls[0]!.meta?.['io.keel/idempotency-key'], stepIdempotencyKey(done.id, 'call#1'));
      assert.equal(b.calls.length, 0);
    });

    test('fail closed: a server not attached, an unreviewed tool, invalid arguments, no agent — nothing is called', async (t) => {
      const { engine, a, b, idA, idB } = await setup(t);
      const onlyB = await agentWith(engine, [idB]);
      const withA = await agentWith(engine, [idA]);
      const reserve = await publishedFlow(
        engine,
        engine.a.token,
        'Reserve elsewhere',
        toolFlow('reserve_stock', { sku: 'MUG-1', quantity: 1 }),
      );
      const notAttached = await execute(engine, reserve.id, onlyB);
      assert.equal(notAttached.state, 'terminal_failure');
      assert.equal(notAttached.error.code, 'TOOL_UNAVAILABLE');
      assert.equal(notAttached.error.node_id, 'call');

      const hold = await publishedFlow(engine, engine.a.token, 'Hold', toolFlow('hold_stock', { sku: 'MUG-1' }));
      const unreviewed = await execute(engine, hold.id, withA);
      assert.equal(unreviewed.state, 'terminal_failure');
      assert.equal(unreviewed.error.code, 'TOOL_UNAVAILABLE');

      const bad = await publishedFlow(
        engine,
        engine.a.token,
        'Reserve badly',
        toolFlow('reserve_stock', { sku: 'MUG-1', quantity: 0 }),
      );
      const invalid = await execute(engine, bad.id, withA);
      assert.equal(invalid.state, 'terminal_failure');
      assert.equal(invalid.error.code, 'TOOL_ARGUMENTS_INVALID');

      const noAgent = await engine.call('POST', EXECUTIONS, {
        token: engine.a.token,
        body: { flow_id: reserve.id, compensate_on_failure: false, max_retries: 0 },
      });
      assert.equal(noAgent.status, 202);
      let last: any;
      await waitUntil(async () => {
        last = (await engine.call('GET', `${EXECUTIONS}/${noAgent.body.id}`, { token: engine.a.token })).body;
        return last.state === 'terminal_failure';
      }, 15_000);
      assert.equal(last.error.code, 'TOOL_UNAVAILABLE');

      assert.equal(a.calls.length, 0);
      assert.equal(b.calls.length, 0);
    });

    test("another realm's flow never reaches this realm's servers, not even by naming their ids", async (t) => {
      const { engine, a, b, idA, idB } = await setup(t);
      const agent = await engine.call('POST', `/api/v1/realms/${engine.b.realmId}/agents`, {
        token: engine.b.token,
        body: { username: `agent-${Math.random().toString(36).slice(2, 8)}` },
      });
      const agentId = agent.body.identity.id as string;
      const attach = await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
        token: engine.b.token,
        body: { allowed_mcp_servers: [idA, idB] },
      });
      assert.equal(attach.status, 404, JSON.stringify(attach.body));
      const flow = await publishedFlow(
        engine,
        engine.b.token,
        'Foreign lookup',
        toolFlow('lookup_stock', { sku: 'X' }),
      );
      const created = await engine.call('POST', EXECUTIONS, {
        token: engine.b.token,
        body: { flow_id: flow.id, agent_id: agentId, compensate_on_failure: false, max_retries: 0 },
      });
      assert.equal(created.status, 202, JSON.stringify(created.body));
      let last: any;
      await waitUntil(async () => {
        last = (await engine.call('GET', `${EXECUTIONS}/${created.body.id}`, { token: engine.b.token })).body;
        return last.state === 'terminal_failure' || last.state === 'succeeded';
      }, 15_000);
      assert.equal(last.state, 'terminal_failure');
      assert.equal(last.error.code, 'TOOL_UNAVAILABLE');
      assert.equal(a.calls.length + b.calls.length, 0);
    });

    test('a retryable server failure is retried under the agent settings with the same idempotency key', async (t) => {
      const { engine, a, idA } = await setup(t);
      const patient = await agentWith(engine, [idA], { max_node_retries: 2 });
      const flow = await publishedFlow(
        engine,
        engine.a.token,
        'Reserve flaky',
        toolFlow('reserve_stock', { sku: 'MUG-2', quantity: 1 }),
      );
      a.state.failNextCalls = 2;
      const done = await execute(engine, flow.id, patient);
      assert.equal(done.state, 'succeeded', JSON.stringify(done));
      assert.deepEqual(
        a.calls.map((c) => c.failed === true),
        [true, true, false],
      );
      const key = stepIdempotencyKey(done.id, 'call#1');
      assert.deepEqual(
        a.calls.map((c) => c.meta?.['io.keel/idempotency-key']),
        [key, key, key],
      );
      assert.ok((await stepAttempts(engine, done.id)).includes(3));

      // An MCP error result (the server no longer knows the tool) fails the step without a retry.
      const gone = await agentWith(engine, [idA], { max_node_retries: 2 });
      a.state.tools = a.state.tools.filter((tool) => tool.name !== 'reserve_stock');
      const errorCalls = a.calls.length;
      const errored = await execute(engine, flow.id, gone);
      assert.equal(errored.state, 'terminal_failure', JSON.stringify(errored));
      assert.equal(errored.error.code, 'TOOL_RESULT_ERROR');
      assert.equal(a.calls.length - errorCalls, 1);
      a.state.tools.push(reserveTool);

      // Without node retries the same failure fails the node at once (retryable; the execution has no retries left).
      const impatient = await agentWith(engine, [idA], { max_node_retries: 0 });
      a.state.failNextCalls = 1;
      const before = a.calls.length;
      const failed = await execute(engine, flow.id, impatient);
      assert.equal(failed.state, 'terminal_failure', JSON.stringify(failed));
      assert.equal(failed.error.code, 'TOOL_CALL_FAILED');
      assert.equal(failed.action.data.retryable, true);
      assert.equal(a.calls.length - before, 1);
    });

    test('a high-impact tool runs only from a step reached through a granted approval', async (t) => {
      const { engine, a, idA } = await setup(t);
      const agentId = await agentWith(engine, [idA]);
      const direct = await publishedFlow(
        engine,
        engine.a.token,
        'Delete now',
        toolFlow('delete_sku', { sku: 'MUG-1' }),
      );
      const refused = await execute(engine, direct.id, agentId);
      assert.equal(refused.state, 'terminal_failure');
      assert.equal(refused.error.code, 'TOOL_HIGH_IMPACT');
      // A denial path that reaches the tool does not count as approved.
      const deniedPath = await publishedFlow(engine, engine.a.token, 'Delete either way', [
        { id: 'check', type: 'approval', message: 'Delete MUG-1?', next: 'call', on_deny: 'call' },
        ...toolFlow('delete_sku', { sku: 'MUG-1' }),
      ]);
      const waitingDenied = await execute(engine, deniedPath.id, agentId, ['waiting_for_approval']);
      const deny = await engine.call(
        'POST',
        `${EXECUTIONS}/${waitingDenied.id}/approvals/${waitingDenied.wait.approval_id}/deny`,
        { token: engine.a.token, body: {} },
      );
      assert.equal(deny.status, 200, JSON.stringify(deny.body));
      let last: any;
      await waitUntil(async () => {
        last = (await engine.call('GET', `${EXECUTIONS}/${waitingDenied.id}`, { token: engine.a.token })).body;
        return last.state === 'terminal_failure';
      }, 15_000);
      assert.equal(last.error.code, 'TOOL_HIGH_IMPACT');
      assert.equal(a.calls.length, 0);

      const gated = await publishedFlow(engine, engine.a.token, 'Delete after approval', [
        { id: 'check', type: 'approval', message: 'Delete MUG-1?', next: 'call' },
        ...toolFlow('delete_sku', { sku: 'MUG-1' }),
      ]);
      const waiting = await execute(engine, gated.id, agentId, ['waiting_for_approval']);
      const approved = await engine.call(
        'POST',
        `${EXECUTIONS}/${waiting.id}/approvals/${waiting.wait.approval_id}/approve`,
        { token: engine.a.token, body: {} },
      );
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      await waitUntil(async () => {
        last = (await engine.call('GET', `${EXECUTIONS}/${waiting.id}`, { token: engine.a.token })).body;
        return last.state === 'succeeded' || last.state === 'terminal_failure';
      }, 15_000);
      assert.equal(last.state, 'succeeded', JSON.stringify(last));
      assert.deepEqual(
        a.calls.map((c) => c.name),
        ['delete_sku'],
      );
    });

    test('a resource node reads a resource listed by an attached server, templates filled from its arguments', async (t) => {
      const { engine, a, idA, idB } = await setup(t);
      const agentId = await agentWith(engine, [idB]);
      const nodes = [
        {
          id: 'sku',
          type: 'resource',
          resource: 'inventory://skus/{sku}',
          arguments: { object: { sku: 'MUG 1' } },
          next: 'main',
        },
        { id: 'main', type: 'resource', resource: 'inventory://warehouses/main', next: 'done' },
        {
          id: 'done',
          type: 'output',
          action: 'DATA_RESULT',
          data: { object: { sku: { var: 'vars.sku' }, main: { var: 'vars.main' } } },
        },
      ];
      const flow = await publishedFlow(engine, engine.a.token, 'Read inventory', nodes, { config: BASE_CONFIG });
      const done = await execute(engine, flow.id, agentId);
      assert.equal(done.state, 'succeeded', JSON.stringify(done));
      assert.equal(done.action.data.sku.uri, 'inventory://skus/MUG%201');
      assert.equal(done.action.data.sku.contents[0].text, 'templated inventory://skus/MUG%201');
      assert.equal(done.action.data.main.contents[0].text, 'aisle 4');

      const unknown = await publishedFlow(engine, engine.a.token, 'Read unknown', [
        { id: 'call', type: 'resource', resource: 'secret://elsewhere', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'read' },
      ]);
      const refused = await execute(engine, unknown.id, await agentWith(engine, [idA]));
      assert.equal(refused.state, 'terminal_failure');
      assert.equal(refused.error.code, 'TOOL_UNAVAILABLE');
      assert.equal(a.calls.length, 0);
    });
  });
}
