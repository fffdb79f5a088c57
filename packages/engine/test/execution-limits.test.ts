import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { waitUntil } from '@keel/core/testing';
import { createExecutionWorker } from '../src/executions/execution-worker.ts';
import { httpToolInvoker, publishedFlow, startToolDouble } from './execution-helper.ts';
import { setupAgent, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

const EXECUTIONS = '/api/v1/runtime/executions';

for (const target of testDatabaseTargets()) {
  describe(`agent max_concurrency across workers (${target.dialect})`, () => {
    const shared = sharedRuntime(target);
    let double: Awaited<ReturnType<typeof startToolDouble>> | undefined;
    after(async () => {
      await double?.close();
    });

    test('two workers never run more of one agent’s executions at once than its max_concurrency; others are not held up', async () => {
      const engine = await shared.fresh();
      double ??= await startToolDouble({ slowMs: 700 });
      engine.runtime.extensions.flowTools = httpToolInvoker(double.url);
      const { agentId } = await setupAgent(engine, engine.a, double.url, { settings: { max_concurrency: 2 } });
      const flow = await publishedFlow(engine, engine.a.token, 'Slow one', [
        { id: 'wait', type: 'tool', tool: 'slow', arguments: { object: { n: { var: 'input.n' } } }, next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'done' },
      ]);
      const queue = async (body: Record<string, unknown>) => {
        const created = await engine.call('POST', EXECUTIONS, { token: engine.a.token, body });
        assert.equal(created.status, 202, JSON.stringify(created.body));
        return created.body.id as string;
      };
      const limited: string[] = [];
      for (let n = 0; n < 5; n++) limited.push(await queue({ flow_id: flow.id, agent_id: agentId, input: { n } }));
      const free = [
        await queue({ flow_id: flow.id, input: { n: 10 } }),
        await queue({ flow_id: flow.id, input: { n: 11 } }),
      ];

      const workers = ['w-limit-1', 'w-limit-2'].map((workerId) =>
        createExecutionWorker(engine.runtime, { concurrency: 4, leaseMs: 3000, pollMs: 30, workerId }),
      );
      let peak = 0;
      let freeStarted = 0;
      const sample = setInterval(async () => {
        const rows = await engine.runtime.db
          .selectFrom('flow_execution')
          .select(['id', 'agent_id', 'lease_owner', 'started_at'])
          .where('id', 'in', [...limited, ...free])
          .execute();
        const running = rows.filter((row) => row.agent_id === agentId && row.lease_owner !== null).length;
        peak = Math.max(peak, running);
        freeStarted = rows.filter((row) => free.includes(row.id) && row.started_at !== null).length;
      }, 25);
      try {
        for (const worker of workers) worker.start();
        // The executions without an agent limit start at once although five limited ones were queued first.
        await waitUntil(() => freeStarted === 2, 5_000);
        const states = async () =>
          Promise.all(
            [...limited, ...free].map(
              async (id) => (await engine.call('GET', `${EXECUTIONS}/${id}`, { token: engine.a.token })).body.state,
            ),
          );
        await waitUntil(async () => (await states()).every((state) => state === 'succeeded'), 20_000);
      } finally {
        clearInterval(sample);
        await Promise.all(workers.map((worker) => worker.stop()));
      }
      assert.equal(peak, 2, 'the limit is used fully and never passed');
    });

    test('a synchronous execute beyond the agent’s max_concurrency is a 429 with Retry-After; nothing stored', async () => {
      const engine = await shared.fresh();
      double ??= await startToolDouble({ slowMs: 700 });
      engine.runtime.extensions.flowTools = httpToolInvoker(double.url);
      const { agentId } = await setupAgent(engine, engine.a, double.url, { settings: { max_concurrency: 1 } });
      const flow = await publishedFlow(engine, engine.a.token, 'Slow sync', [
        { id: 'wait', type: 'tool', tool: 'slow', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'done' },
      ]);
      const url = `/api/v1/runtime/flows/${flow.id}/execute`;
      const first = engine.call('POST', url, { token: engine.a.token, body: { agent_id: agentId } });
      await waitUntil(async () => {
        const list = await engine.call('GET', `${EXECUTIONS}?flow_id=${flow.id}`, { token: engine.a.token });
        return list.body.data.some((e: { state: string }) => e.state === 'running');
      }, 5_000);
      const second = await engine.call('POST', url, { token: engine.a.token, body: { agent_id: agentId } });
      assert.equal(second.status, 429, JSON.stringify(second.body));
      assert.equal(second.body.error.code, 'RUNTIME_CONCURRENCY_LIMIT');
      assert.equal(second.headers['retry-after'], '1');
      assert.equal((await first).body.state, 'succeeded');
      const list = await engine.call('GET', `${EXECUTIONS}?flow_id=${flow.id}`, { token: engine.a.token });
      assert.equal(list.body.data.length, 1, 'the refused execute stored nothing');
      // Once the first has finished there is room again.
      const third = await engine.call('POST', url, { token: engine.a.token, body: { agent_id: agentId } });
      assert.equal(third.status, 200, JSON.stringify(third.body));
    });
  });
}
