import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { waitUntil } from '@keel/core/testing';
import { defaultTools, startMcpServer } from './mcp-servers.ts';
import { type Realm, type RuntimeUnderTest, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';
import { certificateAuthority } from './test-certs.ts';

const writeTool = {
  name: 'adjust_stock',
  description: 'Set the stock level of a SKU',
  inputSchema: {
    type: 'object',
    properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 0 } },
    required: ['sku', 'quantity'],
  },
};

async function register(engine: RuntimeUnderTest, realm: Realm, body: Record<string, unknown>) {
  return engine.call('POST', '/api/v1/runtime/mcp/servers', {
    token: realm.token,
    body: { name: `srv-${Math.random().toString(36).slice(2, 8)}`, ...body },
  });
}

async function toolsOf(engine: RuntimeUnderTest, realm: Realm, serverId: string) {
  const listed = await engine.call('GET', `/api/v1/runtime/mcp/servers/${serverId}/tools`, { token: realm.token });
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  return Object.fromEntries(listed.body.data.map((t: any) => [t.name, t]));
}

for (const target of testDatabaseTargets()) {
  describe(`tool-server registry (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });

    test('register with auto_discover: read-only tools enabled, write tools gated by review; secrets never shown', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startMcpServer(t, {
        tools: [...defaultTools(), writeTool],
        keys: ['tool-key-one-123456'],
      });
      const created = await register(engine, engine.a, {
        url: upstream.url,
        api_key: 'tool-key-one-123456',
        auto_discover: true,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.api_key_set, true);
      assert.equal(created.body.discovery.ok, true);
      assert.equal(created.body.discovery.tools.added, 2);
      assert.ok(!JSON.stringify(created.body).includes('tool-key-one'));
      const tools = await toolsOf(engine, engine.a, created.body.id);
      assert.equal(tools.lookup_stock.review_status, 'approved');
      assert.equal(tools.lookup_stock.enabled, true);
      assert.deepEqual(tools.lookup_stock.impact, ['read']);
      assert.equal(tools.adjust_stock.review_status, 'disabled');
      assert.equal(tools.adjust_stock.enabled, false);
      assert.ok(tools.adjust_stock.impact.includes('write'));
      assert.equal(tools.adjust_stock.review_required, true);

      const approved = await engine.call('PUT', `/api/v1/runtime/mcp/tools/${tools.adjust_stock.id}/review`, {
        token: engine.a.token,
        body: { decision: 'approve', note: 'checked' },
      });
      assert.equal(approved.status, 200);
      assert.equal(approved.body.enabled, true);
      // Another realm cannot see or review it: the same 404 as an unknown id.
      const foreign = await engine.call('PUT', `/api/v1/runtime/mcp/tools/${tools.adjust_stock.id}/review`, {
        token: engine.b.token,
        body: { decision: 'reject' },
      });
      assert.equal(foreign.status, 404);
      const foreignServer = await engine.call('GET', `/api/v1/runtime/mcp/servers/${created.body.id}`, {
        token: engine.b.token,
      });
      assert.equal(foreignServer.status, 404);
      const get = await engine.call('GET', `/api/v1/runtime/mcp/servers/${created.body.id}`, { token: engine.a.token });
      assert.ok(!JSON.stringify(get.body).includes('tool-key-one'));
      assert.ok(!engine.logs().includes('tool-key-one'));
    });

    test('a contract change on rediscovery disables the tool again; a failing contract cannot be approved', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startMcpServer(t, {
        tools: [
          ...defaultTools(),
          {
            name: 'bad_tool',
            description: 'Search',
            inputSchema: { type: 'object', properties: { q: { type: 'string', pattern: '(a+)+$' } } },
            annotations: { readOnlyHint: true },
          },
        ],
      });
      const created = await register(engine, engine.a, { url: upstream.url, auto_discover: true });
      let tools = await toolsOf(engine, engine.a, created.body.id);
      assert.equal(tools.lookup_stock.enabled, true);
      assert.equal(tools.bad_tool.contract.status, 'failing');
      const refused = await engine.call('PUT', `/api/v1/runtime/mcp/tools/${tools.bad_tool.id}/review`, {
        token: engine.a.token,
        body: { decision: 'approve' },
      });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error.code, 'TOOL_CONTRACT_FAILING');

      upstream.state.tools[0]!.description = 'Look up stock and also reserve it';
      const again = await engine.call('POST', `/api/v1/runtime/mcp/servers/${created.body.id}/discover`, {
        token: engine.a.token,
      });
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(again.body.tools.changed, 1);
      tools = await toolsOf(engine, engine.a, created.body.id);
      assert.equal(tools.lookup_stock.review_status, 'disabled');
      assert.equal(tools.lookup_stock.enabled, false);
      const report = await engine.call('POST', `/api/v1/runtime/mcp/servers/${created.body.id}/contract-test`, {
        token: engine.a.token,
      });
      assert.equal(report.status, 200);
      assert.equal(report.body.passed, false);
      assert.equal(report.body.failing, 1);
    });

    test('SSE transport: discovery, probe and resources through the SDK client', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startMcpServer(t, { transport: 'sse' });
      const created = await register(engine, engine.a, { url: upstream.url, type: 'sse', auto_discover: true });
      assert.equal(created.status, 201);
      assert.equal(created.body.discovery.ok, true, JSON.stringify(created.body.discovery));
      const probe = await engine.call('POST', `/api/v1/runtime/mcp/servers/${created.body.id}/probe`, {
        token: engine.a.token,
      });
      assert.equal(probe.status, 200);
      assert.equal(probe.body.ok, true);
      assert.ok(probe.body.negotiated.capabilities.tools);
      const resources = await engine.call('GET', `/api/v1/runtime/mcp/servers/${created.body.id}/resources?limit=1`, {
        token: engine.a.token,
      });
      assert.equal(resources.body.data[0].uri, 'inventory://warehouses/main');
      const templates = await engine.call('GET', `/api/v1/runtime/mcp/servers/${created.body.id}/resource-templates`, {
        token: engine.a.token,
      });
      assert.equal(templates.body.data[0].uri_template, 'inventory://skus/{sku}');
      const read = await engine.call('POST', `/api/v1/runtime/mcp/servers/${created.body.id}/resources/read`, {
        token: engine.a.token,
        body: { uri: 'inventory://skus/ABC-1' },
      });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.equal(read.body.contents[0].text, 'templated inventory://skus/ABC-1');
      const unknown = await engine.call('POST', `/api/v1/runtime/mcp/servers/${created.body.id}/resources/read`, {
        token: engine.a.token,
        body: { uri: 'file:///etc/passwd' },
      });
      assert.equal(unknown.status, 404);
    });

    test('credential rotation: live initialize check, atomic activation, overlap, rollback re-tests', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startMcpServer(t, { keys: ['key-version-one-0001'] });
      const created = await register(engine, engine.a, { url: upstream.url, api_key: 'key-version-one-0001' });
      const id = created.body.id;
      const put = (apiKey: string) =>
        engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}`, {
          token: engine.a.token,
          body: { name: created.body.name, url: upstream.url, api_key: apiKey },
        });
      // A key the server refuses is never activated.
      const refused = await put('key-version-bad-0000');
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error.code, 'TOOL_SERVER_CREDENTIAL_TEST_FAILED');
      assert.ok(!JSON.stringify(refused.body).includes('key-version-bad'));
      let creds = await engine.call('GET', `/api/v1/runtime/mcp/servers/${id}/credentials`, { token: engine.a.token });
      assert.equal(creds.body.active_version, 1);
      assert.equal(creds.body.data.length, 1);

      upstream.state.keys.add('key-version-two-0002');
      const rotated = await put('key-version-two-0002');
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      assert.equal(rotated.body.active_credential_version, 2);
      creds = await engine.call('GET', `/api/v1/runtime/mcp/servers/${id}/credentials`, { token: engine.a.token });
      assert.deepEqual(
        creds.body.data.map((c: any) => [c.version, c.status]),
        [
          [2, 'active'],
          [1, 'previous'],
        ],
      );
      assert.ok(creds.body.data[0].tested_at);
      assert.ok(creds.body.data[1].overlap_until);
      assert.ok(!JSON.stringify(creds.body).includes('key-version'));

      // Rollback re-tests: version 1 no longer accepted → 409 and nothing changes.
      upstream.state.keys.delete('key-version-one-0001');
      const failed = await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/credentials/1/rollback`, {
        token: engine.a.token,
      });
      assert.equal(failed.status, 409);
      upstream.state.keys.add('key-version-one-0001');
      const rolled = await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/credentials/1/rollback`, {
        token: engine.a.token,
      });
      assert.equal(rolled.status, 200, JSON.stringify(rolled.body));
      assert.equal(rolled.body.active_version, 1);
      const test = await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/test`, { token: engine.a.token });
      assert.equal(test.body.ok, true);
      const missing = await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/credentials/9/rollback`, {
        token: engine.a.token,
      });
      assert.equal(missing.status, 404);
    });

    test('probe records authentication failures; test reports them without secrets', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startMcpServer(t, { keys: ['right-key-000000001'] });
      const created = await register(engine, engine.a, { url: upstream.url, api_key: 'wrong-key-00000001' });
      const probe = await engine.call('POST', `/api/v1/runtime/mcp/servers/${created.body.id}/probe`, {
        token: engine.a.token,
      });
      assert.equal(probe.body.ok, false);
      assert.equal(probe.body.error.code, 'TOOL_SERVER_AUTH_FAILED');
      assert.equal(probe.body.health.status, 'unhealthy');
      const test = await engine.call('POST', `/api/v1/runtime/mcp/servers/${created.body.id}/test`, {
        token: engine.a.token,
      });
      assert.equal(test.body.authenticated, false);
      const get = await engine.call('GET', `/api/v1/runtime/mcp/servers/${created.body.id}`, { token: engine.a.token });
      assert.equal(get.body.health.auth_failures, 2);
      assert.equal(get.body.health.last_error_code, 'TOOL_SERVER_AUTH_FAILED');
    });

    test('profile: bearer and customer-managed credential reference authenticate; egress allowlist bounds the host', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startMcpServer(t, { keys: ['bearer-secret-00001', 'customer-managed-0001'] });
      const created = await register(engine, engine.a, { url: upstream.url, api_key: 'bearer-secret-00001' });
      const id = created.body.id;
      const bearer = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}/profile`, {
        token: engine.a.token,
        body: {
          auth: { type: 'bearer' },
          egress: { allowed_hosts: ['127.0.0.1'] },
          region: 'eu',
          data_handling: ['no_retention'],
        },
      });
      assert.equal(bearer.status, 200, JSON.stringify(bearer.body));
      assert.equal(bearer.body.profile.auth.type, 'bearer');
      assert.equal(
        (await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/test`, { token: engine.a.token })).body.ok,
        true,
      );
      process.env.KEEL_TOOL_CREDENTIAL_SHOP_TOOLS = 'customer-managed-0001';
      t.after(() => delete process.env.KEEL_TOOL_CREDENTIAL_SHOP_TOOLS);
      const ref = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}/profile`, {
        token: engine.a.token,
        body: { auth: { type: 'credential_ref' }, credential_ref: 'SHOP_TOOLS' },
      });
      assert.equal(ref.status, 200, JSON.stringify(ref.body));
      assert.equal(
        (await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/test`, { token: engine.a.token })).body.ok,
        true,
      );
      const missingRef = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}/profile`, {
        token: engine.a.token,
        body: { auth: { type: 'credential_ref' }, credential_ref: 'NOT_SET' },
      });
      assert.equal(missingRef.status, 200);
      const failed = await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/test`, { token: engine.a.token });
      assert.equal(failed.body.ok, false);
      assert.equal(failed.body.error.code, 'TOOL_SERVER_CREDENTIAL_MISSING');
      // An allowlist that does not name the server's host is refused; so is a URL change to another host.
      const other = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}/profile`, {
        token: engine.a.token,
        body: { egress: { allowed_hosts: ['tools.example.com'] } },
      });
      assert.equal(other.status, 400);
      const moved = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}`, {
        token: engine.a.token,
        body: { name: created.body.name, url: upstream.url.replace('127.0.0.1', 'localhost') },
      });
      assert.equal(moved.status, 400);
      const stdio = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}/profile`, {
        token: engine.a.token,
        body: { transport: 'stdio' },
      });
      assert.equal(stdio.status, 400);
    });

    test('profile: OAuth client credentials fetch a token from the token endpoint and send it as a bearer token', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startMcpServer(t, { keys: ['placeholder-key-0001'] });
      upstream.state.oauthClients.set('keel-engine', 'oauth-client-secret-01');
      const created = await register(engine, engine.a, { url: upstream.url, api_key: 'oauth-client-secret-01' });
      const profile = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${created.body.id}/profile`, {
        token: engine.a.token,
        body: {
          auth: {
            type: 'oauth_client_credentials',
            token_url: upstream.url.replace('/mcp', '/token'),
            client_id: 'keel-engine',
          },
        },
      });
      assert.equal(profile.status, 200, JSON.stringify(profile.body));
      assert.ok(!JSON.stringify(profile.body).includes('oauth-client-secret'));
      const ok = await engine.call('POST', `/api/v1/runtime/mcp/servers/${created.body.id}/test`, {
        token: engine.a.token,
      });
      assert.equal(ok.body.ok, true, JSON.stringify(ok.body));
      upstream.state.oauthClients.set('keel-engine', 'rotated-elsewhere-0001');
      const refused = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${created.body.id}`, {
        token: engine.a.token,
        body: { name: created.body.name, url: upstream.url, api_key: 'wrong-client-secret-1' },
      });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error.code, 'TOOL_SERVER_CREDENTIAL_TEST_FAILED');
    });

    test('profile: mTLS reaches an HTTPS server requiring a client certificate and fails closed with a wrong one', async (t) => {
      const engine = await shared.fresh();
      const ca = certificateAuthority();
      const upstream = await startMcpServer(t, { tls: { ...ca.issue('127.0.0.1', 'server'), ca: ca.cert } });
      assert.ok(upstream.url.startsWith('https://127.0.0.1:'));
      const good = JSON.stringify({ ...ca.issue('keel-engine', 'client'), ca: ca.cert });
      const created = await register(engine, engine.a, { url: upstream.url, api_key: good });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body.id;
      const profile = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}/profile`, {
        token: engine.a.token,
        body: { auth: { type: 'mtls' } },
      });
      assert.equal(profile.status, 200, JSON.stringify(profile.body));
      assert.equal(profile.body.profile.auth.type, 'mtls');
      const ok = await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/test`, { token: engine.a.token });
      assert.equal(ok.body.ok, true, JSON.stringify(ok.body));
      const discovered = await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/discover`, {
        token: engine.a.token,
      });
      assert.equal(discovered.status, 200, JSON.stringify(discovered.body));
      const executed = await engine.call('POST', '/api/v1/runtime/mcp/tools/execute', {
        token: engine.a.token,
        body: { mcp_server_id: id, tool_name: 'lookup_stock', arguments: { sku: 'SKU-MTLS' } },
      });
      assert.equal(executed.status, 200, JSON.stringify(executed.body));
      assert.equal(executed.body.result.structured_content.echo.sku, 'SKU-MTLS');

      // A client certificate of another CA: the handshake is refused, the rotation is not stored (fails closed).
      const stranger = certificateAuthority('Stranger CA');
      const wrongClient = JSON.stringify({ ...stranger.issue('keel-engine', 'client'), ca: ca.cert });
      const rotated = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}`, {
        token: engine.a.token,
        body: { name: created.body.name, url: upstream.url, api_key: wrongClient },
      });
      assert.equal(rotated.status, 409, JSON.stringify(rotated.body));
      assert.equal(rotated.body.error.code, 'TOOL_SERVER_CREDENTIAL_TEST_FAILED');
      // The server's certificate is verified too: trusting only another CA refuses it.
      const wrongTrust = JSON.stringify({ ...ca.issue('keel-engine', 'client'), ca: stranger.cert });
      const untrusted = await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}`, {
        token: engine.a.token,
        body: { name: created.body.name, url: upstream.url, api_key: wrongTrust },
      });
      assert.equal(untrusted.status, 409, JSON.stringify(untrusted.body));
      // No client certificate at all (a plain bearer profile) cannot reach it either.
      await engine.call('PUT', `/api/v1/runtime/mcp/servers/${id}/profile`, {
        token: engine.a.token,
        body: { auth: { type: 'bearer' } },
      });
      const plain = await engine.call('POST', `/api/v1/runtime/mcp/servers/${id}/test`, { token: engine.a.token });
      assert.equal(plain.body.ok, false);
      // A credential that is not a PEM pair fails closed with a message that shows none of it.
      const broken = await register(engine, engine.a, { url: upstream.url, api_key: 'not-a-pem-pair-secret-1' });
      await engine.call('PUT', `/api/v1/runtime/mcp/servers/${broken.body.id}/profile`, {
        token: engine.a.token,
        body: { auth: { type: 'mtls' } },
      });
      const malformed = await engine.call('POST', `/api/v1/runtime/mcp/servers/${broken.body.id}/test`, {
        token: engine.a.token,
      });
      assert.equal(malformed.body.ok, false);
      assert.equal(malformed.body.error.code, 'TOOL_SERVER_AUTH_FAILED');
      assert.ok(!JSON.stringify(malformed.body).includes('not-a-pem'));
      assert.ok(!engine.logs().includes('PRIVATE KEY'));
    });

    test('bad input: stdio, unsupported type, private URL policy, duplicate name; delete only when unused', async (t) => {
      const engine = await shared.fresh();
      const stdio = await register(engine, engine.a, { url: 'http://127.0.0.1:1/mcp', type: 'stdio' });
      assert.equal(stdio.status, 400);
      assert.match(stdio.body.error.message, /sidecar/);
      const ftp = await register(engine, engine.a, { url: 'ftp://example.com/x' });
      assert.equal(ftp.status, 400);
      const upstream = await startMcpServer(t);
      const created = await register(engine, engine.a, { url: upstream.url, name: 'dup' });
      const dup = await register(engine, engine.a, { url: upstream.url, name: 'dup' });
      assert.equal(dup.status, 409);
      const agent = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token: engine.a.token,
        body: { username: `agent-${Math.random().toString(36).slice(2, 8)}` },
      });
      const agentId = agent.body.identity.id;
      const attach = await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
        token: engine.a.token,
        body: { allowed_mcp_servers: [created.body.id] },
      });
      assert.equal(attach.status, 200, JSON.stringify(attach.body));
      const inUse = await engine.call('DELETE', `/api/v1/runtime/mcp/servers/${created.body.id}`, {
        token: engine.a.token,
      });
      assert.equal(inUse.status, 409);
      await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
        token: engine.a.token,
        body: { allowed_mcp_servers: [] },
      });
      const foreign = await engine.call('DELETE', `/api/v1/runtime/mcp/servers/${created.body.id}`, {
        token: engine.b.token,
      });
      assert.equal(foreign.status, 404);
      const deleted = await engine.call('DELETE', `/api/v1/runtime/mcp/servers/${created.body.id}`, {
        token: engine.a.token,
      });
      assert.equal(deleted.status, 204);
    });

    test('tool proposals: generated from resources, bounded, reviewed once, never enabling a tool', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startMcpServer(t);
      const created = await register(engine, engine.a, { url: upstream.url, auto_discover: true });
      const generated = await engine.call('POST', '/api/v1/runtime/mcp/tool-proposals/generate', {
        token: engine.a.token,
        body: { server_id: created.body.id, max_proposals: 5 },
      });
      assert.equal(generated.status, 200, JSON.stringify(generated.body));
      assert.equal(generated.body.generated, 2);
      const names = generated.body.data.map((p: any) => p.name).sort();
      assert.deepEqual(names, ['read_main_warehouse', 'read_sku_record']);
      const again = await engine.call('POST', '/api/v1/runtime/mcp/tool-proposals/generate', {
        token: engine.a.token,
        body: { server_id: created.body.id },
      });
      assert.equal(again.body.generated, 0);
      const proposal = generated.body.data[0];
      const review = await engine.call('POST', `/api/v1/runtime/mcp/tool-proposals/${proposal.id}/review`, {
        token: engine.a.token,
        body: { decision: 'approve' },
      });
      assert.equal(review.status, 200);
      assert.equal(review.body.status, 'approved');
      assert.equal(review.body.enabled, false);
      const twice = await engine.call('POST', `/api/v1/runtime/mcp/tool-proposals/${proposal.id}/review`, {
        token: engine.a.token,
        body: { decision: 'reject' },
      });
      assert.equal(twice.status, 409);
      const tools = await toolsOf(engine, engine.a, created.body.id);
      assert.deepEqual(Object.keys(tools), ['lookup_stock']);
      const listed = await engine.call('GET', '/api/v1/runtime/mcp/tool-proposals?status=proposed', {
        token: engine.b.token,
      });
      assert.equal(listed.body.data.length, 0);
    });
  });
}

for (const target of testDatabaseTargets()) {
  describe(`tool-server background prober (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '1' } });

    test('active servers are probed in the background: health is recorded, an outage is seen, disabled servers are left alone', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startMcpServer(t);
      const live = await register(engine, engine.a, { url: upstream.url });
      const idle = await register(engine, engine.a, { url: upstream.url, is_active: false });
      const read = async (id: string) =>
        (await engine.call('GET', `/api/v1/runtime/mcp/servers/${id}`, { token: engine.a.token })).body;
      await waitUntil(async () => (await read(live.body.id)).health.last_probe_ok === true, 15_000);
      assert.ok((await read(live.body.id)).negotiated.capabilities.tools);
      await upstream.close();
      await waitUntil(async () => (await read(live.body.id)).health.last_probe_ok === false, 15_000);
      assert.equal((await read(live.body.id)).health.last_error_code, 'TOOL_SERVER_UNREACHABLE');
      assert.equal((await read(idle.body.id)).health.last_probe_at, null);
    });
  });
}
