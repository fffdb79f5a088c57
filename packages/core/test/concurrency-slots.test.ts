// Concurrency slots: at most `limit` holders of a key at once, shared through Redis when configured, leased so that a
// holder that dies frees its slot, in process without Redis.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { connectRedis } from '../src/cache/redis-cache.ts';
import { watchRedis } from '../src/cache/redis-health.ts';
import { type ConcurrencySlots, createConcurrencySlots, type HeldSlot } from '../src/index.ts';
import { waitUntil } from '../src/testing.ts';

const taken = (slot: HeldSlot | { held: number }): HeldSlot => {
  assert.ok('release' in slot, `refused: ${JSON.stringify(slot)}`);
  return slot;
};

/** Two holders of two slots, a third refused, a release frees one, a lease end frees the other. */
async function exercise(first: ConcurrencySlots, second: ConcurrencySlots) {
  const a = taken(await first.acquire('agent', 2, 60_000));
  taken(await second.acquire('agent', 2, 300));
  assert.deepEqual(await first.acquire('agent', 2, 60_000), { held: 2 });
  assert.deepEqual(await second.acquire('agent', 2, 60_000), { held: 2 });
  taken(await second.acquire('other', 1, 60_000));
  await a.release();
  await a.release();
  const c = taken(await second.acquire('agent', 2, 60_000));
  assert.deepEqual(await first.acquire('agent', 2, 60_000), { held: 2 });
  // The 300 ms lease of a holder that never released ends: its slot is free again.
  await new Promise((resolve) => setTimeout(resolve, 400));
  taken(await first.acquire('agent', 2, 60_000));
  assert.deepEqual(await second.acquire('agent', 2, 60_000), { held: 2 });
  await c.release();
}

test('in process: a limit per key, release, lease end', async () => {
  const slots = createConcurrencySlots({ namespace: 't:' });
  assert.equal(slots.shared, false);
  await exercise(slots, slots);
});

test('an unreachable Redis never fails or holds up a turn: slots are counted in process', async () => {
  const redis = connectRedis('redis://127.0.0.1:1');
  redis.on('error', () => undefined);
  try {
    const slots = createConcurrencySlots({ redis, namespace: 't:' });
    const started = Date.now();
    taken(await slots.acquire('k', 1, 60_000));
    assert.deepEqual(await slots.acquire('k', 1, 60_000), { held: 1 });
    assert.ok(Date.now() - started < 1000);
    slots.close();
  } finally {
    redis.disconnect();
  }
});

for (const url of process.env.TEST_REDIS_URL ? [process.env.TEST_REDIS_URL] : []) {
  test('with Redis, two instances share the slots of a key', async (t) => {
    const clients = [connectRedis(url), connectRedis(url)];
    const namespace = `keel:test:${randomUUID()}:`;
    try {
      for (const client of clients) await waitUntil(() => client.status === 'ready', 5000);
      const [first, second] = clients.map((redis) => createConcurrencySlots({ redis, namespace }));
      t.after(() => {
        first!.close();
        second!.close();
      });
      assert.equal(first!.shared, true);
      await exercise(first!, second!);
      // A command that timed out on the shared client (a loaded machine) holds caches and rate limits in process for a
      // second; the slots keep deciding in Redis, so the other instance's holders still count.
      taken(await first!.acquire('held', 1, 60_000));
      for (const client of clients) watchRedis(client).failed(new Error('Command timed out'));
      assert.deepEqual(await second!.acquire('held', 1, 60_000), { held: 1 });
      // A short lease taken after a long one never shortens the key's life.
      taken(await first!.acquire('mixed', 3, 60_000));
      taken(await second!.acquire('mixed', 3, 100));
      const ttl = await clients[0]!.pttl(`${namespace}mixed`);
      assert.ok(ttl > 59_000 && ttl <= 61_000, String(ttl));
    } finally {
      await clients[0]!.del(`${namespace}agent`, `${namespace}other`, `${namespace}mixed`, `${namespace}held`);
      for (const client of clients) client.disconnect();
    }
  });
}
