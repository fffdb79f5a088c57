import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sharedEngine, testDatabaseTargets } from './helper.ts';

const LISTENERS = ['rest', 'mcp', 'webhook'] as const;

for (const target of testDatabaseTargets()) {
  describe(`engine liveness and readiness on every listener (${target.dialect})`, () => {
    // One engine for both tests: each registers its own 'webhook-worker' check (a name registered again replaces
    // the earlier check), so neither depends on the other's.
    const shared = sharedEngine(target, { env: { RATE_LIMIT_MAX: '1' }, worker: true });
    test('/healthz and /ready on REST, MCP and ingress; the spec paths too; public, not rate limited, in each OpenAPI', async () => {
      const engine = await shared.fresh();
      engine.readiness.add('webhook-worker', () => engine.worker!.check());
      for (const name of LISTENERS) {
        const app = engine[name];
        for (let i = 0; i < 3; i++) {
          const live = await app.inject({ method: 'GET', url: '/healthz' });
          assert.equal(live.statusCode, 200, name);
          assert.equal(live.body, 'UP');
          const ready = await app.inject({ method: 'GET', url: '/ready' });
          assert.equal(ready.statusCode, 200, name);
          assert.equal(ready.body, 'READY');
        }
        const paths = Object.keys((await app.inject({ method: 'GET', url: '/openapi.json' })).json().paths);
        assert.ok(paths.includes('/healthz') && paths.includes('/ready'), name);
      }
      assert.deepEqual((await engine.rest.inject({ method: 'GET', url: '/api/v1/health' })).json(), { status: 'ok' });
      assert.deepEqual((await engine.rest.inject({ method: 'GET', url: '/api/v1/ready' })).json(), { status: 'ready' });
      for (const app of [engine.mcp, engine.webhook])
        assert.deepEqual((await app.inject({ method: 'GET', url: '/health' })).json(), { status: 'ok' });
    });

    test('a failing check makes every listener not ready, naming it; liveness stays up', async () => {
      const engine = await shared.fresh();
      engine.readiness.add('webhook-worker', () => ({ reason: 'failing' }));
      for (const name of LISTENERS) {
        const ready = await engine[name].inject({ method: 'GET', url: '/ready' });
        assert.equal(ready.statusCode, 503, name);
        assert.equal(ready.body, 'NOT READY: webhook-worker failing');
        assert.equal((await engine[name].inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      }
      const json = await engine.rest.inject({ method: 'GET', url: '/api/v1/ready' });
      assert.equal(json.statusCode, 503);
      assert.deepEqual(json.json().unavailable, ['webhook-worker']);
    });
  });
}
