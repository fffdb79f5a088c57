import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EXAMPLE_CONFIG } from '../src/flows/flow-api-schemas.ts';
import { FLOWS, viewerToken } from './flow-routing-helper.ts';
import { setupAgent, sharedRuntime, startUpstream, testDatabaseTargets } from './runtime-helper.ts';

const DRAFT = `${FLOWS}/draft`;
const FIXTURE = {
  name: 'finds mugs',
  input: { query: 'mug' },
  mocks: { tools: { catalog_search: { products: [{ catalogId: '1234567890', name: 'Mug' }] } } },
  expect: { state: 'succeeded', action_type: 'RENDER_PRODUCTS', tool_calls: ['catalog_search'] },
};
const GOOD = { config: EXAMPLE_CONFIG, fixtures: [FIXTURE] };

for (const target of testDatabaseTargets()) {
  describe(`flows: POST /flows/draft generates a pending_approval draft (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('a compiling config with catalog tool bindings and green fixtures; nothing stored or published', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const upstream = await startUpstream(t, () => ({
        content: `Here you go:\n\`\`\`json\n${JSON.stringify(GOOD)}\n\`\`\``,
      }));
      const { agentId, providerId } = await setupAgent(engine, engine.a, upstream.url);
      const body = {
        goal: 'Help shoppers find a product by name',
        channel: 'web',
        name: 'Product finder',
        agent_id: agentId,
      };
      const draft = await engine.call('POST', DRAFT, { token, body });
      assert.equal(draft.status, 200, JSON.stringify(draft.body));
      assert.equal(draft.body.status, 'pending_approval');
      assert.deepEqual(draft.body.config.nodes, EXAMPLE_CONFIG.nodes);
      assert.match(draft.body.config_hash, /^[0-9a-f]{64}$/);
      assert.deepEqual(draft.body.tool_bindings, [
        { node_id: 'search', tool: 'catalog_search', effect: 'read', source: 'catalog' },
      ]);
      assert.deepEqual(draft.body.fixture_results, [{ name: 'finds mugs', passed: true }]);
      assert.deepEqual(draft.body.generated_by, {
        provider_id: providerId,
        provider_name: draft.body.generated_by.provider_name,
        model: 'test-model',
      });
      assert.equal(upstream.calls.length, 1);
      const prompt = upstream.calls[0]!.body.messages.map((m: { content: string }) => m.content).join('\n');
      assert.match(prompt, /catalog_search/);
      assert.match(prompt, /Help shoppers find a product by name/);
      const flows = await engine.call('GET', FLOWS, { token });
      assert.equal(flows.body.data.length, 0, 'generation stores nothing');

      // The approval path: a developer creates the flow from the draft; it starts as an unpublished draft.
      const created = await engine.call('POST', FLOWS, { token, body: { name: body.name, config: draft.body.config } });
      assert.equal(created.status, 201);
      assert.equal(created.body.status, 'draft');
      assert.equal(created.body.is_active, false);
      assert.equal(created.body.config_hash, draft.body.config_hash);
    });

    test('a draft that does not compile, binds unknown tools, fails its fixtures or is no JSON is a 422; nothing kept', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const answers = [
        JSON.stringify({
          config: { ...EXAMPLE_CONFIG, nodes: [{ id: 'a', type: 'output', action: 'ESCALATE' }] },
          fixtures: [FIXTURE],
        }),
        JSON.stringify({
          config: {
            ...EXAMPLE_CONFIG,
            nodes: [{ ...EXAMPLE_CONFIG.nodes[0], tool: 'wire_money' }, EXAMPLE_CONFIG.nodes[1]],
          },
          fixtures: [FIXTURE],
        }),
        JSON.stringify({
          config: EXAMPLE_CONFIG,
          fixtures: [{ ...FIXTURE, expect: { ...FIXTURE.expect, action_type: 'RESPOND' } }],
        }),
        JSON.stringify({ config: EXAMPLE_CONFIG, fixtures: [] }),
        JSON.stringify({ config: EXAMPLE_CONFIG, fixtures: [{ name: 7 }] }),
        'I cannot help with that.',
        '{"config": {"nodes": [}',
      ];
      const patterns = [
        /FLOW_ACTION_NOT_ALLOWED/,
        /unknown tools \(search: wire_money\)/,
        /does not pass/,
        /no fixtures/,
        /not a valid fixture/,
        /no JSON object/,
        /not valid JSON/,
      ];
      const upstream = await startUpstream(t, (_call, n) => ({ content: answers[n - 1] }));
      await setupAgent(engine, engine.a, upstream.url, { provider: { is_default: true } });
      for (const [index, pattern] of patterns.entries()) {
        const reply = await engine.call('POST', DRAFT, { token, body: { goal: 'anything', name: `Draft ${index}` } });
        assert.equal(reply.status, 422, `${index}: ${JSON.stringify(reply.body)}`);
        assert.equal(reply.body.error.code, 'FLOW_DRAFT_INVALID');
        assert.match(reply.body.error.message, pattern, `${index}`);
      }
      const first = answers.length;
      assert.equal(upstream.calls.length, first);
      assert.equal((await engine.call('GET', FLOWS, { token })).body.data.length, 0);
    });

    test('model failures are a 502 without upstream details; no provider is a 409; isolation and permissions', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const none = await engine.call('POST', DRAFT, { token, body: { goal: 'x', name: 'y' } });
      assert.equal(none.status, 409);
      assert.equal(none.body.error.code, 'FLOW_DRAFT_NO_PROVIDER');

      const upstream = await startUpstream(t, () => ({ status: 500 }));
      const { agentId } = await setupAgent(engine, engine.a, upstream.url);
      const failed = await engine.call('POST', DRAFT, { token, body: { goal: 'x', name: 'y', agent_id: agentId } });
      assert.equal(failed.status, 502, JSON.stringify(failed.body));
      assert.equal(failed.body.error.code, 'FLOW_DRAFT_MODEL_FAILED');
      assert.doesNotMatch(JSON.stringify(failed.body), /request details|sk-test/);

      const unknown = '01900000-0000-7000-8000-000000000000';
      const foreign = await engine.call('POST', DRAFT, {
        token: engine.b.token,
        body: { goal: 'x', name: 'y', agent_id: agentId },
      });
      const missing = await engine.call('POST', DRAFT, {
        token: engine.b.token,
        body: { goal: 'x', name: 'y', agent_id: unknown },
      });
      assert.equal(foreign.status, 404);
      assert.equal(missing.status, 404);
      assert.equal(
        foreign.body.error.message.replace(agentId, 'ID'),
        missing.body.error.message.replace(unknown, 'ID'),
      );
      const viewer = await viewerToken(engine, engine.a, 'draft-viewer');
      assert.equal((await engine.call('POST', DRAFT, { token: viewer, body: { goal: 'x', name: 'y' } })).status, 403);
      assert.equal((await engine.call('POST', DRAFT, { token, body: { name: 'y' } })).status, 400);
      assert.equal((await engine.call('POST', DRAFT, { token, body: { goal: '', name: 'y' } })).status, 400);
      assert.equal(upstream.calls.length, 1, 'only the one allowed call reached the model');
    });
  });
}
