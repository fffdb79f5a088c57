import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { registeredErrors } from '@keel/core';
import { ToolErrors } from '../src/toolservers/toolserver-errors.ts';
import { defaultTools, type FakeServer, reserveTool, startMcpServer } from './mcp-servers.ts';
import { type Realm, type RuntimeUnderTest, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

const deleteTool = {
  name: 'delete_sku',
  description: 'Delete a SKU',
  inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
};

interface Setup {
  engine: RuntimeUnderTest;
  a: FakeServer;
  b: FakeServer;
  idA: string;
  idB: string;
}

async function registerServer(engine: RuntimeUnderTest, realm: Realm, server: FakeServer, type = 'http') {
  const created = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
    token: realm.token,
    body: {
      name: `srv-${server.label}-${Math.random().toString(36).slice(2, 6)}`,
      url: server.url,
      type,
      auto_discover: true,
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.discovery.ok, true, JSON.stringify(created.body.discovery));
  return created.body.id as string;
}

async function approveAll(engine: RuntimeUnderTest, realm: Realm, serverId: string) {
  const tools = await engine.call('GET', `/api/v1/runtime/mcp/servers/${serverId}/tools`, { token: realm.token });
  for (const tool of tools.body.data)
    if (!tool.enabled)
      await engine.call('PUT', `/api/v1/runtime/mcp/tools/${tool.id}/review`, {
        token: realm.token,
        body: { decision: 'approve' },
      });
}

async function twoServers(engine: RuntimeUnderTest, t: TestContext): Promise<Setup> {
  const a = await startMcpServer(t, { label: 'A', tools: [...defaultTools(), reserveTool, deleteTool] });
  const b = await startMcpServer(t, { label: 'B' });
  const idA = await registerServer(engine, engine.a, a);
  const idB = await registerServer(engine, engine.a, b);
  await approveAll(engine, engine.a, idA);
  return { engine, a, b, idA, idB };
}

async function sessionFor(engine: RuntimeUnderTest, realm: Realm, servers: string[]) {
  const agent = await engine.call('POST', `/api/v1/realms/${realm.realmId}/agents`, {
    token: realm.token,
    body: { username: `agent-${Math.random().toString(36).slice(2, 8)}` },
  });
  const agentId = agent.body.identity.id as string;
  const config = await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
    token: realm.token,
    body: { allowed_mcp_servers: servers },
  });
  assert.equal(config.status, 200, JSON.stringify(config.body));
  const session = await engine.call('POST', '/api/v1/runtime/sessions', {
    token: realm.token,
    body: { agent_id: agentId },
  });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return { agentId, sessionId: session.body.session_id as string, resumeToken: session.body.resume_token as string };
}

const execute = (engine: RuntimeUnderTest, realm: Realm, body: Record<string, unknown>) =>
  engine.call('POST', '/api/v1/runtime/mcp/tools/execute', { token: realm.token, body });

