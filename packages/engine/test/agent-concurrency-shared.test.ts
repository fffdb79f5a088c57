// Two engine instances on one PostgreSQL database and one Redis share an agent's max_concurrency: chat turns take
// slots in Redis, so turns in flight on either instance count against the same limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitUntil } from '@keel/core/testing';
import { setupAgent, startUpstream } from './runtime-helper.ts';
import { startTwoInstances } from './two-instances-helper.ts';

const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

for (const [dbUrl, cacheUrl] of databaseUrl && redisUrl ? [[databaseUrl, redisUrl]] : []) {
  test("two instances on PostgreSQL + Redis share an agent's max_concurrency for chat turns (429 on either)", async (t) => {
    const { call, token, realm, engine } = await startTwoInstances(
      t,
      { database: dbUrl!, redis: cacheUrl! },
      { service: 'agent-concurrency', realm: 'Shared concurrency' },
    );
    // The model holds the two turns under test for 12 s (long enough on a loaded machine); it answers others at once.
    const held = new Set<number>();
    const upstream = await startUpstream(t, (_call, n) => ({ delayMs: held.has(n) ? 12_000 : 0 }));
    const { agentId } = await setupAgent(engine as never, realm, upstream.url, {
      prompt: { content: 'Be brief.', variables: [] },
      settings: { max_concurrency: 2 },
    });
    const chat = (index: number) =>
      call(
        index,
        'POST',
        '/api/v1/runtime/ai/chat',
        { agent_id: agentId, messages: [{ role: 'user', content: 'Hello' }] },
        token,
      );
    // Two turns in flight, one on each instance: each instance alone holds one slot of two, so only the shared
    // slots refuse a third, on either instance — at once, even while a slow Redis command on the shared client (a
    // loaded machine) sends caches and rate limits in process for a second.
    const before = upstream.calls.length;
    held.add(before + 1).add(before + 2);
    const inFlight = [chat(0), chat(1)];
    await waitUntil(() => upstream.calls.length === before + 2, 15_000);
    for (const index of [0, 1]) {
      const over = await chat(index);
      assert.equal(over.status, 429, JSON.stringify(over.body));
      assert.equal(over.body.error.code, 'RUNTIME_CONCURRENCY_LIMIT');
      assert.equal(over.headers['retry-after'], '1');
    }
    assert.equal(upstream.calls.length, before + 2, 'a refused turn never reaches the model');
    for (const done of await Promise.all(inFlight)) assert.equal(done.status, 200, JSON.stringify(done.body));
    // The slots were released: both instances run turns again.
    assert.equal((await chat(1)).status, 200);
    assert.equal((await chat(0)).status, 200);
  });
}
