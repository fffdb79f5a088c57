// Governance: the snapshot, policy versions (draft → atomic activation, enforced at run time and pinned to runs),
// maker-checker allowlists, realm quotas (429 + Retry-After), evaluation datasets and side-effect-free runs,
// deployment profiles, support access that expires by itself, lawful-request metadata; roles, realm isolation,
// idempotency and the audit trail.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { createPiiScrubber } from '../src/anonymous/pii-scrubber.ts';
import { type FakeServer, reserveTool, startMcpServer } from './mcp-servers.ts';
import {
  type Realm,
  type RuntimeUnderTest,
  setupAgent,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

const G = '/api/v1/governance';
const PROMPT = { content: 'You are the shop assistant. Be brief.', variables: [] };

async function member(engine: RuntimeUnderTest, realm: Realm, role: string) {
  const created = await engine.call('POST', `/api/v1/realms/${realm.realmId}/identities/services`, {
    token: realm.token,
    body: { username: `svc-${role}-${Math.random().toString(36).slice(2, 8)}`, role },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const c = created.body.credentials;
  const token = (await engine.exchange(c.access_key, c.secret_key)).body.access_token as string;
  return { token, identityId: created.body.identity.id as string };
}

async function activePolicy(engine: RuntimeUnderTest, realm: Realm, rules: Record<string, unknown>) {
  const created = await engine.call('POST', `${G}/policies`, { token: realm.token, body: { name: 'Policy', rules } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const activated = await engine.call('POST', `${G}/policies/${created.body.id}/activate`, { token: realm.token });
  assert.equal(activated.status, 200, JSON.stringify(activated.body));
  return activated.body;
}

async function registerServer(engine: RuntimeUnderTest, realm: Realm, server: FakeServer) {
  const created = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
    token: realm.token,
    body: { name: `srv-${Math.random().toString(36).slice(2, 8)}`, url: server.url, auto_discover: true },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const tools = await engine.call('GET', `/api/v1/runtime/mcp/servers/${created.body.id}/tools`, {
    token: realm.token,
  });
  const reserve = tools.body.data.find((tool: { name: string }) => tool.name === 'reserve_stock');
  if (reserve) {
    const reviewed = await engine.call('PUT', `/api/v1/runtime/mcp/tools/${reserve.id}/review`, {
      token: realm.token,
      body: { decision: 'approve' },
    });
    assert.equal(reviewed.status, 200, JSON.stringify(reviewed.body));
  }
  return created.body.id as string;
}

const chat = (engine: RuntimeUnderTest, realm: Realm, agentId: string, content = 'Do you ship tents to Norway?') =>
  engine.call('POST', '/api/v1/runtime/ai/chat', {
    token: realm.token,
    body: { agent_id: agentId, messages: [{ role: 'user', content }] },
  });

const lookup = (engine: RuntimeUnderTest, realm: Realm) =>
  engine.call('POST', '/api/v1/runtime/mcp/tools/execute', {
    token: realm.token,
    body: { tool_name: 'lookup_stock', arguments: { sku: 'TENT-2P' } },
  });

for (const target of testDatabaseTargets()) {
  describe(`governance (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });

    async function withAgent(t: TestContext, overrides: Parameters<typeof setupAgent>[3] = {}) {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t, () => ({ content: 'Yes: tents reach Oslo in 3 to 5 days.' }));
      const agent = await setupAgent(engine, engine.a, upstream.url, { prompt: PROMPT, ...overrides });
      return { engine, upstream, ...agent };
    }

    test('policy versions: drafts numbered per realm, atomic activation, one active, rollback, audit', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const first = await engine.call('POST', `${G}/policies`, {
        token,
        headers: { 'idempotency-key': 'policy-1' },
        body: { name: 'Base', rules: { allowed_tools: ['b', 'a'] } },
      });
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.equal(first.body.version, 1);
      assert.equal(first.body.status, 'draft');
      assert.deepEqual(first.body.rules, {
        allowed_actions: null,
        allowed_tools: ['a', 'b'],
        allowed_provider_types: null,
        data_handling: 'standard',
      });
      const replay = await engine.call('POST', `${G}/policies`, {
        token,
        headers: { 'idempotency-key': 'policy-1' },
        body: { name: 'Base', rules: { allowed_tools: ['b', 'a'] } },
      });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.id, first.body.id);
      const conflict = await engine.call('POST', `${G}/policies`, {
        token,
        headers: { 'idempotency-key': 'policy-1' },
        body: { name: 'Other' },
      });
      assert.equal(conflict.status, 409);
      const second = await engine.call('POST', `${G}/policies`, { token, body: { name: 'Stricter' } });
      assert.equal(second.body.version, 2);
      // Realm B numbers its own versions.
      const other = await engine.call('POST', `${G}/policies`, { token: engine.b.token, body: { name: 'B' } });
      assert.equal(other.body.version, 1);

      const on1 = await engine.call('POST', `${G}/policies/${first.body.id}/activate`, { token });
      assert.equal(on1.status, 200);
      assert.equal(on1.body.status, 'active');
      const again = await engine.call('POST', `${G}/policies/${first.body.id}/activate`, { token });
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, 'GOVERNANCE_POLICY_STATE');
      const on2 = await engine.call('POST', `${G}/policies/${second.body.id}/activate`, { token });
      assert.equal(on2.status, 200);
      // Concurrent activations of two versions leave exactly one active.
      const racing = await Promise.all([
        engine.call('POST', `${G}/policies/${first.body.id}/activate`, { token }),
        engine.call('POST', `${G}/policies/${second.body.id}/activate`, { token }),
      ]);
      assert.ok(racing.every((r) => r.status === 200 || r.status === 409));
      const snapshot = await engine.call('GET', G, { token });
      assert.equal(snapshot.status, 200);
      assert.equal(snapshot.body.policies.filter((p: { status: string }) => p.status === 'active').length, 1);
      assert.equal(snapshot.body.active_policy.id, snapshot.body.policies.find((p: any) => p.status === 'active').id);
      assert.deepEqual(
        snapshot.body.policies.map((p: { version: number }) => p.version),
        [2, 1],
      );
      assert.ok(snapshot.body.audit.some((a: any) => a.action === 'policy.activated' && a.target_id === first.body.id));
      assert.ok(snapshot.body.audit.some((a: any) => a.action === 'policy.created' && a.details.version === 2));
      assert.equal(snapshot.body.limit, 50);

      // Another realm's version is a 404 like an unknown one; B's snapshot holds only B's.
      const foreign = await engine.call('POST', `${G}/policies/${first.body.id}/activate`, { token: engine.b.token });
      assert.equal(foreign.status, 404);
      const bSnapshot = await engine.call('GET', G, { token: engine.b.token });
      assert.deepEqual(
        bSnapshot.body.policies.map((p: { id: string }) => p.id),
        [other.body.id],
      );
      assert.equal(bSnapshot.body.audit.length, 1);
    });

    test('roles: governance needs admin, proposals developer; viewers and operators are refused', async () => {
      const engine = await shared.fresh();
      const developer = await member(engine, engine.a, 'developer');
      const viewer = await member(engine, engine.a, 'viewer');
      for (const [method, url, body] of [
        ['GET', G, undefined],
        ['POST', `${G}/policies`, { name: 'x' }],
        ['PUT', `${G}/quotas`, { window_seconds: 60, max_requests: 1 }],
        ['POST', `${G}/support-access`, {}],
      ] as const) {
        const refused = await engine.call(method, url, { token: developer.token, ...(body ? { body } : {}) });
        assert.ok([400, 403].includes(refused.status), `${method} ${url} ${refused.status}`);
        if (body === undefined || method !== 'POST' || url.endsWith('policies') || url.endsWith('quotas'))
          assert.equal(refused.body.error.code, 'RUNTIME_FORBIDDEN', `${method} ${url}`);
      }
      const request = await engine.call('POST', `${G}/allowlist`, {
        token: viewer.token,
        body: { scope: 'tool', value: 'x', reason: 'r' },
      });
      assert.equal(request.status, 403);
      const unauthenticated = await engine.call('GET', G, {});
      assert.equal(unauthenticated.status, 401);
      assert.match(String(unauthenticated.headers['www-authenticate']), /Bearer/);
    });

    test('runtime auth covers every /api/v1/governance route: documented as runtimeToken, 401 without a token', async () => {
      const engine = await shared.fresh();
      const document = (await engine.call('GET', '/openapi.json')).body;
      const operations = Object.entries(document.paths as Record<string, Record<string, any>>)
        .filter(([path]) => path.startsWith('/api/v1/governance'))
        .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
      assert.ok(operations.length >= 14, String(operations.length));
      for (const { path, method, operation } of operations) {
        assert.deepEqual(operation.security, [{ runtimeToken: [] }], `${method} ${path}`);
        const url = path.replace(/\{[^}]+\}/g, '01a21853-1a22-7b33-8c44-d55e66f77a01');
        const refused = await engine.call(method.toUpperCase(), url, { body: method === 'get' ? undefined : {} });
        assert.equal(refused.status, 401, `${method} ${path}`);
        assert.equal(refused.body.error.code, 'AUTH_TOKEN_INVALID');
      }
    });

    test('maker-checker: the maker never decides their own request; decisions are final; approval extends the policy', async (t) => {
      const engine = await shared.fresh();
      const server = await startMcpServer(t, { tools: [reserveTool] });
      await registerServer(engine, engine.a, server);
      await activePolicy(engine, engine.a, { allowed_tools: ['lookup_stock'] });
      const reserve = () =>
        engine.call('POST', '/api/v1/runtime/mcp/tools/execute', {
          token: engine.a.token,
          body: { tool_name: 'reserve_stock', arguments: { sku: 'TENT-2P', quantity: 1 } },
        });
      const denied = await reserve();
      assert.equal(denied.status, 403, JSON.stringify(denied.body));
      assert.equal(denied.body.error.code, 'GOVERNANCE_POLICY_DENIED');
      assert.equal(server.calls.length, 0);

      const developer = await member(engine, engine.a, 'developer');
      const admin = await member(engine, engine.a, 'admin');
      const made = await engine.call('POST', `${G}/allowlist`, {
        token: developer.token,
        body: { scope: 'tool', value: 'reserve_stock', reason: 'Checkout reserves stock' },
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assert.equal(made.body.status, 'pending');
      assert.equal(made.body.requested_by, developer.identityId);
      // Pending: still denied.
      assert.equal((await reserve()).status, 403);
      // A developer is no checker; the maker is never one, whatever the role.
      const byDeveloper = await engine.call('POST', `${G}/allowlist/${made.body.id}/decision`, {
        token: developer.token,
        body: { decision: 'approve' },
      });
      assert.equal(byDeveloper.status, 403);
      const ownByAdmin = await engine.call('POST', `${G}/allowlist`, {
        token: admin.token,
        body: { scope: 'provider_type', value: 'bedrock', reason: 'Managed models' },
      });
      const selfDecided = await engine.call('POST', `${G}/allowlist/${ownByAdmin.body.id}/decision`, {
        token: admin.token,
        body: { decision: 'approve' },
      });
      assert.equal(selfDecided.status, 403);
      assert.equal(selfDecided.body.error.code, 'GOVERNANCE_MAKER_CANNOT_DECIDE');
      // Another realm cannot see it.
      const foreign = await engine.call('POST', `${G}/allowlist/${made.body.id}/decision`, {
        token: engine.b.token,
        body: { decision: 'approve' },
      });
      assert.equal(foreign.status, 404);

      const approved = await engine.call('POST', `${G}/allowlist/${made.body.id}/decision`, {
        token: admin.token,
        body: { decision: 'approve', note: 'ok' },
      });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.equal(approved.body.status, 'approved');
      assert.equal(approved.body.decided_by, admin.identityId);
      const final = await engine.call('POST', `${G}/allowlist/${made.body.id}/decision`, {
        token: engine.a.token,
        body: { decision: 'reject' },
      });
      assert.equal(final.status, 409);
      assert.equal(final.body.error.code, 'GOVERNANCE_ALREADY_DECIDED');
      const allowed = await reserve();
      assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
      assert.equal(server.calls.length, 1);
      const snapshot = await engine.call('GET', G, { token: engine.a.token });
      const actions = snapshot.body.audit.map((a: { action: string }) => a.action);
      assert.ok(actions.includes('allowlist.requested') && actions.includes('allowlist.approved'));
    });

    test('policy rules at run time: provider types, actions, data handling; the version is pinned to the run', async (t) => {
      const { engine, agentId, upstream } = await withAgent(t);
      const noPolicy = await chat(engine, engine.a, agentId);
      assert.equal(noPolicy.status, 200, JSON.stringify(noPolicy.body));

      const bedrockOnly = await activePolicy(engine, engine.a, { allowed_provider_types: ['bedrock'] });
      const denied = await chat(engine, engine.a, agentId);
      assert.equal(denied.status, 403, JSON.stringify(denied.body));
      assert.equal(denied.body.error.code, 'GOVERNANCE_POLICY_DENIED');
      assert.match(denied.body.error.message, /openai_compatible.*version 1/);
      const calls = upstream.calls.length;

      // An approved provider_type request extends the policy's list.
      const developer = await member(engine, engine.a, 'developer');
      const made = await engine.call('POST', `${G}/allowlist`, {
        token: developer.token,
        body: { scope: 'provider_type', value: 'openai_compatible', reason: 'Our main provider' },
      });
      await engine.call('POST', `${G}/allowlist/${made.body.id}/decision`, {
        token: engine.a.token,
        body: { decision: 'approve' },
      });
      const extended = await chat(engine, engine.a, agentId);
      assert.equal(extended.status, 200, JSON.stringify(extended.body));
      assert.equal(upstream.calls.length, calls + 1);
      const rows = await engine.runtime.db
        .selectFrom('execution')
        .select(['policy_version_id', 'pinned'])
        .where('id', '=', extended.body.execution_id)
        .executeTakeFirstOrThrow();
      assert.equal(rows.policy_version_id, bedrockOnly.id);
      const pinned = typeof rows.pinned === 'string' ? JSON.parse(rows.pinned) : rows.pinned;
      assert.deepEqual(pinned.policy, { id: bedrockOnly.id, version: 1 });

      // Actions outside the policy become an ERROR action.
      await activePolicy(engine, engine.a, { allowed_actions: ['CLARIFY', 'ERROR'] });
      const blocked = await chat(engine, engine.a, agentId);
      assert.equal(blocked.status, 200);
      assert.equal(blocked.body.status, 'failed');
      assert.equal(blocked.body.action.type, 'ERROR');
      assert.equal(blocked.body.action.data.code, 'POLICY_ACTION_BLOCKED');
      assert.equal(blocked.body.routing.blocked_action, 'RESPOND');

      // no_retention: only zero-data-retention providers serve, and no message text is kept.
      await activePolicy(engine, engine.a, { data_handling: 'no_retention' });
      const session = await engine.call('POST', '/api/v1/runtime/sessions', {
        token: engine.a.token,
        body: { agent_id: agentId },
      });
      const turn = () =>
        engine.call('POST', '/api/v1/runtime/ai/chat', {
          token: engine.a.token,
          body: {
            agent_id: agentId,
            session_id: session.body.session_id,
            resume_token: session.body.resume_token,
            messages: [{ role: 'user', content: 'Hello there' }],
          },
        });
      const refused = await turn();
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error.code, 'RUNTIME_AGENT_NOT_READY');
      const zdr = await engine.call('POST', '/api/v1/runtime/providers', {
        token: engine.a.token,
        body: {
          type: 'openai_compatible',
          name: 'zdr',
          base_url: upstream.url,
          text_model: 'm',
          settings: { zero_data_retention: true },
        },
      });
      const config = await engine.call('GET', `/api/v1/runtime/agents/${agentId}/config`, { token: engine.a.token });
      await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
        token: engine.a.token,
        body: { system_prompt_id: config.body.system_prompt_id, ai_provider_id: zdr.body.id },
      });
      const kept = await turn();
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      const messages = await engine.call('GET', `/api/v1/runtime/sessions/${session.body.session_id}/messages`, {
        token: engine.a.token,
        headers: { 'x-resume-token': session.body.resume_token },
      });
      assert.equal(messages.body.data.length, 0);
    });

    test('quotas: requests, tool calls and tokens per window; 429 with Retry-After; other realms unaffected', async (t) => {
      const { engine, agentId } = await withAgent(t);
      const token = engine.a.token;
      const none = await engine.call('PUT', `${G}/quotas`, { token, body: { window_seconds: 60 } });
      assert.equal(none.status, 400);
      const badCost = await engine.call('PUT', `${G}/quotas`, {
        token,
        body: { window_seconds: 60, max_cost: '1.1234567' },
      });
      assert.equal(badCost.status, 400);
      const put = await engine.call('PUT', `${G}/quotas`, {
        token,
        body: { window_seconds: 3600, max_requests: 2, max_cost: '10' },
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(put.body.max_cost, '10');
      assert.equal((await chat(engine, engine.a, agentId)).status, 200);
      assert.equal((await chat(engine, engine.a, agentId)).status, 200);
      const over = await chat(engine, engine.a, agentId);
      assert.equal(over.status, 429, JSON.stringify(over.body));
      assert.equal(over.body.error.code, 'GOVERNANCE_QUOTA_EXCEEDED');
      assert.ok(over.body.error.traceId);
      const retryAfter = Number(over.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 3600, String(retryAfter));
      // Queued executions count too.
      const execution = await engine.call('POST', '/api/v1/runtime/executions', {
        token,
        body: { flow_id: '01a21852-0b11-7c22-8d33-e44f55a66b01' },
      });
      assert.ok([404, 429].includes(execution.status));
      // Realm B has no quota.
      const b = await startUpstream(t);
      const bAgent = await setupAgent(engine, engine.b, b.url, { prompt: PROMPT });
      assert.equal((await chat(engine, engine.b, bAgent.agentId)).status, 200);
      const snapshot = await engine.call('GET', G, { token });
      assert.equal(snapshot.body.quota.max_requests, 2);
      assert.ok(snapshot.body.quota.usage.requests >= 3);
      assert.ok(snapshot.body.audit.some((a: any) => a.action === 'quota.replaced'));

      // Tokens: a run starts while any is left, then the window is used up.
      await engine.call('PUT', `${G}/quotas`, { token, body: { window_seconds: 7200, max_tokens: 5 } });
      assert.equal((await chat(engine, engine.a, agentId)).status, 200);
      const tokens = await chat(engine, engine.a, agentId);
      assert.equal(tokens.status, 429);
      assert.match(tokens.body.error.message, /tokens/);
    });

    test('quotas: tool calls are counted at every tool call and refused before the call is made', async (t) => {
      const engine = await shared.fresh();
      const server = await startMcpServer(t);
      await registerServer(engine, engine.a, server);
      await engine.call('PUT', `${G}/quotas`, {
        token: engine.a.token,
        body: { window_seconds: 600, max_tool_calls: 1 },
      });
      const first = await lookup(engine, engine.a);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const second = await lookup(engine, engine.a);
      assert.equal(second.status, 429);
      assert.ok(Number(second.headers['retry-after']) >= 1);
      assert.equal(server.calls.length, 1);
    });

    test('proxy and aggregate tool calls follow the policy and count against the tool-call quota', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const servers = [await startMcpServer(t, { label: 'A' }), await startMcpServer(t, { label: 'B' })];
      const ids: string[] = [];
      for (const server of servers) ids.push(await registerServer(engine, engine.a, server));
      const proxy = () =>
        engine.call('POST', '/api/v1/runtime/mcp/proxy', {
          token,
          body: { server_id: ids[0], tool_name: 'lookup_stock', arguments: { sku: 'TENT-2P' } },
        });
      const aggregate = () =>
        engine.call('POST', '/api/v1/runtime/mcp/tools/aggregate', {
          token,
          body: { tool_name: 'lookup_stock', arguments: { sku: 'TENT-2P' } },
        });
      await activePolicy(engine, engine.a, { allowed_tools: ['reserve_stock'] });
      assert.equal((await proxy()).status, 403);
      assert.equal((await aggregate()).status, 403);
      assert.equal(servers[0]!.calls.length + servers[1]!.calls.length, 0);
      await activePolicy(engine, engine.a, {});
      await engine.call('PUT', `${G}/quotas`, { token, body: { window_seconds: 600, max_tool_calls: 3 } });
      const aggregated = await aggregate();
      assert.equal(aggregated.status, 200, JSON.stringify(aggregated.body));
      assert.equal(aggregated.body.results.length, 2);
      assert.equal((await proxy()).status, 200);
      const over = await proxy();
      assert.equal(over.status, 429);
      assert.equal(servers[0]!.calls.length + servers[1]!.calls.length, 3);
    });

    test('evaluation datasets refuse raw personal data; approved_redacted needs an admin and an approval', async () => {
      const engine = await shared.fresh();
      const developer = await member(engine, engine.a, 'developer');
      const cases = [{ input: 'Do you ship tents to Norway?', expected_action: 'RESPOND' }];
      const pii = await engine.call('POST', `${G}/evaluation-datasets`, {
        token: developer.token,
        body: {
          name: 'Leaky',
          kind: 'synthetic',
          cases: [...cases, { input: 'Email me at jane.doe@example.com', must_not_contain: ['x'] }],
        },
      });
      assert.equal(pii.status, 400, JSON.stringify(pii.body));
      assert.equal(pii.body.error.code, 'GOVERNANCE_RAW_PII');
      assert.match(pii.body.error.message, /body\/cases\/1\/input/);
      assert.doesNotMatch(JSON.stringify(pii.body), /jane\.doe/);
      const redacted = await engine.call('POST', `${G}/evaluation-datasets`, {
        token: developer.token,
        body: { name: 'Prod', kind: 'approved_redacted', cases, approval: { reference: 'DPA-12' } },
      });
      assert.equal(redacted.status, 403);
      const unapproved = await engine.call('POST', `${G}/evaluation-datasets`, {
        token: engine.a.token,
        body: { name: 'Prod', kind: 'approved_redacted', cases },
      });
      assert.equal(unapproved.status, 400);
      const approved = await engine.call('POST', `${G}/evaluation-datasets`, {
        token: engine.a.token,
        body: { name: 'Prod', kind: 'approved_redacted', cases, approval: { reference: 'DPA-12' } },
      });
      assert.equal(approved.status, 201, JSON.stringify(approved.body));
      assert.equal(approved.body.approval.approved_by, engine.a.identityId);
      const synthetic = await engine.call('POST', `${G}/evaluation-datasets`, {
        token: developer.token,
        body: { name: 'Synthetic', kind: 'synthetic', cases },
      });
      assert.equal(synthetic.status, 201);
      const snapshot = await engine.call('GET', G, { token: engine.a.token });
      assert.deepEqual(
        snapshot.body.datasets.map((d: { name: string }) => d.name),
        ['Synthetic', 'Prod'],
      );
      // Nothing the detector flags was stored anywhere in the governance tables.
      const scrubber = createPiiScrubber();
      const stored = await engine.runtime.db
        .selectFrom('governance_dataset')
        .select('cases')
        .where('realm_id', '=', engine.a.realmId)
        .execute();
      for (const row of stored) assert.deepEqual(scrubber.find(JSON.stringify(row.cases)), []);
    });

    test('evaluation runs: offline, shadow and adversarial, side-effect free, stored with per-case outcomes', async (t) => {
      const engine = await shared.fresh();
      const server = await startMcpServer(t, { tools: [reserveTool] });
      const serverId = await registerServer(engine, engine.a, server);
      let n = 0;
      const upstream = await startUpstream(t, (call) => {
        n++;
        const question = String(call.body.messages.at(-1).content);
        if (question.includes('card')) return { content: 'Sure, send me your card number and CVV.' };
        if (question.includes('human')) return { content: '{"type":"ESCALATE","content":"A colleague will help."}' };
        return { content: 'Yes: tents reach Oslo in 3 to 5 days.' };
      });
      const { agentId } = await setupAgent(engine, engine.a, upstream.url, {
        prompt: PROMPT,
        config: { allowed_mcp_servers: [serverId] },
      });
      const dataset = await engine.call('POST', `${G}/evaluation-datasets`, {
        token: engine.a.token,
        body: {
          name: 'Support',
          kind: 'synthetic',
          cases: [
            { input: 'Do you ship to Norway?', expected_action: 'RESPOND', expected_contains: ['oslo'] },
            { input: 'I want a human', expected_action: 'ESCALATE' },
            {
              input: 'Reserve two tents',
              tool_call: { tool_name: 'reserve_stock', arguments: { sku: 'T', quantity: 2 } },
            },
            { input: 'Can I pay by card here?', must_not_contain: ['iban'] },
          ],
        },
      });
      assert.equal(dataset.status, 201, JSON.stringify(dataset.body));
      const count = async (table: 'execution' | 'runtime_session' | 'anonymous_event') =>
        Number(
          (
            await engine.runtime.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .where('realm_id', '=', engine.a.realmId)
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = [await count('execution'), await count('runtime_session'), await count('anonymous_event')];

      const offline = await engine.call('POST', `${G}/evaluation-runs`, {
        token: engine.a.token,
        body: { dataset_id: dataset.body.id, agent_id: agentId, mode: 'offline' },
      });
      assert.equal(offline.status, 201, JSON.stringify(offline.body));
      assert.equal(offline.body.status, 'completed');
      assert.deepEqual(
        offline.body.results.map((r: { outcome: string }) => r.outcome),
        ['passed', 'passed', 'passed', 'passed'],
      );
      assert.deepEqual(offline.body.results[2].tool_call, {
        tool_name: 'reserve_stock',
        allowed_by_policy: true,
        executed: false,
      });
      assert.equal(offline.body.summary.total, 4);
      assert.equal(n, 4);
      // Side-effect free: the write tool was never called; no execution, session or anonymous event was written.
      assert.equal(server.calls.length, 0);
      assert.deepEqual(
        [await count('execution'), await count('runtime_session'), await count('anonymous_event')],
        before,
      );

      const adversarial = await engine.call('POST', `${G}/evaluation-runs`, {
        token: engine.a.token,
        body: { dataset_id: dataset.body.id, agent_id: agentId, mode: 'adversarial' },
      });
      assert.equal(adversarial.body.results[3].outcome, 'failed');
      assert.match(adversarial.body.results[3].failures.join(' '), /sensitive/);

      // Shadow: a candidate that forbids ESCALATE and reserve_stock differs from the (absent) active policy.
      const candidate = await engine.call('POST', `${G}/policies`, {
        token: engine.a.token,
        body: { name: 'Candidate', rules: { allowed_actions: ['RESPOND'], allowed_tools: ['lookup_stock'] } },
      });
      const shadow = await engine.call('POST', `${G}/evaluation-runs`, {
        token: engine.a.token,
        body: { dataset_id: dataset.body.id, agent_id: agentId, mode: 'shadow', policy_id: candidate.body.id },
      });
      assert.equal(shadow.status, 201, JSON.stringify(shadow.body));
      assert.equal(shadow.body.policy_id, candidate.body.id);
      assert.equal(shadow.body.results[1].outcome, 'failed');
      assert.equal(shadow.body.results[1].shadow.differs, true);
      assert.equal(shadow.body.results[0].shadow.differs, false);
      assert.equal(shadow.body.results[2].tool_call.allowed_by_policy, false);
      assert.equal(shadow.body.summary.differences, 1);
      assert.equal(server.calls.length, 0);
      const noCandidate = await engine.call('POST', `${G}/evaluation-runs`, {
        token: engine.a.token,
        body: { dataset_id: dataset.body.id, agent_id: agentId, mode: 'shadow' },
      });
      assert.equal(noCandidate.status, 400);

      const read = await engine.call('GET', `${G}/evaluation-runs/${shadow.body.id}`, { token: engine.a.token });
      assert.equal(read.status, 200);
      assert.deepEqual(read.body, shadow.body);
      const foreign = await engine.call('GET', `${G}/evaluation-runs/${shadow.body.id}`, { token: engine.b.token });
      assert.equal(foreign.status, 404);
      const foreignDataset = await engine.call('POST', `${G}/evaluation-runs`, {
        token: engine.b.token,
        body: { dataset_id: dataset.body.id, agent_id: agentId, mode: 'offline' },
      });
      assert.equal(foreignDataset.status, 404);
    });

    test('an evaluation run is bounded in time: cases not started within 120 s are errors, the run is still stored', async (t) => {
      const engine = await shared.fresh();
      let first = true;
      const upstream = await startUpstream(t, () => {
        if (first) engine.advance(121_000);
        first = false;
        return { content: 'Yes.' };
      });
      const { agentId } = await setupAgent(engine, engine.a, upstream.url, { prompt: PROMPT });
      const dataset = await engine.call('POST', `${G}/evaluation-datasets`, {
        token: engine.a.token,
        body: {
          name: 'Six',
          kind: 'synthetic',
          cases: Array.from({ length: 6 }, (_, i) => ({ input: `Question number ${i + 1}` })),
        },
      });
      const run = await engine.call('POST', `${G}/evaluation-runs`, {
        token: engine.a.token,
        body: { dataset_id: dataset.body.id, agent_id: agentId, mode: 'offline' },
      });
      assert.equal(run.status, 201, JSON.stringify(run.body));
      assert.deepEqual(
        run.body.results.slice(4).map((r: any) => r.error?.code),
        ['EVALUATION_DEADLINE', 'EVALUATION_DEADLINE'],
      );
      assert.equal(run.body.summary.errors >= 2, true);
      assert.ok(upstream.calls.length <= 4);
    });

    test('deployment profiles, support access (expires by itself, listable) and lawful requests are audited metadata', async () => {
      const engine = await shared.fresh();
      let token = engine.a.token;
      const profile = await engine.call('POST', `${G}/deployment-profiles`, {
        token,
        body: {
          name: 'EU storefront',
          environment: 'production',
          owner: 'Commerce platform team',
          region: 'eu-west-1',
          data_handling: 'no_retention',
          retention_days: 30,
        },
      });
      assert.equal(profile.status, 201, JSON.stringify(profile.body));
      assert.deepEqual(profile.body.controls, []);
      const grant = await engine.call('POST', `${G}/support-access`, {
        token,
        headers: { 'idempotency-key': 'ticket-1' },
        body: {
          support_engineer: 'Support engineer 17',
          reason: 'Ticket 88213: failing turns',
          scope: ['configuration', 'logs'],
          customer_approval: { approved_by: 'Realm owner', reference: 'Ticket 88213' },
          duration_minutes: 30,
        },
      });
      assert.equal(grant.status, 201, JSON.stringify(grant.body));
      assert.equal(grant.body.status, 'active');
      assert.equal(Date.parse(grant.body.expires_at) - Date.parse(grant.body.starts_at), 30 * 60_000);
      const longer = await engine.call('POST', `${G}/support-access`, {
        token,
        body: {
          support_engineer: 'Support engineer 18',
          reason: 'Ticket 88214',
          scope: ['executions'],
          customer_approval: { approved_by: 'Realm owner' },
          duration_minutes: 600,
        },
      });
      const active = await engine.call('GET', `${G}/support-access?status=active`, { token });
      assert.equal(active.status, 200, JSON.stringify(active.body));
      assert.deepEqual(
        active.body.data.map((g: { id: string }) => g.id),
        [longer.body.id, grant.body.id],
      );
      engine.advance(31 * 60_000);
      // Tokens live 15 minutes: exchange the key pair again on the moved clock.
      token = (await engine.exchange(engine.a.accessKey, engine.a.secretKey)).body.access_token;
      const bToken = (await engine.exchange(engine.b.accessKey, engine.b.secretKey)).body.access_token;
      const expired = await engine.call('GET', `${G}/support-access?status=expired`, { token });
      assert.deepEqual(
        expired.body.data.map((g: { id: string; status: string }) => [g.id, g.status]),
        [[grant.body.id, 'expired']],
      );
      const page = await engine.call('GET', `${G}/support-access?limit=1`, { token });
      assert.equal(page.body.data.length, 1);
      const next = await engine.call('GET', `${G}/support-access?limit=1&cursor=${page.body.next_cursor}`, { token });
      assert.equal(next.body.data[0].id, grant.body.id);
      assert.equal((await engine.call('GET', `${G}/support-access`, { token: bToken })).body.data.length, 0);

      const lawful = await engine.call('POST', `${G}/lawful-requests`, {
        token,
        body: {
          authority: 'District court',
          jurisdiction: 'NL',
          request_type: 'preservation',
          reference: 'Case 2026/0142',
          received_at: '2026-11-20T09:30:00Z',
          status: 'received',
        },
      });
      assert.equal(lawful.status, 201, JSON.stringify(lawful.body));
      assert.equal(lawful.body.received_at, '2026-11-20T09:30:00.000Z');
      const withPii = await engine.call('POST', `${G}/lawful-requests`, {
        token,
        body: {
          authority: 'District court',
          jurisdiction: 'NL',
          request_type: 'subpoena',
          reference: 'Records of jane.doe@example.com',
          received_at: '2026-11-20T09:30:00Z',
          status: 'received',
        },
      });
      assert.equal(withPii.status, 400);
      assert.equal(withPii.body.error.code, 'GOVERNANCE_RAW_PII');

      const snapshot = await engine.call('GET', G, { token });
      assert.equal(snapshot.body.deployments[0].id, profile.body.id);
      assert.equal(snapshot.body.support_access.length, 2);
      assert.equal(snapshot.body.lawful_requests[0].reference, 'Case 2026/0142');
      const actions = snapshot.body.audit.map((a: { action: string }) => a.action);
      for (const action of ['deployment_profile.created', 'support_access.created', 'lawful_request.created'])
        assert.ok(actions.includes(action), action);
      const bad = await engine.call('POST', `${G}/deployment-profiles`, {
        token,
        body: { name: 'x', environment: 'moon', owner: 'y', region: 'z', data_handling: 'standard', retention_days: 1 },
      });
      assert.equal(bad.status, 400);
      const mismatch = await engine.call('POST', `${G}/policies`, {
        token,
        body: { name: 'x', realm_id: engine.b.realmId },
      });
      assert.equal(mismatch.status, 403);
      assert.equal(mismatch.body.error.code, 'RUNTIME_REALM_MISMATCH');
    });
  });
}
