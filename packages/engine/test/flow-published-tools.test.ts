import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { publishedFlow } from './execution-helper.ts';
import { call, connect, mcpUrl, realmHeaders } from './mcp-client-helper.ts';
import { type Realm, type RuntimeUnderTest, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

async function connectRealm(t: TestContext, engine: RuntimeUnderTest, realm: Realm): Promise<Client> {
  return connect(t, await mcpUrl(engine), realmHeaders(realm));
}

const flowTools = async (client: Client) =>
  (await client.listTools()).tools.filter((tool) => tool.name.startsWith('engine_flow_'));

/** A flow with an input contract that counts its runs through a write tool-free transform and answers DATA_RESULT. */
const QUOTE_NODES = [
  {
    id: 'quote',
    type: 'output',
    action: 'DATA_RESULT',
    content: 'Quoted',
    data: { object: { sku: { var: 'input.sku' }, total: { '*': [{ var: 'input.quantity' }, 5] } } },
  },
];
const QUOTE_CONTRACT = {
  input: {
    type: 'object',
    properties: { sku: { type: 'string', description: 'Catalog id' }, quantity: { type: 'integer' } },
    required: ['sku', 'quantity'],
  },
  output: {
    type: 'object',
    properties: { sku: { type: 'string' }, total: { type: 'number' } },
    required: ['sku', 'total'],
  },
};

for (const target of testDatabaseTargets()) {
  describe(`published flows as MCP tools (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });

    test('each active published flow is listed with its contract schemas and controls, and runs idempotently', async (t) => {
      const engine = await shared.fresh();
      const quote = await publishedFlow(engine, engine.a.token, 'Bulk Quote — Ärger', QUOTE_NODES, {
        config: { contract: QUOTE_CONTRACT },
        input: { sku: 'sku-1', quantity: 2 },
      });
      await publishedFlow(engine, engine.a.token, 'Greeter', [
        { id: 'hi', type: 'output', action: 'RESPOND', content: 'Hello!' },
      ]);
      const client = await connectRealm(t, engine, engine.a);
      const listed = await flowTools(client);
      assert.deepEqual(listed.map((tool) => tool.name).sort(), [
        'engine_flow_bulk_quote_arger_v1',
        'engine_flow_greeter_v1',
      ]);
      const tool = listed.find((entry) => entry.name === 'engine_flow_bulk_quote_arger_v1')!;
      assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}).sort(), [
        'agentId',
        'idempotencyKey',
        'quantity',
        'sessionId',
        'sku',
      ]);
      assert.deepEqual(tool.inputSchema.required, ['sku', 'quantity']);
      assert.deepEqual(Object.keys((tool.outputSchema?.properties as any).data.properties).sort(), ['sku', 'total']);
      const greeter = listed.find((entry) => entry.name === 'engine_flow_greeter_v1')!;
      assert.deepEqual(greeter.inputSchema.required, ['message']);

      const first = await call(client, tool.name, { sku: 'sku-9', quantity: 3, idempotencyKey: 'quote-1' });
      assert.equal(first.isError, false, JSON.stringify(first.data));
      assert.equal(first.data.type, 'DATA_RESULT');
      assert.deepEqual(first.data.data, { sku: 'sku-9', total: 15 });
      assert.equal(first.data.state, 'succeeded');
      assert.equal(first.data.flow_id, quote.id);
      const replay = await call(client, tool.name, { sku: 'sku-9', quantity: 3, idempotencyKey: 'quote-1' });
      assert.equal(replay.data.execution_id, first.data.execution_id);
      assert.equal(replay.data.idempotent_replayed, true);
      const conflict = await call(client, tool.name, { sku: 'sku-9', quantity: 4, idempotencyKey: 'quote-1' });
      assert.equal(conflict.isError, true);
      const invalid = await call(client, tool.name, { sku: 'sku-9' });
      assert.equal(invalid.isError, true);
      assert.equal(invalid.data.error.code, 'INVALID_ARGUMENTS');
      const extra = await call(client, tool.name, { sku: 'sku-9', quantity: 1, admin: true });
      assert.equal(extra.isError, true);
      const unknownAgent = await call(client, tool.name, {
        sku: 'sku-9',
        quantity: 1,
        agentId: '01900000-0000-7000-8000-000000000009',
      });
      assert.equal(unknownAgent.isError, true);
      assert.equal(unknownAgent.data.error.code, 'RUNTIME_NOT_FOUND');
      const unknownSession = await call(client, tool.name, {
        sku: 'sku-9',
        quantity: 1,
        sessionId: '01900000-0000-7000-8000-000000000009',
      });
      assert.equal(unknownSession.data.error.code, 'RUNTIME_NOT_FOUND');

      // Another realm lists none of them and cannot call them.
      const other = await connectRealm(t, engine, engine.b);
      assert.deepEqual(await flowTools(other), []);
      await assert.rejects(call(other, tool.name, { sku: 'x', quantity: 1 }), /Unknown tool/);

      // Deactivating or archiving removes a flow from later listings (and its tool from calls).
      const current = (await engine.call('GET', `/api/v1/runtime/flows/${quote.id}`, { token: engine.a.token })).body;
      const deactivated = await engine.call('PUT', `/api/v1/runtime/flows/${quote.id}`, {
        token: engine.a.token,
        body: { name: current.name, config: current.config, is_active: false },
      });
      assert.equal(deactivated.status, 200, JSON.stringify(deactivated.body));
      assert.deepEqual(
        (await flowTools(client)).map((entry) => entry.name),
        ['engine_flow_greeter_v1'],
      );
      await assert.rejects(call(client, tool.name, { sku: 'x', quantity: 1 }), /Unknown tool/);
      const greeterId = (await engine.call('GET', '/api/v1/runtime/flows', { token: engine.a.token })).body.data.find(
        (flow: { name: string }) => flow.name === 'Greeter',
      ).id;
      const archived = await engine.call('POST', `/api/v1/runtime/flows/${greeterId}/archive`, {
        token: engine.a.token,
        body: {},
      });
      assert.equal(archived.status, 200);
      assert.deepEqual(await flowTools(client), []);
    });

    test('a new active version is listed under its own version name', async (t) => {
      const engine = await shared.fresh();
      const flow = await publishedFlow(engine, engine.a.token, 'Greeter', [
        { id: 'hi', type: 'output', action: 'RESPOND', content: 'Hello!' },
      ]);
      const updated = await engine.call('PUT', `/api/v1/runtime/flows/${flow.id}`, {
        token: engine.a.token,
        body: {
          name: 'Greeter',
          config: {
            schema_version: '2026-08-22',
            orchestration_mode: 'deterministic',
            permissions: { allowed_actions: ['RESPOND'] },
            nodes: [{ id: 'hi', type: 'output', action: 'RESPOND', content: 'Hello again!' }],
          },
        },
      });
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
      const client = await connectRealm(t, engine, engine.a);
      assert.deepEqual(
        (await flowTools(client)).map((tool) => tool.name),
        ['engine_flow_greeter_v1'],
      );
      const fixtures = await engine.call('POST', `/api/v1/runtime/flows/${flow.id}/test`, {
        token: engine.a.token,
        body: {},
      });
      assert.equal(fixtures.body.passed, true, JSON.stringify(fixtures.body));
      const activated = await engine.call('POST', `/api/v1/runtime/flows/${flow.id}/activate`, {
        token: engine.a.token,
        body: {},
      });
      assert.equal(activated.status, 200, JSON.stringify(activated.body));
      assert.deepEqual(
        (await flowTools(client)).map((tool) => tool.name),
        ['engine_flow_greeter_v2'],
      );
      const ran = await call(client, 'engine_flow_greeter_v2', { message: 'hi' });
      assert.equal(ran.data.content, 'Hello again!');
    });
  });
}
