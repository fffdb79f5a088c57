import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMemoryCache, openCache } from '@keel/core';
import { buildGeo, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`geo liveness and readiness (${target.dialect})`, () => {
    test('GET /healthz is UP and GET /ready is READY, without a key, outside the rate limit, in the OpenAPI', async (t) => {
      const { app } = await buildGeo(t, target, { RATE_LIMIT_MAX: '1' }, { startWorker: true });
      for (let i = 0; i < 3; i++) {
        const live = await app.inject({ method: 'GET', url: '/healthz' });
        assert.equal(live.statusCode, 200);
        assert.equal(live.body, 'UP');
        const ready = await app.inject({ method: 'GET', url: '/ready' });
        assert.equal(ready.statusCode, 200);
        assert.equal(ready.body, 'READY');
      }
      const paths = Object.keys((await app.inject({ method: 'GET', url: '/openapi.json' })).json().paths);
      assert.ok(paths.includes('/healthz') && paths.includes('/ready'));
    });

    test('GET /ready is a 503 naming the cache when it does not answer', async (t) => {
      const cache = { ...createMemoryCache(), ping: async () => false };
      const { app } = await buildGeo(t, target, {}, { cache });
      const ready = await app.inject({ method: 'GET', url: '/ready' });
      assert.equal(ready.statusCode, 503);
      assert.equal(ready.body, 'NOT READY: cache unreachable');
    });

    test('REDIS_URL on a closed port: geo builds and serves, /ready names the cache', async (t) => {
      const opened = openCache({ redisUrl: 'redis://127.0.0.1:1', service: 'geo' });
      t.after(() => opened.close());
      const { app, a } = await buildGeo(t, target, {}, { cache: opened.cache });
      const keys = await app.inject({
        method: 'GET',
        url: `/api/v1/geo/exports?workspaceId=${a.workspaceId}`,
        headers: { authorization: `Bearer ${a.keys.read}` },
      });
      assert.equal(keys.statusCode, 200);
      await new Promise((resolve) => setTimeout(resolve, 4500)); // geo used to crash about 4 s after start
      const ready = await app.inject({ method: 'GET', url: '/ready' });
      assert.equal(ready.statusCode, 503);
      assert.equal(ready.body, 'NOT READY: cache unreachable');
    });
  });
}
