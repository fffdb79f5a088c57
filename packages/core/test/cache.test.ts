import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openCache } from '../src/index.ts';

const targets: { name: string; redisUrl: string | undefined }[] = [{ name: 'memory', redisUrl: undefined }];
if (process.env.TEST_REDIS_URL) targets.push({ name: 'redis', redisUrl: process.env.TEST_REDIS_URL });

for (const target of targets) {
  describe(`cache (${target.name})`, () => {
    test('set, get, getMany, expiry, delete and deletePrefix', async (t) => {
      const opened = openCache({ redisUrl: target.redisUrl, service: `test-${Date.now()}-${Math.random()}` });
      t.after(() => opened.close());
      const { cache } = opened;
      // Redis is connected a moment after opening (commands meanwhile are served from process memory).
      for (let i = 0; i < 100 && !(await cache.ping()); i++) await sleep(20);
      assert.equal(await cache.ping(), true);
      await cache.set('a:1', { v: 1 }, 60_000);
      await cache.set('a:2', 2, 60_000);
      await cache.set('b:1', 'x', 60_000);
      assert.deepEqual(await cache.get('a:1'), { v: 1 });
      assert.deepEqual(await cache.getMany(['a:1', 'nope', 'a:2']), [{ v: 1 }, undefined, 2]);
      await cache.set('short', 1, 30);
      await sleep(80);
      assert.equal(await cache.get('short'), undefined, 'entries expire after their TTL');
      await cache.deletePrefix('a:');
      assert.equal(await cache.get('a:1'), undefined);
      assert.equal(await cache.get('b:1'), 'x');
      await cache.delete('b:1');
      assert.equal(await cache.get('b:1'), undefined);
    });

    test('a published message reaches subscribers', async (t) => {
      const service = `test-${Date.now()}-${Math.random()}`;
      const a = openCache({ redisUrl: target.redisUrl, service });
      t.after(() => a.close());
      const received: string[] = [];
      await a.cache.subscribe('changed', (m) => received.push(m));
      await a.cache.publish('changed', 'hello');
      for (let i = 0; i < 50 && received.length === 0; i++) await sleep(10);
      assert.deepEqual(received, ['hello']);
    });
  });
}

test('an unreachable Redis serves from process memory and reports not ready', async (t) => {
  const opened = openCache({ redisUrl: 'redis://127.0.0.1:1', service: 'down' });
  t.after(() => opened.close());
  assert.equal(await opened.cache.get('x'), undefined);
  await opened.cache.set('x', 1, 1000);
  assert.equal(await opened.cache.get('x'), 1);
  assert.equal(await opened.cache.ping(), false);
});
