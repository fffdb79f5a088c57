import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootstrapMerchant } from '../src/cli/bootstrap.ts';
import { call, connect, mcpUrl, realmHeaders } from './mcp-client-helper.ts';
import { startMcpServer } from './mcp-servers.ts';
import { setupAgent, sharedRuntime, startUpstream, testDatabaseTargets } from './runtime-helper.ts';

const RUNTIME_TOOLS = [
  'engine_api_request',
  'engine_auth_register',
  'engine_mcp_authenticate',
  'engine_runtime_ai_chat',
  'engine_runtime_list_providers',
  'engine_runtime_mcp_execute_tool',
  'engine_usage_summary',
];

for (const target of testDatabaseTargets()) {
  describe(`public MCP endpoint: Runtime group (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });

    test('realm credentials list and run the Runtime group through a real MCP client', async (t) => {
      const engine = await shared.fresh();
      const url = await mcpUrl(engine);
      const client = await connect(t, url, realmHeaders(engine.a));
      const listed = await client.listTools();
      assert.deepEqual(listed.tools.map((tool) => tool.name).sort(), RUNTIME_TOOLS);

      const auth = await call(client, 'engine_mcp_authenticate');
      assert.equal(auth.isError, false);
      assert.equal(auth.data.realm_id, engine.a.realmId);
      assert.equal(auth.data.role, 'owner');

      const upstream = await startUpstream(t, () => ({ content: 'We have 4 mugs.' }));
      const { agentId, providerId } = await setupAgent(engine, engine.a, upstream.url);
      const providers = await call(client, 'engine_runtime_list_providers');
      assert.deepEqual(
        providers.data.data.map((p: any) => p.id),
        [providerId],
      );
      assert.ok(!JSON.stringify(providers.data).includes('sk-test-upstream'));

      const chat = await call(client, 'engine_runtime_ai_chat', {
        agent_id: agentId,
        messages: [{ role: 'user', content: 'Do you have mugs?' }],
      });
      assert.equal(chat.isError, false, JSON.stringify(chat.data));
      assert.equal(chat.data.content, 'We have 4 mugs.');
      assert.equal(chat.data.action.type, 'RESPOND');

      const usage = await call(client, 'engine_usage_summary', { days: 7 });
      assert.equal(usage.data.totals.executions, 1);
      assert.equal(usage.data.agents[0].agent_id, agentId);

      const rest = await call(client, 'engine_api_request', { method: 'GET', path: '/api/v1/runtime/providers' });
      assert.equal(rest.data.status, 200);
      assert.equal(rest.data.body.data[0].id, providerId);
      const catalog = await call(client, 'engine_api_request', { method: 'GET', path: '/api/v1/catalog/products' });
      assert.equal(catalog.isError, true);
      assert.equal(catalog.data.error.code, 'MCP_API_PATH_REFUSED');
      const traversal = await call(client, 'engine_api_request', {
        method: 'GET',
        path: '/api/v1/runtime/../catalog/stores',
      });
      assert.equal(traversal.isError, true);
      // The caller's own rights: another realm's members are not reachable.
      const foreign = await call(client, 'engine_api_request', {
        method: 'GET',
        path: `/api/v1/realms/${engine.b.realmId}/members`,
      });
      assert.ok(foreign.data.status === 403 || foreign.data.status === 404, JSON.stringify(foreign.data));

      const server = await startMcpServer(t, { label: 'R' });
      const registered = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
        token: engine.a.token,
        body: { name: 'runtime-mcp-tools', url: server.url, auto_discover: true },
      });
      assert.equal(registered.status, 201);
      const executed = await call(client, 'engine_runtime_mcp_execute_tool', {
        tool_name: 'lookup_stock',
        arguments: { sku: 'M-1' },
      });
      assert.equal(executed.isError, false, JSON.stringify(executed.data));
      assert.equal(executed.data.mcp_server_id, registered.body.id);
      assert.deepEqual(executed.data.result.structured_content.echo, { sku: 'M-1' });
      const refused = await call(client, 'engine_runtime_mcp_execute_tool', {
        tool_name: 'lookup_stock',
        arguments: { nope: 1 },
      });
      assert.equal(refused.isError, true);
      assert.equal(refused.data.error.code, 'TOOL_ARGUMENTS_INVALID');
      // The call made is one usage record of source `mcp`; the refused one (nothing called) is none.
      const toolUsage = await engine.call('GET', '/api/v1/usages?type=tool', { token: engine.a.token });
      assert.deepEqual(
        toolUsage.body.data.map((r: any) => [r.source, r.name, r.tool_server_id, r.status]),
        [['mcp', 'lookup_stock', registered.body.id, 'succeeded']],
      );

      // A 403 of the runtime (registration disabled) is a JSON-RPC error, like every permission failure of the endpoint.
      await assert.rejects(
        call(client, 'engine_auth_register', { username: 'someone' }),
        /Registration is not enabled/,
      );
      assert.ok(!engine.logs().includes(engine.a.secretKey));
    });

    test("a realm id that is not the credentials' realm is refused; incomplete or wrong credentials are 401", async () => {
      const engine = await shared.fresh();
      const url = await mcpUrl(engine);
      const post = (headers: Record<string, string>) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        });
      const mismatch = await post(realmHeaders(engine.a, engine.b.realmId));
      assert.equal(mismatch.status, 403);
      assert.equal((await mismatch.json()).error.code, -32003);
      const partial = await post({ 'x-engine-realm-id': engine.a.realmId, 'x-engine-access-key': engine.a.accessKey });
      assert.equal(partial.status, 401);
      const wrong = await post({ ...realmHeaders(engine.a), 'x-engine-secret-key': 'sk_wrong' });
      assert.equal(wrong.status, 401);
    });

    test('a revoked key pair stops working on the tool endpoint at once', async () => {
      const engine = await shared.fresh();
      const url = await mcpUrl(engine);
      const pair = await engine.call('POST', '/api/v1/auth/keys', { token: engine.a.token, body: { name: 'mcp' } });
      assert.equal(pair.status, 201, JSON.stringify(pair.body));
      const headers = {
        'x-engine-realm-id': engine.a.realmId,
        'x-engine-access-key': pair.body.access_key,
        'x-engine-secret-key': pair.body.secret_key,
      };
      const list = () =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        });
      assert.equal((await list()).status, 200);
      const revoked = await engine.call('DELETE', `/api/v1/auth/keys/${pair.body.key_id}`, { token: engine.a.token });
      assert.equal(revoked.status, 200);
      assert.equal((await list()).status, 401);
    });

    test('merchant keys keep working for the catalog groups on the same endpoint and never see the Runtime group', async (t) => {
      const engine = await shared.fresh();
      const url = await mcpUrl(engine);
      const boot = await bootstrapMerchant(engine.ctx.db, engine.ctx.principals);
      const client = await connect(t, url, { 'x-catalog-api-key': boot.keys.merchant });
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      assert.ok(names.includes('catalog_list_stores'));
      assert.ok(!names.some((name) => name.startsWith('engine_')));
      const stores = await call(client, 'catalog_list_stores');
      assert.equal(stores.isError, false);
      const runtime = await client
        .callTool({ name: 'engine_usage_summary', arguments: {} })
        .catch((error: Error) => error);
      assert.ok(runtime instanceof Error);
    });
  });
}