for (const target of testDatabaseTargets()) {
  describe(`tool execution and routing (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });

    test('a session reaches only the servers attached to its agent; results come back through the SDK client', async (t) => {
      const engine = await shared.fresh();
      const s = await twoServers(engine, t);
      const session = await sessionFor(engine, engine.a, [s.idB]);
      const ok = await execute(engine, engine.a, {
        session_id: session.sessionId,
        resume_token: session.resumeToken,
        tool_name: 'lookup_stock',
        arguments: { sku: 'MUG-1' },
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.mcp_server_id, s.idB);
      assert.deepEqual(ok.body.result.structured_content, {
        server: 'B',
        tool: 'lookup_stock',
        echo: { sku: 'MUG-1' },
      });
      assert.equal(s.a.calls.length, 0);
      // reserve_stock is offered only by A, which the agent does not attach.
      const notAttached = await execute(engine, engine.a, {
        session_id: session.sessionId,
        resume_token: session.resumeToken,
        tool_name: 'reserve_stock',
        arguments: { sku: 'MUG-1', quantity: 1 },
      });
      assert.equal(notAttached.status, 409);
      assert.equal(notAttached.body.error.code, 'TOOL_ROUTE_FAILED');
      assert.equal(s.a.calls.length, 0);
      const trace = await engine.call(
        'GET',
        `/api/v1/runtime/mcp/routing/trace/${notAttached.headers['x-request-id']}`,
        {
          token: engine.a.token,
        },
      );
      assert.equal(trace.status, 200);
      assert.deepEqual(trace.body.decisions[0].decision.candidates[0].reasons, ['SERVER_NOT_ATTACHED']);
      // Without the resume token the session is not usable; another realm cannot use it at all.
      const noToken = await execute(engine, engine.a, {
        session_id: session.sessionId,
        tool_name: 'lookup_stock',
        arguments: { sku: 'X' },
      });
      assert.equal(noToken.status, 403);
      const foreign = await execute(engine, engine.b, {
        session_id: session.sessionId,
        resume_token: session.resumeToken,
        tool_name: 'lookup_stock',
        arguments: { sku: 'X' },
      });
      assert.equal(foreign.status, 404);
      const foreignTrace = await engine.call(
        'GET',
        `/api/v1/runtime/mcp/routing/trace/${notAttached.headers['x-request-id']}`,
        {
          token: engine.b.token,
        },
      );
      assert.equal(foreignTrace.status, 404);
    });

    test('agent mcp-servers attach and detach bound what its sessions reach', async (t) => {
      const engine = await shared.fresh();
      const s = await twoServers(engine, t);
      const session = await sessionFor(engine, engine.a, []);
      const body = {
        session_id: session.sessionId,
        resume_token: session.resumeToken,
        tool_name: 'lookup_stock',
        arguments: { sku: 'Q' },
      };
      assert.equal((await execute(engine, engine.a, body)).status, 409);
      const attach = await engine.call('POST', `/api/v1/runtime/agents/${session.agentId}/mcp-servers`, {
        token: engine.a.token,
        body: { server_id: s.idA },
      });
      assert.equal(attach.status, 200, JSON.stringify(attach.body));
      assert.deepEqual(attach.body.allowed_mcp_servers, [s.idA]);
      const again = await engine.call('POST', `/api/v1/runtime/agents/${session.agentId}/mcp-servers`, {
        token: engine.a.token,
        body: { server_id: s.idA },
      });
      assert.deepEqual(again.body.allowed_mcp_servers, [s.idA]);
      const ok = await execute(engine, engine.a, body);
      assert.equal(ok.status, 200);
      assert.equal(ok.body.mcp_server_id, s.idA);
      const foreignServer = await startMcpServer(t, { label: 'F' });
      const foreignId = await registerServer(engine, engine.b, foreignServer);
      const foreign = await engine.call('POST', `/api/v1/runtime/agents/${session.agentId}/mcp-servers`, {
        token: engine.a.token,
        body: { server_id: foreignId },
      });
      assert.equal(foreign.status, 404);
      const detach = await engine.call('DELETE', `/api/v1/runtime/agents/${session.agentId}/mcp-servers/${s.idA}`, {
        token: engine.a.token,
      });
      assert.equal(detach.status, 200);
      assert.deepEqual(detach.body.allowed_mcp_servers, []);
      assert.equal((await execute(engine, engine.a, body)).status, 409);
      const notAttached = await engine.call(
        'DELETE',
        `/api/v1/runtime/agents/${session.agentId}/mcp-servers/${s.idB}`,
        {
          token: engine.a.token,
        },
      );
      assert.equal(notAttached.status, 404);
      // Concurrent attaches both land.
      await Promise.all(
        [s.idA, s.idB].map((serverId) =>
          engine.call('POST', `/api/v1/runtime/agents/${session.agentId}/mcp-servers`, {
            token: engine.a.token,
            body: { server_id: serverId },
          }),
        ),
      );
      const config = await engine.call('GET', `/api/v1/runtime/agents/${session.agentId}/config`, {
        token: engine.a.token,
      });
      assert.deepEqual([...config.body.allowed_mcp_servers].sort(), [s.idA, s.idB].sort());
    });

    test('inside the overlap window after a rotation, a refused new credential falls back to the previous one', async (t) => {
      const engine = await shared.fresh();
      const server = await startMcpServer(t, { label: 'K', keys: ['old-key-0000000001', 'new-key-0000000002'] });
      const created = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
        token: engine.a.token,
        body: { name: 'rotating', url: server.url, api_key: 'old-key-0000000001', auto_discover: true },
      });
      assert.equal(created.status, 201);
      const rotated = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${created.body.id}`, {
        token: engine.a.token,
        body: { name: 'rotating', url: server.url, api_key: 'new-key-0000000002' },
      });
      assert.equal(rotated.status, 200);
      // The server's rollout of the new key is undone: calls still succeed with the previous version.
      server.state.keys.delete('new-key-0000000002');
      const ok = await execute(engine, engine.a, { tool_name: 'lookup_stock', arguments: { sku: 'R' } });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      // After the window the previous version is no longer used.
      engine.advance(16 * 60 * 1000);
      const token = (await engine.exchange(engine.a.accessKey, engine.a.secretKey)).body.access_token;
      await engine.call('PATCH', `/api/v1/runtime/mcp/servers/${created.body.id}/toggle`, {
        token,
        body: { is_active: true },
      });
      const refused = await execute(
        engine,
        { ...engine.a, token },
        { tool_name: 'lookup_stock', arguments: { sku: 'R' } },
      );
      assert.equal(refused.status, 502);
      assert.equal(refused.body.error.message.includes('AUTH'), true);
      assert.ok(!JSON.stringify(refused.body).includes('key-000'));
    });

    test('fail closed: unknown tool, unapproved tool, undeclared or invalid arguments, high-impact direct calls', async (t) => {
      const engine = await shared.fresh();
      const a = await startMcpServer(t, { label: 'A', tools: [...defaultTools(), reserveTool, deleteTool] });
      const idA = await registerServer(engine, engine.a, a);
      const unknown = await execute(engine, engine.a, { tool_name: 'no_such_tool' });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'TOOL_NOT_AVAILABLE');
      const unapproved = await execute(engine, engine.a, {
        tool_name: 'reserve_stock',
        arguments: { sku: 'A', quantity: 1 },
      });
      assert.equal(unapproved.status, 404);
      await approveAll(engine, engine.a, idA);
      const extra = await execute(engine, engine.a, {
        tool_name: 'lookup_stock',
        arguments: { sku: 'A', admin: true },
      });
      assert.equal(extra.status, 400);
      assert.equal(extra.body.error.code, 'TOOL_ARGUMENTS_INVALID');
      const wrongType = await execute(engine, engine.a, {
        tool_name: 'reserve_stock',
        arguments: { sku: 'A', quantity: 'two' },
      });
      assert.equal(wrongType.status, 400);
      const destructive = await execute(engine, engine.a, { tool_name: 'delete_sku', arguments: { sku: 'A' } });
      assert.equal(destructive.status, 403);
      assert.equal(destructive.body.error.code, 'TOOL_HIGH_IMPACT_DIRECT_CALL');
      assert.equal(a.calls.length, 0);
      // Another realm does not see the tool at all.
      const foreign = await execute(engine, engine.b, { tool_name: 'lookup_stock', arguments: { sku: 'A' } });
      assert.equal(foreign.status, 404);
      // A disabled server is filtered out.
      await engine.call('PATCH', `/api/v1/runtime/mcp/servers/${idA}/toggle`, {
        token: engine.a.token,
        body: { is_active: false },
      });
      const disabled = await execute(engine, engine.a, { tool_name: 'lookup_stock', arguments: { sku: 'A' } });
      assert.equal(disabled.status, 409);
      assert.equal(a.calls.length, 0);
    });

    test('routing under injected failures and latency: reads fall back, rule timeouts apply, health is observed', async (t) => {
      const engine = await shared.fresh();
      const s = await twoServers(engine, t);
      const rule = await engine.call('POST', '/api/v1/runtime/mcp/routing/rules', {
        token: engine.a.token,
        body: {
          tool_name: 'lookup_stock',
          strategy: 'explicit',
          servers: [s.idA, s.idB],
          timeout_ms: 300,
          max_retries: 2,
        },
      });
      assert.equal(rule.status, 201, JSON.stringify(rule.body));
      s.a.state.failCalls = 503;
      const fallback = await execute(engine, engine.a, { tool_name: 'lookup_stock', arguments: { sku: 'X' } });
      assert.equal(fallback.status, 200, JSON.stringify(fallback.body));
      assert.equal(fallback.body.mcp_server_id, s.idB);
      assert.deepEqual(
        fallback.body.attempts.map((a: any) => [a.server_id, a.ok, a.code ?? null]),
        [
          [s.idA, false, 'TOOL_SERVER_UNAVAILABLE'],
          [s.idB, true, null],
        ],
      );
      s.a.state.failCalls = null;
      s.a.state.delayMs = 600;
      const slow = await execute(engine, engine.a, { tool_name: 'lookup_stock', arguments: { sku: 'Y' } });
      assert.equal(slow.status, 200);
      assert.equal(slow.body.attempts[0].code, 'TOOL_TIMEOUT');
      assert.equal(slow.body.mcp_server_id, s.idB);
      s.a.state.delayMs = 0;
      // Registry routing scores observed health: A failed twice, so B is chosen first.
      await engine.call('DELETE', `/api/v1/runtime/mcp/routing/rules/${rule.body.id}`, { token: engine.a.token });
      const preview = await engine.call('POST', '/api/v1/runtime/mcp/routing/preview', {
        token: engine.a.token,
        body: { tool_name: 'lookup_stock' },
      });
      assert.equal(preview.status, 200);
      assert.equal(preview.body.strategy, 'registry');
      assert.equal(preview.body.chosen, s.idB);
      assert.deepEqual(preview.body.fallbacks, [s.idA]);
      // Both failing: a 502 with a secret-free message, no 5xx of the engine's own.
      s.a.state.failCalls = 500;
      s.b.state.failCalls = 500;
      const down = await execute(engine, engine.a, { tool_name: 'lookup_stock', arguments: { sku: 'Z' } });
      assert.equal(down.status, 502);
      assert.equal(down.body.error.code, 'TOOL_CALL_FAILED');
    });

    test('a write is retried only with an idempotency key, on the same server', async (t) => {
      const engine = await shared.fresh();
      const s = await twoServers(engine, t);
      await engine.call('POST', '/api/v1/runtime/mcp/routing/rules', {
        token: engine.a.token,
        body: { tool_name: 'reserve_stock', strategy: 'registry', max_retries: 2, timeout_ms: 1000 },
      });
      s.a.state.failCalls = 503;
      const once = await execute(engine, engine.a, {
        tool_name: 'reserve_stock',
        arguments: { sku: 'A', quantity: 1 },
      });
      assert.equal(once.status, 502);
      const trace = await engine.call('GET', `/api/v1/runtime/mcp/routing/trace/${once.headers['x-request-id']}`, {
        token: engine.a.token,
      });
      assert.equal(trace.body.decisions[0].attempts.length, 1);
      const keyed = await execute(engine, engine.a, {
        tool_name: 'reserve_stock',
        arguments: { sku: 'A', quantity: 1 },
        idempotency_key: 'reserve-A-1',
      });
      assert.equal(keyed.status, 502);
      const keyedTrace = await engine.call(
        'GET',
        `/api/v1/runtime/mcp/routing/trace/${keyed.headers['x-request-id']}`,
        { token: engine.a.token },
      );
      assert.deepEqual(
        keyedTrace.body.decisions[0].attempts.map((a: any) => a.server_id),
        [s.idA, s.idA, s.idA],
      );
      // Four failures in a row: A is unhealthy and no longer routed to (fail closed, nothing sent) …
      s.a.state.failCalls = null;
      const sentBefore = s.a.calls.length;
      const unhealthy = await execute(engine, engine.a, {
        tool_name: 'reserve_stock',
        arguments: { sku: 'A', quantity: 2 },
      });
      assert.equal(unhealthy.status, 409);
      assert.equal(s.a.calls.length, sentBefore);
      // … until the failures have decayed (half-life 5 minutes) and a successful probe ended the streak.
      engine.advance(30 * 60 * 1000);
      const token = (await engine.exchange(engine.a.accessKey, engine.a.secretKey)).body.access_token;
      const probe = await engine.call('POST', `/api/v1/runtime/mcp/servers/${s.idA}/probe`, { token });
      assert.equal(probe.body.ok, true);
      const ok = await execute(
        engine,
        { ...engine.a, token },
        { tool_name: 'reserve_stock', arguments: { sku: 'A', quantity: 2 }, idempotency_key: 'k-2' },
      );
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });

    test('parallel aggregation returns the successful results and bounded failure metadata', async (t) => {
      const engine = await shared.fresh();
      const s = await twoServers(engine, t);
      const c = await startMcpServer(t, { label: 'C', transport: 'sse' });
      const idC = await registerServer(engine, engine.a, c, 'sse');
      s.b.state.failCalls = 500;
      const aggregate = await engine.call('POST', '/api/v1/runtime/mcp/tools/aggregate', {
        token: engine.a.token,
        body: { tool_name: 'lookup_stock', arguments: { sku: 'MUG-1' } },
      });
      assert.equal(aggregate.status, 200, JSON.stringify(aggregate.body));
      assert.equal(aggregate.body.succeeded, 2);
      assert.equal(aggregate.body.failed, 1);
      assert.deepEqual(aggregate.body.results.map((r: any) => r.mcp_server_id).sort(), [s.idA, idC].sort());
      assert.equal(aggregate.body.failures[0].mcp_server_id, s.idB);
      assert.equal(aggregate.body.failures[0].code, 'TOOL_SERVER_UNAVAILABLE');
      assert.ok(aggregate.body.failures[0].message.length <= 200);

      const parallel = await engine.call('POST', '/api/v1/runtime/mcp/tools/execute-parallel', {
        token: engine.a.token,
        body: {
          calls: [
            { tool_name: 'reserve_stock', arguments: { sku: 'A', quantity: 1 } },
            { tool_name: 'missing_tool' },
            { tool_name: 'lookup_stock', arguments: { sku: 'B' } },
          ],
        },
      });
      assert.equal(parallel.status, 200, JSON.stringify(parallel.body));
      assert.deepEqual(
        parallel.body.results.map((r: any) => r.ok),
        [true, false, true],
      );
      assert.equal(parallel.body.results[1].error.code, 'TOOL_NOT_AVAILABLE');
    });

    test('proxy, route, rules validation, reload and tool session context', async (t) => {
      const engine = await shared.fresh();
      const s = await twoServers(engine, t);
      const proxied = await engine.call('POST', '/api/v1/runtime/mcp/proxy', {
        token: engine.a.token,
        body: { server_id: s.idB, tool_name: 'lookup_stock', arguments: { sku: 'P' } },
      });
      assert.equal(proxied.status, 200, JSON.stringify(proxied.body));
      assert.equal(proxied.body.mcp_server_id, s.idB);
      const foreignProxy = await engine.call('POST', '/api/v1/runtime/mcp/proxy', {
        token: engine.b.token,
        body: { server_id: s.idB, tool_name: 'lookup_stock', arguments: { sku: 'P' } },
      });
      assert.equal(foreignProxy.status, 404);
      const routed = await engine.call('POST', '/api/v1/runtime/mcp/tools/route', {
        token: engine.a.token,
        body: { intent: 'look up stock' },
      });
      assert.equal(routed.status, 200, JSON.stringify(routed.body));
      assert.equal(routed.body.tool_name, 'lookup_stock');
      const invalid = await engine.call('POST', '/api/v1/runtime/mcp/routing/rules', {
        token: engine.a.token,
        body: { tool_name: 'lookup_stock', strategy: 'explicit' },
      });
      assert.equal(invalid.status, 400);
      const foreignServer = await engine.call('POST', '/api/v1/runtime/mcp/routing/rules', {
        token: engine.b.token,
        body: { tool_name: 'lookup_stock', strategy: 'explicit', servers: [s.idA] },
      });
      assert.equal(foreignServer.status, 404);
      const reload = await engine.call('POST', '/api/v1/runtime/mcp/routing/reload', { token: engine.a.token });
      assert.equal(reload.status, 200);
      const session = await sessionFor(engine, engine.a, [s.idA]);
      const headers = { 'x-resume-token': session.resumeToken };
      const empty = await engine.call('GET', `/api/v1/runtime/mcp/sessions/${session.sessionId}/context`, {
        token: engine.a.token,
        headers,
      });
      assert.deepEqual(empty.body.context, {});
      const put = await engine.call('PUT', `/api/v1/runtime/mcp/sessions/${session.sessionId}/context`, {
        token: engine.a.token,
        headers,
        body: { context: { warehouse: 'main' } },
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(put.body.version, 1);
      const noToken = await engine.call('GET', `/api/v1/runtime/mcp/sessions/${session.sessionId}/context`, {
        token: engine.a.token,
      });
      assert.equal(noToken.status, 403);
      const foreign = await engine.call('GET', `/api/v1/runtime/mcp/sessions/${session.sessionId}/context`, {
        token: engine.b.token,
        headers,
      });
      assert.equal(foreign.status, 404);
    });
  });
}

test('tool error codes are registered with their statuses', () => {
  for (const factory of Object.values(ToolErrors)) {
    const error = (factory as (...args: string[]) => { code: string; statusCode: number })('x', 'y');
    assert.ok(registeredErrors().has(error.code));
    assert.ok(error.statusCode >= 400 && error.statusCode < 600);
  }
});
