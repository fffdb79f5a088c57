import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sha256Hex } from '@keel/core';
import { buildGeo, call, testDatabaseTargets } from './helper.ts';
import { sharedGeo } from './measure-suite.ts';

for (const target of testDatabaseTargets()) {
  describe(`tenancy and keys (${target.dialect})`, () => {
    // One app for the suite, two new tenants per test; the test that moves the clock builds its own.
    const freshGeo = sharedGeo(target);

    test('keys are stored only as SHA-256 hashes and accepted as Bearer or x-api-key', async () => {
      const { app, db, a } = await freshGeo();
      const rows = await db
        .selectFrom('api_key')
        .select(['key_hash', 'display_prefix'])
        .where('tenant_id', '=', a.tenantId)
        .execute();
      assert.equal(rows.length, 4);
      for (const key of Object.values(a.keys)) {
        assert.ok(
          rows.some((row) => row.key_hash === sha256Hex(key)),
          'the hash is stored',
        );
        const dump = JSON.stringify(await db.selectFrom('api_key').selectAll().execute());
        assert.equal(dump.includes(key), false, 'the secret itself is nowhere in the table');
      }
      const url = `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=metrics`;
      assert.equal((await call(app, 'GET', url, { key: a.keys.read })).status, 200);
      assert.equal((await call(app, 'GET', url, { headers: { 'x-api-key': a.keys.read } })).status, 200);
      const none = await call(app, 'GET', url);
      assert.equal(none.status, 401);
      assert.equal(none.body.error.code, 'GEO_UNAUTHORIZED');
      assert.match(String(none.headers['www-authenticate']), /Bearer/);
      assert.equal((await call(app, 'GET', url, { key: `${a.keys.read}x` })).status, 401);
    });

    test('a missing permission is a 403 naming it', async () => {
      const { app, a } = await freshGeo();
      const response = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=metrics`, {
        key: a.keys.signals,
      });
      assert.equal(response.status, 403);
      assert.equal(response.body.error.code, 'GEO_PERMISSION_DENIED');
      assert.match(response.body.error.message, /geo:read/);
    });

    test("another tenant's workspace gets exactly the same answer as a workspace that does not exist", async () => {
      const { app, a, b } = await freshGeo();
      const other = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${b.workspaceId}&dataset=metrics`, {
        key: a.keys.admin,
      });
      const missing = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77&dataset=metrics`,
        { key: a.keys.admin },
      );
      assert.equal(other.status, 403);
      assert.equal(missing.status, 403);
      assert.deepEqual({ ...other.body.error, traceId: '' }, { ...missing.body.error, traceId: '' });
    });

    test('key management: create (shown once), list without secrets, scope to a workspace, revoke, expire', async (t) => {
      const geo = await buildGeo(t, target);
      const { app, a, b } = geo;
      const created = await call(app, 'POST', '/api/v1/geo/keys', {
        key: a.keys.admin,
        body: {
          name: 'ws-reader',
          permissions: ['geo:read'],
          scope: { type: 'workspace', workspaceIds: [a.workspaceIds[1]] },
        },
      });
      assert.equal(created.status, 201);
      assert.match(created.body.key, /^geo_/);
      assert.equal(created.body.status, 'active');
      const list = await call(app, 'GET', '/api/v1/geo/keys?limit=2', { key: a.keys.admin });
      assert.equal(list.status, 200);
      assert.equal(list.body.items.length, 2);
      assert.equal(JSON.stringify(list.body).includes(created.body.key), false, 'secrets are never listed');
      const next = await call(app, 'GET', `/api/v1/geo/keys?limit=10&cursor=${list.body.nextCursor}`, {
        key: a.keys.admin,
      });
      assert.equal(next.body.items.length, 3);
      assert.equal(next.body.nextCursor, null);

      const scoped = created.body.key as string;
      assert.equal(
        (
          await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceIds[1]}&dataset=metrics`, {
            key: scoped,
          })
        ).status,
        200,
      );
      const outside = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceIds[0]}&dataset=metrics`, {
        key: scoped,
      });
      assert.equal(outside.status, 403);
      assert.equal(outside.body.error.code, 'GEO_WORKSPACE_DENIED');

      const otherTenantScope = await call(app, 'POST', '/api/v1/geo/keys', {
        key: a.keys.admin,
        body: {
          name: 'x',
          permissions: ['geo:read'],
          scope: { type: 'workspaces', workspaceIds: [a.workspaceId, b.workspaceId] },
        },
      });
      assert.equal(otherTenantScope.status, 403, "another tenant's workspace cannot be put in a scope");

      assert.equal(
        (await call(app, 'DELETE', `/api/v1/geo/keys/${created.body.id}`, { key: a.keys.admin })).status,
        204,
      );
      assert.equal(
        (
          await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceIds[1]}&dataset=metrics`, {
            key: scoped,
          })
        ).status,
        401,
      );
      assert.equal(
        (await call(app, 'DELETE', `/api/v1/geo/keys/${created.body.id}`, { key: b.keys.admin })).status,
        404,
        "another tenant's key is not found",
      );

      const soon = await call(app, 'POST', '/api/v1/geo/keys', {
        key: a.keys.admin,
        body: {
          name: 'short',
          permissions: ['geo:read'],
          scope: { type: 'tenant' },
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        },
      });
      assert.equal(soon.status, 201);
      geo.clock.now = new Date(Date.now() + 120_000);
      const expired = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=metrics`, {
        key: soon.body.key,
      });
      assert.equal(expired.status, 403);
      assert.equal(expired.body.error.code, 'GEO_KEY_EXPIRED');
      const listed = await call(app, 'GET', '/api/v1/geo/keys?limit=100', { key: a.keys.admin });
      assert.equal(listed.body.items.find((k: { id: string }) => k.id === soon.body.id).status, 'expired');
    });

    test('only a tenant-scoped key with every permission manages keys, and never grants more than it holds', async () => {
      const { app, a } = await freshGeo();
      const denied = await call(app, 'GET', '/api/v1/geo/keys', { key: a.keys.write });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'GEO_TENANT_SCOPE_REQUIRED');
      const bad = await call(app, 'POST', '/api/v1/geo/keys', {
        key: a.keys.admin,
        body: { name: 'x', permissions: ['geo:everything'], scope: { type: 'tenant' } },
      });
      assert.equal(bad.status, 400);
      const past = await call(app, 'POST', '/api/v1/geo/keys', {
        key: a.keys.admin,
        body: { name: 'x', permissions: ['geo:read'], scope: { type: 'tenant' }, expiresAt: '2000-01-01T00:00:00Z' },
      });
      assert.equal(past.status, 400);
    });
  });
}

for (const target of testDatabaseTargets().slice(0, 1)) {
  describe(`rate limits (${target.dialect})`, () => {
    test('a valid key has its own budget; invented keys share the address budget (429 with Retry-After)', async (t) => {
      const { app, a } = await buildGeo(t, target, { RATE_LIMIT_MAX: '5' });
      const url = `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=metrics`;
      assert.equal((await call(app, 'GET', url, { key: a.keys.read })).status, 200);
      for (let i = 0; i < 4; i++) assert.equal((await call(app, 'GET', url, { key: `geo_invented${i}` })).status, 401);
      const limited = await call(app, 'GET', url, { key: 'geo_invented_again' });
      assert.equal(limited.status, 429, 'fresh invented keys do not reset the budget');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal(limited.body.error.code, 'RATE_LIMITED');
      assert.equal((await call(app, 'GET', url, { key: a.keys.read })).status, 200, 'the valid key counts on its own');
    });
  });
}
