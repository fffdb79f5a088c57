// POST /api/v1/runtime/agents/{agentId}/flows/{flowId}/select: an active flow of the realm becomes the agent's flow.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { activeFlow, FLOWS, routedConfig, viewerToken } from './flow-routing-helper.ts';
import { roleToken, setupAgent, sharedRuntime, startUpstream, testDatabaseTargets } from './runtime-helper.ts';

const select = (agentId: string, flowId: string) => `/api/v1/runtime/agents/${agentId}/flows/${flowId}/select`;

for (const target of testDatabaseTargets()) {
  describe(`selecting an agent's flow (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('an active flow becomes the default flow the agent runs; selecting again changes nothing', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const { agentId } = await setupAgent(engine, engine.a, upstream.url);
      const flow = await activeFlow(engine, engine.a, 'Order status');
      const developer = await roleToken(engine, 'developer');
      const selected = await engine.call('POST', select(agentId, flow.id), { token: developer });
      assert.equal(selected.status, 200, JSON.stringify(selected.body));
      assert.equal(selected.body.default_flow_id, flow.id);
      assert.ok(selected.body.ai_provider_id, 'the rest of the configuration is kept');
      const again = await engine.call('POST', select(agentId, flow.id), { token: engine.a.token });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, { ...selected.body, updated_at: again.body.updated_at });
      const read = await engine.call('GET', `/api/v1/runtime/agents/${agentId}/config`, { token: engine.a.token });
      assert.equal(read.body.default_flow_id, flow.id);
      // A turn that names no flow and matches no routed flow runs the selected one.
      const turn = await engine.call('POST', '/api/v1/runtime/execute', {
        token: engine.a.token,
        body: { agent_id: agentId, input: { message: 'zzzz' } },
      });
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      assert.equal(turn.body.flow_id, flow.id, JSON.stringify(turn.body.routing));
    });

    test('an agent never configured gets a configuration with the flow', async () => {
      const engine = await shared.fresh();
      const agent = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token: engine.a.token,
        body: { username: `agent-${Math.random().toString(36).slice(2, 8)}` },
      });
      assert.equal(agent.status, 201, JSON.stringify(agent.body));
      const flow = await activeFlow(engine, engine.a, 'Returns');
      const selected = await engine.call('POST', select(agent.body.identity.id, flow.id), { token: engine.a.token });
      assert.equal(selected.status, 200, JSON.stringify(selected.body));
      assert.equal(selected.body.default_flow_id, flow.id);
      assert.deepEqual(selected.body.allowed_mcp_servers, []);
    });

    test('a draft or deactivated flow is 409 FLOW_NOT_ACTIVE; nothing changes', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const { agentId } = await setupAgent(engine, engine.a, upstream.url);
      const draft = await engine.call('POST', FLOWS, {
        token: engine.a.token,
        body: { name: 'Draft only', config: routedConfig() },
      });
      assert.equal(draft.status, 201, JSON.stringify(draft.body));
      const refused = await engine.call('POST', select(agentId, draft.body.id), { token: engine.a.token });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error.code, 'FLOW_NOT_ACTIVE');
      const active = await activeFlow(engine, engine.a, 'Was active');
      const off = await engine.call('PUT', `${FLOWS}/${active.id}`, {
        token: engine.a.token,
        body: { name: 'Was active', config: routedConfig(), is_active: false },
      });
      assert.equal(off.status, 200, JSON.stringify(off.body));
      assert.equal((await engine.call('POST', select(agentId, active.id), { token: engine.a.token })).status, 409);
      const read = await engine.call('GET', `/api/v1/runtime/agents/${agentId}/config`, { token: engine.a.token });
      assert.equal(read.body.default_flow_id, null);
    });

    test("roles and realms: a viewer is refused; another realm's flow or agent is a 404 like an unknown one", async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const { agentId } = await setupAgent(engine, engine.a, upstream.url);
      const flow = await activeFlow(engine, engine.a, 'Mine');
      const viewer = await viewerToken(engine, engine.a, `viewer-${Math.random().toString(36).slice(2, 8)}`);
      const denied = await engine.call('POST', select(agentId, flow.id), { token: viewer });
      assert.equal(denied.status, 403, JSON.stringify(denied.body));
      const foreignFlow = await activeFlow(engine, engine.b, 'Theirs');
      const foreign = await engine.call('POST', select(agentId, foreignFlow.id), { token: engine.a.token });
      const unknown = await engine.call('POST', select(agentId, '01a2190c-0000-7000-8000-000000000000'), {
        token: engine.a.token,
      });
      assert.equal(foreign.status, 404);
      assert.equal(unknown.status, 404);
      assert.equal(foreign.body.error.code, unknown.body.error.code);
      assert.equal(
        foreign.body.error.message.replace(foreignFlow.id, 'X'),
        unknown.body.error.message.replace('01a2190c-0000-7000-8000-000000000000', 'X'),
      );
      const theirAgent = await engine.call('POST', select(agentId, flow.id), { token: engine.b.token });
      assert.equal(theirAgent.status, 404);
      const read = await engine.call('GET', `/api/v1/runtime/agents/${agentId}/config`, { token: engine.a.token });
      assert.equal(read.body.default_flow_id, null);
    });
  });
}
