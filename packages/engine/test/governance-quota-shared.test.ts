// Two engine instances on one PostgreSQL database and one Redis share a realm's quota: the counters live in Redis,
// so requests answered by either instance use up the same window.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setupAgent, startUpstream } from './runtime-helper.ts';
import { startTwoInstances } from './two-instances-helper.ts';

const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

for (const [dbUrl, cacheUrl] of databaseUrl && redisUrl ? [[databaseUrl, redisUrl]] : []) {
  test('two instances on PostgreSQL + Redis share one realm quota (429 with Retry-After on either)', async (t) => {
    const { call, token, realm, engine } = await startTwoInstances(
      t,
      { database: dbUrl!, redis: cacheUrl! },
      { service: 'governance-quota', realm: 'Shared quota' },
    );
    const upstream = await startUpstream(t);
    const { agentId } = await setupAgent(engine as never, realm, upstream.url, {
      prompt: { content: 'Be brief.', variables: [] },
    });
    const quota = await call(1, 'PUT', '/api/v1/governance/quotas', { window_seconds: 3600, max_requests: 3 }, token);
    assert.equal(quota.status, 200, JSON.stringify(quota.body));
    const chat = (index: number) =>
      call(
        index,
        'POST',
        '/api/v1/runtime/ai/chat',
        { agent_id: agentId, messages: [{ role: 'user', content: 'Hello' }] },
        token,
      );
    assert.equal((await chat(0)).status, 200);
    assert.equal((await chat(1)).status, 200);
    assert.equal((await chat(0)).status, 200);
    // Each instance alone has counted at most two: only the shared counter says the window is used up.
    for (const index of [1, 0]) {
      const over = await chat(index);
      assert.equal(over.status, 429, JSON.stringify(over.body));
      assert.equal(over.body.error.code, 'GOVERNANCE_QUOTA_EXCEEDED');
      assert.ok(Number(over.headers['retry-after']) >= 1);
    }
    assert.equal(upstream.calls.length, 3);
    const snapshot = await call(1, 'GET', '/api/v1/governance', undefined, token);
    assert.equal(snapshot.body.quota.usage.requests, 5);
  });
}
