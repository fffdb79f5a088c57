// Sampling and elicitation requests of MCP servers during tool calls: realm policy (off by default), user presence
// (a session), budgets per call and per window, audit records — against real SDK servers on 127.0.0.1 that issue
// both requests, over SSE and over streamable HTTP (with sessions, so the server can ask during the call).
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { type FakeTool, startMcpServer } from './mcp-servers.ts';
import {
  type Realm,
  type RuntimeUnderTest,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

/** Asks the client for a completion `times` times; answers the texts (or the refusal as `{error, code}`). */
const summarizeTool: FakeTool = {
  name: 'summarize_notes',
  description: 'Summarize notes with the caller model',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', maxLength: 200 }, times: { type: 'integer', minimum: 1, maximum: 3 } },
    required: ['text'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
  interact: async (ctx, args) => {
    const texts: string[] = [];
    for (let i = 0; i < ((args.times as number | undefined) ?? 1); i++) {
      const answer = await ctx.mcpReq.requestSampling({
        messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${args.text}` } }],
        systemPrompt: 'Be brief.',
        maxTokens: 100,
      });
      texts.push(answer.content.text);
    }
    return { summaries: texts };
  },
};

/** Asks the user which warehouse to use (form elicitation). */
const warehouseTool: FakeTool = {
  name: 'pick_warehouse',
  description: 'Pick the warehouse to ship from',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: true },
  interact: async (ctx) => {
    const answer = await ctx.mcpReq.elicitInput({
      message: 'Which warehouse?',
      requestedSchema: {
        type: 'object',
        properties: {
          preferred_warehouse: { type: 'string', enum: ['main', 'north'] },
          note: { type: 'string', maxLength: 20 },
        },
        required: ['preferred_warehouse'],
      },
    });
    return { action: answer.action, content: answer.content ?? null };
  },
};

async function setup(engine: RuntimeUnderTest, t: TestContext, transport: 'sse' | 'http') {
  const modelState = { fail: false };
  const model = await startUpstream(t, () => (modelState.fail ? { status: 500 } : undefined));
  const upstream = await startMcpServer(t, {
    transport,
    stateful: transport === 'http',
    label: transport,
    tools: [summarizeTool, warehouseTool],
  });
  const realm = engine.a;
  const provider = await engine.call('POST', '/api/v1/runtime/providers', {
    token: realm.token,
    body: {
      type: 'openai_compatible',
      name: `sampling-${Math.random().toString(36).slice(2, 8)}`,
      base_url: model.url,
      api_key: 'sk-test-upstream-key-1234567890',
      text_model: 'test-model',
      input_price_per_million: 1,
      output_price_per_million: 2,
    },
  });
  assert.equal(provider.status, 201, JSON.stringify(provider.body));
  const server = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
    token: realm.token,
    body: {
      name: `interact-${transport}-${Math.random().toString(36).slice(2, 6)}`,
      url: upstream.url,
      type: transport,
      auto_discover: true,
    },
  });
  assert.equal(server.status, 201, JSON.stringify(server.body));
  assert.equal(server.body.discovery.tools.added, 2, JSON.stringify(server.body.discovery));
  const agent = await engine.call('POST', `/api/v1/realms/${realm.realmId}/agents`, {
    token: realm.token,
    body: { username: `agent-${Math.random().toString(36).slice(2, 8)}` },
  });
  const agentId = agent.body.identity.id as string;
  await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
    token: realm.token,
    body: { allowed_mcp_servers: [server.body.id] },
  });
  const session = await engine.call('POST', '/api/v1/runtime/sessions', {
    token: realm.token,
    body: { agent_id: agentId },
  });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return {
    model,
    modelState,
    upstream,
    realm,
    providerId: provider.body.id as string,
    serverId: server.body.id as string,
    sessionId: session.body.session_id as string,
    resumeToken: session.body.resume_token as string,
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

async function call(engine: RuntimeUnderTest, s: Setup, tool: string, args: Record<string, unknown>, inSession = true) {
  const answer = await engine.call('POST', '/api/v1/runtime/mcp/tools/execute', {
    token: s.realm.token,
    body: {
      tool_name: tool,
      arguments: args,
      ...(inSession ? { session_id: s.sessionId, resume_token: s.resumeToken } : {}),
    },
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.result.structured_content as Record<string, any>;
}

const policy = (engine: RuntimeUnderTest, realm: Realm, body: Record<string, unknown>, token = realm.token) =>
  engine.call('PUT', '/api/v1/runtime/mcp/interaction-policy', { token, body });

async function audit(engine: RuntimeUnderTest, realm: Realm, query = '') {
  const listed = await engine.call('GET', `/api/v1/runtime/mcp/interactions?limit=100${query}`, {
    token: realm.token,
  });
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  return listed.body.data as Record<string, any>[];
}

for (const target of testDatabaseTargets()) {
  describe(`sampling and elicitation during tool calls (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });

    for (const transport of ['sse', 'http'] as const) {
      test(`sampling over ${transport}: off by default, then served through the realm's provider within its budgets`, async (t) => {
        const engine = await shared.fresh();
        const s = await setup(engine, t, transport);

        const initial = await engine.call('GET', '/api/v1/runtime/mcp/interaction-policy', { token: s.realm.token });
        assert.equal(initial.status, 200);
        assert.equal(initial.body.sampling.enabled, false);
        assert.equal(initial.body.elicitation.mode, 'off');
        assert.equal(initial.body.updated_at, null);

        // Off by default: the server receives the MCP error (-1) and the refusal is audited.
        const off = await call(engine, s, 'summarize_notes', { text: 'order notes' });
        assert.equal(off.code, -1, JSON.stringify(off));
        assert.match(off.error, /not enabled by the realm's policy/);
        assert.equal(s.model.calls.length, 0);
        let records = await audit(engine, s.realm);
        assert.equal(records.length, 1);
        assert.equal(records[0]!.outcome, 'refused');
        assert.equal(records[0]!.reason, 'POLICY_OFF');
        assert.equal(records[0]!.mcp_server_id, s.serverId);
        assert.equal(records[0]!.session_id, s.sessionId);

        const set = await policy(engine, s.realm, {
          sampling: { enabled: true, provider_id: s.providerId, max_requests_per_call: 2, max_tokens_per_request: 64 },
        });
        assert.equal(set.status, 200, JSON.stringify(set.body));
        assert.equal(set.body.sampling.enabled, true);
        assert.equal(set.body.sampling.max_tokens_per_call, 4096);

        const served = await call(engine, s, 'summarize_notes', { text: 'order notes' });
        assert.deepEqual(served.summaries, ['echo: Summarize: order notes'], JSON.stringify(served));
        assert.equal(s.model.calls.length, 1);
        const sent = s.model.calls[0]!.body;
        assert.equal(sent.max_tokens, 64, 'the server asked 100; the policy caps it');
        assert.deepEqual(
          sent.messages.map((m: any) => m.role),
          ['system', 'user'],
        );
        records = await audit(engine, s.realm, '&kind=sampling');
        const servedRecord = records.find((r) => r.outcome === 'served')!;
        assert.equal(servedRecord.provider_id, s.providerId);
        assert.equal(servedRecord.tool_name, 'summarize_notes');
        assert.equal(servedRecord.input_tokens, 12);
        assert.equal(servedRecord.output_tokens, 5);
        assert.ok(!JSON.stringify(records).includes('order notes'), 'no prompt text in the audit');

        // Per call: the third request of one call is refused, the first two are served.
        const thrice = await call(engine, s, 'summarize_notes', { text: 'x', times: 3 });
        assert.equal(thrice.code, -1);
        assert.match(thrice.error, /at most 2 sampling requests per tool call/);
        assert.equal(s.model.calls.length, 3);

        // User presence: a developer's direct call without a session is refused.
        const direct = await call(engine, s, 'summarize_notes', { text: 'x' }, false);
        assert.equal(direct.code, -1);
        assert.match(direct.error, /only during tool calls made in a session/);

        // Per window: 3 served so far; a window of 3 requests refuses the next one (and releases the reservation).
        await policy(engine, s.realm, { sampling: { max_requests_per_window: 3 } });
        const over = await call(engine, s, 'summarize_notes', { text: 'x' });
        assert.equal(over.code, -1);
        assert.match(over.error, /budget for the current 3600s window is used up/);
        assert.equal(s.model.calls.length, 3);
        records = await audit(engine, s.realm, `&kind=sampling&session_id=${s.sessionId}`);
        assert.deepEqual(
          records.map((r) => r.reason ?? r.outcome),
          ['WINDOW_BUDGET_EXHAUSTED', 'CALL_BUDGET_EXHAUSTED', 'served', 'served', 'served', 'POLICY_OFF'],
        );
        // The token window counts what was used.
        await policy(engine, s.realm, { sampling: { max_requests_per_window: 100, max_tokens_per_window: 60 } });
        const tokens = await call(engine, s, 'summarize_notes', { text: 'x' });
        assert.match(tokens.error, /window is used up/, JSON.stringify(tokens));

        // An inactive provider: refused.
        await policy(engine, s.realm, { sampling: { max_tokens_per_window: 100_000 } });
        const toggled = await engine.call('PATCH', `/api/v1/runtime/providers/${s.providerId}/toggle`, {
          token: s.realm.token,
          body: { is_active: false },
        });
        assert.equal(toggled.status, 200, JSON.stringify(toggled.body));
        const inactive = await call(engine, s, 'summarize_notes', { text: 'x' });
        assert.match(inactive.error ?? '', /provider is missing, inactive/, JSON.stringify(inactive));
        // The model failing: the server gets a fixed message (no upstream detail), the record says failed.
        await engine.call('PATCH', `/api/v1/runtime/providers/${s.providerId}/toggle`, {
          token: s.realm.token,
          body: { is_active: true },
        });
        s.modelState.fail = true;
        const failed = await call(engine, s, 'summarize_notes', { text: 'x' });
        assert.equal(failed.error, 'the model call failed', JSON.stringify(failed));
        const [last] = await audit(engine, s.realm, '&kind=sampling');
        assert.equal(`${last!.outcome}:${last!.reason}`, 'failed:MODEL_CALL_FAILED');

        // Another realm sees none of it and cannot name this realm's provider.
        assert.equal((await audit(engine, engine.b)).length, 0);
        const foreign = await policy(engine, engine.b, { sampling: { enabled: true, provider_id: s.providerId } });
        assert.equal(foreign.status, 404);
      });

      test(`elicitation over ${transport}: declined or answered from the session's tool context, per policy`, async (t) => {
        const engine = await shared.fresh();
        const s = await setup(engine, t, transport);
        const off = await call(engine, s, 'pick_warehouse', {});
        assert.equal(off.code, -1, JSON.stringify(off));

        await policy(engine, s.realm, { elicitation: { mode: 'decline' } });
        assert.deepEqual(await call(engine, s, 'pick_warehouse', {}), { action: 'decline', content: null });

        await policy(engine, s.realm, { elicitation: { mode: 'session_context' } });
        // Nothing in the context yet: declined.
        assert.equal((await call(engine, s, 'pick_warehouse', {})).action, 'decline');
        // A value that does not fit the form (not in the enum): declined.
        const ctxUrl = `/api/v1/runtime/mcp/sessions/${s.sessionId}/context`;
        await engine.call('PUT', ctxUrl, {
          token: s.realm.token,
          body: { context: { preferred_warehouse: 'south' }, resume_token: s.resumeToken },
        });
        assert.equal((await call(engine, s, 'pick_warehouse', {})).action, 'decline');
        const put = await engine.call('PUT', ctxUrl, {
          token: s.realm.token,
          body: {
            context: { preferred_warehouse: 'north', note: 'x'.repeat(30), unrelated: 1 },
            resume_token: s.resumeToken,
          },
        });
        assert.equal(put.status, 200, JSON.stringify(put.body));
        // Accepted with the fields that fit; an optional field that does not fit is left out.
        assert.deepEqual(await call(engine, s, 'pick_warehouse', {}), {
          action: 'accept',
          content: { preferred_warehouse: 'north' },
        });
        // No session: refused (user presence).
        const direct = await call(engine, s, 'pick_warehouse', {}, false);
        assert.match(direct.error, /only during tool calls made in a session/);

        const records = await audit(engine, s.realm, '&kind=elicitation');
        assert.deepEqual(
          records.map((r) => `${r.outcome}:${r.reason}`),
          [
            'refused:USER_NOT_PRESENT',
            'accepted:fields:1',
            'declined:NOT_IN_CONTEXT',
            'declined:NOT_IN_CONTEXT',
            'declined:POLICY_DECLINE',
            'refused:POLICY_OFF',
          ],
        );
        assert.ok(!JSON.stringify(records).includes('north'), 'no elicited value in the audit');
      });
    }

    test('policy: owner/admin only, bounded, validated; the audit is paginated', async (t) => {
      const engine = await shared.fresh();
      const s = await setup(engine, t, 'sse');
      const developer = await engine.call('POST', `/api/v1/realms/${s.realm.realmId}/identities/services`, {
        token: s.realm.token,
        body: { username: `dev-${Math.random().toString(36).slice(2, 8)}`, role: 'developer' },
      });
      assert.equal(developer.status, 201, JSON.stringify(developer.body));
      const devToken = (
        await engine.exchange(developer.body.credentials.access_key, developer.body.credentials.secret_key)
      ).body.access_token;
      const denied = await policy(engine, s.realm, { sampling: { enabled: true } }, devToken);
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'RUNTIME_FORBIDDEN');
      const readable = await engine.call('GET', '/api/v1/runtime/mcp/interaction-policy', { token: devToken });
      assert.equal(readable.status, 200);

      for (const body of [
        { sampling: { max_requests_per_call: 0 } },
        { sampling: { max_tokens_per_request: 1_000_000 } },
        { elicitation: { mode: 'forward' } },
        { window_seconds: 5 },
        { sampling: { max_tokens_per_request: 5000, max_tokens_per_call: 4000 } },
      ]) {
        const bad = await policy(engine, s.realm, body);
        assert.equal(bad.status, 400, JSON.stringify({ body, answer: bad.body }));
      }
      const unknownProvider = await policy(engine, s.realm, {
        sampling: { provider_id: '00000000-0000-4000-8000-000000000000' },
      });
      assert.equal(unknownProvider.status, 404);
      const after = await engine.call('GET', '/api/v1/runtime/mcp/interaction-policy', { token: s.realm.token });
      assert.equal(after.body.sampling.enabled, false, 'refused writes changed nothing');

      for (let i = 0; i < 3; i++) await call(engine, s, 'pick_warehouse', {});
      const first = await engine.call('GET', '/api/v1/runtime/mcp/interactions?limit=2', { token: s.realm.token });
      assert.equal(first.body.data.length, 2);
      assert.ok(first.body.next_cursor);
      const second = await engine.call(
        'GET',
        `/api/v1/runtime/mcp/interactions?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
        { token: s.realm.token },
      );
      assert.equal(second.body.data.length, 1);
      assert.equal(second.body.next_cursor, null);
      const edited = await engine.call('GET', '/api/v1/runtime/mcp/interactions?cursor=bogus', {
        token: s.realm.token,
      });
      assert.equal(edited.status, 400);
    });
  });
}
