import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMemoryCache } from '@keel/core';
import { buildGuard, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`health and readiness (${target.dialect})`, () => {
    test('GET /healthz answers UP as text', async (t) => {
      const { app } = await buildGuard(t, target);
      const response = await app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(response.statusCode, 200);
      assert.equal(response.body, 'UP');
      assert.match(String(response.headers['content-type']), /^text\/plain/);
    });

    test('GET /ready answers READY when the database and cache answer', async (t) => {
      const { app } = await buildGuard(t, target);
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
  });
}
