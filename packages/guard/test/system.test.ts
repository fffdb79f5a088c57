import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMemoryCache, openCache } from '@keel/core';
import { buildGuard, sharedGuard, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`health and readiness (${target.dialect})`, () => {
    // One app for the probes on the default configuration; the other cases build their own.
    const probed = sharedGuard(target);

    test('GET /healthz answers UP as text', async () => {
      const { app } = probed();
      const response = await app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(response.statusCode, 200);
      assert.equal(response.body, 'UP');
      assert.match(String(response.headers['content-type']), /^text\/plain/);
    });

    test('GET /ready answers READY when the database and cache answer', async () => {
      const { app } = probed();
      const response = await app.inject({ method: 'GET', url: '/ready' });
      assert.equal(response.statusCode, 200);
      assert.equal(response.body, 'READY');
    });

    test('GET /ready answers 503 with a short message when the cache does not answer', async (t) => {
      const cache = { ...createMemoryCache(), ping: async () => false };
      const { app } = await buildGuard(t, target, {}, { cache });
      const response = await app.inject({ method: 'GET', url: '/ready' });
      assert.equal(response.statusCode, 503);
      assert.equal(response.body, 'NOT READY: cache unreachable');
    });

    test('the probes are public and outside rate limiting, with AUTH_ENABLED and a tiny limit', async (t) => {
      const { app } = await buildGuard(t, target, {
        AUTH_ENABLED: 'true',
        AUTH_TOKEN_PERMISSIONS: 'reader=detect:read',
        RATE_LIMIT_MAX: '1',
      });
      for (let i = 0; i < 3; i++) {
        assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
        assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
      }
    });

    test('REDIS_URL on a closed port: guard builds and detects; /ready names the cache', async (t) => {
      const opened = openCache({ redisUrl: 'redis://127.0.0.1:1', service: 'guard' });
      t.after(() => opened.close());
      const { app } = await buildGuard(t, target, {}, { cache: opened.cache });
      const detected = await app.inject({ method: 'POST', url: '/detect', payload: { text: 'mail a@example.org' } });
      assert.equal(detected.statusCode, 200);
      const response = await app.inject({ method: 'GET', url: '/ready' });
      assert.equal(response.statusCode, 503);
      assert.equal(response.body, 'NOT READY: cache unreachable');
    });
  });
}
