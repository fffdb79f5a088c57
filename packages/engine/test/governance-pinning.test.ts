// The policy version active when an execution is created is pinned to it: a durable execution queued before an
// activation keeps its version (its tool steps run under it), one queued after runs under the new one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { waitUntil } from '@keel/core/testing';
import { createExecutionWorker } from '../src/executions/execution-worker.ts';
import { publishedFlow } from './execution-helper.ts';
import { defaultTools, startMcpServer } from './mcp-servers.ts';
import { sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

const G = '/api/v1/governance';
const EXECUTIONS = '/api/v1/runtime/executions';

for (const target of testDatabaseTargets()) {
  describe(`governance policy pinning (${target.dialect})`, () => {
    const shared = sharedRuntime(target, { env: { ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0' } });

    test('an execution created before an activation keeps its policy version; one created after gets the new one', async (t) => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const server = await startMcpServer(t, { tools: defaultTools() });
      const registered = await engine.call('POST', '/api/v1/runtime/mcp/servers', {
        token,
        body: { name: 'stock', url: server.url, auto_discover: true },
      });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const agent = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token,
        body: { username: `agent-${Math.random().toString(36).slice(2, 8)}` },
      });
      const agentId = agent.body.identity.id as string;
      await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
        token,
        body: { allowed_mcp_servers: [registered.body.id], settings: { retry_base_ms: 10 } },
      });
      const flow = await publishedFlow(engine, token, 'Lookup', [
        { id: 'call', type: 'tool', tool: 'lookup_stock', arguments: { object: { sku: 'TENT-2P' } }, next: 'done' },
        { id: 'done', type: 'output', action: 'DATA_RESULT', data: { var: 'vars.call' } },
      ]);
      const policy = async (name: string, tools: string[]) => {
        const created = await engine.call('POST', `${G}/policies`, {
          token,
          body: { name, rules: { allowed_tools: tools } },
        });
        const activated = await engine.call('POST', `${G}/policies/${created.body.id}/activate`, { token });
        assert.equal(activated.status, 200, JSON.stringify(activated.body));
        return activated.body as { id: string; version: number };
      };
      const queue = async () => {
        const created = await engine.call('POST', EXECUTIONS, {
          token,
          body: { flow_id: flow.id, agent_id: agentId, compensate_on_failure: false, max_retries: 0 },
        });
        assert.equal(created.status, 202, JSON.stringify(created.body));
        return created.body as { id: string; pinned: { policy: { id: string; version: number } } };
      };

      // No worker runs yet: both executions wait in the queue while the policy changes under them.
      const v1 = await policy('Lookups allowed', ['lookup_stock']);
      const before = await queue();
      assert.deepEqual(before.pinned.policy, { id: v1.id, version: 1 });
      const v2 = await policy('No tools', ['none']);
      const after = await queue();
      assert.deepEqual(after.pinned.policy, { id: v2.id, version: 2 });

      const worker = createExecutionWorker(engine.runtime, { concurrency: 2, leaseMs: 3000, pollMs: 50 });
      engine.runtime.extensions.executions = worker;
      worker.start();
      t.after(async () => {
        engine.runtime.extensions.executions = undefined;
        await worker.stop();
      });
      const finished = async (id: string) => {
        let last: any;
        await waitUntil(async () => {
          last = (await engine.call('GET', `${EXECUTIONS}/${id}`, { token })).body;
          return ['succeeded', 'terminal_failure', 'retryable_failure'].includes(last.state);
        }, 15_000);
        return last;
      };
      const kept = await finished(before.id);
      assert.equal(kept.state, 'succeeded', JSON.stringify(kept));
      const refused = await finished(after.id);
      assert.equal(refused.state, 'terminal_failure', JSON.stringify(refused));
      assert.equal(refused.error.code, 'GOVERNANCE_POLICY_DENIED');
      // The refused step never reached the server: one call, the pinned execution's.
      assert.equal(server.calls.length, 1);
      const rows = await engine.runtime.db
        .selectFrom('flow_execution')
        .select(['id', 'policy_version_id'])
        .where('id', 'in', [before.id, after.id])
        .execute();
      assert.deepEqual(Object.fromEntries(rows.map((r) => [r.id, r.policy_version_id])), {
        [before.id]: v1.id,
        [after.id]: v2.id,
      });
    });
  });
}
