// Windowed counters: per fixed window, shared through Redis when configured, in process when it is unreachable.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { connectRedis } from '../src/cache/redis-cache.ts';
import { createWindowCounters } from '../src/index.ts';
import { waitUntil } from '../src/testing.ts';

test('in process: amounts add up per key within a window; 0 reads', async () => {
  const counters = createWindowCounters({ namespace: 't:' });
  assert.equal(counters.shared, false);
  const [a, b] = await counters.add(
    [
      { key: 'a', amount: 2 },
      { key: 'b', amount: 5 },
    ],
    60_000,
  );
  assert.equal(a!.total, 2);
  assert.equal(b!.total, 5);
  assert.ok(a!.resetAt > Date.now() && a!.resetAt <= Date.now() + 60_000);
  const [read] = await counters.add([{ key: 'a', amount: 0 }], 60_000);
  assert.equal(read!.total, 2);
  // A window of another length is another count, even where both windows start at the same instant.
  const [longer] = await counters.add([{ key: 'a', amount: 0 }], 120_000);
  assert.equal(longer!.total, 0);
});

test('an unreachable Redis never fails or holds up a count: it is counted in process', async () => {
  const redis = connectRedis('redis://127.0.0.1:1');
  redis.on('error', () => undefined);
  try {
    const counters = createWindowCounters({ redis, namespace: 't:' });
    const started = Date.now();
    const [one] = await counters.add([{ key: 'x', amount: 1 }], 60_000);
    const [two] = await counters.add([{ key: 'x', amount: 1 }], 60_000);
    assert.equal(one!.total, 1);
    assert.equal(two!.total, 2);
    assert.ok(Date.now() - started < 1000);
  } finally {
    redis.disconnect();
  }
});

for (const url of process.env.TEST_REDIS_URL ? [process.env.TEST_REDIS_URL] : []) {
  test('with Redis, two counters (two instances) share one total', async () => {
    const clients = [connectRedis(url), connectRedis(url)];
    try {
      for (const client of clients) await waitUntil(() => client.status === 'ready', 5000);
      const namespace = `keel:test:${randomUUID()}:`;
      const [first, second] = clients.map((redis) => createWindowCounters({ redis, namespace }));
      await first!.add([{ key: 'k', amount: 3 }], 60_000);
      const [total] = await second!.add([{ key: 'k', amount: 4 }], 60_000);
      assert.equal(total!.total, 7);
      const ttl = await clients[0]!.pttl(`${namespace}k:60000:${total!.resetAt - 60_000}`);
      assert.ok(ttl > 0 && ttl <= 61_000, String(ttl));
    } finally {
      for (const client of clients) client.disconnect();
    }
  });
}
