import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readGuardConfig } from '../src/config.ts';
import { buildGuard, sharedGuard, testDatabaseTargets } from './helper.ts';

const AUTH = {
  AUTH_ENABLED: 'true',
  AUTH_TOKEN_PERMISSIONS: 'reader=detect:read,ops=patterns:admin,ops=cache:admin,root=*',
  ADMIN_KEY: 'legacy-admin-key',
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const [target] = testDatabaseTargets();

describe('authentication', () => {
  // One app with AUTH for the tests that only read (and reload caches); the other configurations get their own.
  const withAuth = sharedGuard(target!, AUTH);

  test('AUTH_ENABLED defaults to false: endpoints are open', async (t) => {
    const { app } = await buildGuard(t, target!);
    assert.equal((await app.inject({ method: 'POST', url: '/detect', payload: { text: 'x' } })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/patterns' })).statusCode, 200);
  });

  test('a missing or unknown token is a 401 with WWW-Authenticate; the body never says whether the route exists', async () => {
    const { app } = withAuth();
    for (const headers of [
      {},
      bearer('nobody'),
      { authorization: 'Basic cmVhZGVyOg==' },
      { authorization: 'reader' },
    ]) {
      const response = await app.inject({ method: 'POST', url: '/detect', payload: { text: 'x' }, headers });
      assert.equal(response.statusCode, 401, JSON.stringify(headers));
      assert.equal(response.json().error.code, 'UNAUTHORIZED');
      assert.match(String(response.headers['www-authenticate']), /^Bearer/);
    }
    const unknownRoute = await app.inject({ method: 'GET', url: '/secret-admin-thing' });
    assert.equal(unknownRoute.statusCode, 401);
  });

  test('a token without the permission is a 403; with it, 200', async () => {
    const { app } = withAuth();
    const forbidden = await app.inject({ method: 'GET', url: '/patterns', headers: bearer('reader') });
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.json().error.code, 'FORBIDDEN');
    assert.match(forbidden.json().error.message, /patterns:admin/);
    assert.equal(
      (await app.inject({ method: 'POST', url: '/detect', payload: { text: 'x' }, headers: bearer('reader') }))
        .statusCode,
      200,
    );
  });

  test('a token name repeated with several permissions holds them all; * grants everything', async () => {
    const { app } = withAuth();
    assert.equal((await app.inject({ method: 'GET', url: '/patterns', headers: bearer('ops') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'POST', url: '/admin/reload', headers: bearer('ops') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/validators', headers: bearer('ops') })).statusCode, 403);
    for (const [method, url] of [
      ['GET', '/patterns'],
      ['GET', '/validators'],
      ['GET', '/allowlist'],
      ['GET', '/blacklist'],
      ['POST', '/admin/reload'],
    ] as const) {
      assert.equal((await app.inject({ method, url, headers: bearer('root') })).statusCode, 200, url);
    }
  });

  test('every route enforces its own permission', async (t) => {
    const tokens =
      'p=patterns:admin,a=allowlist:admin,b=blacklist:admin,v=validators:admin,t=templates:admin,c=cache:admin,d=detect:read';
    const { app } = await buildGuard(t, target!, { AUTH_ENABLED: 'true', AUTH_TOKEN_PERMISSIONS: tokens });
    const routes = [
      ['POST', '/detect', 'd', { text: 'x' }],
      ['GET', '/patterns', 'p'],
      ['POST', '/patterns', 'p', { Name: 'X1', Regex: 'x' }],
      ['GET', '/allowlist', 'a'],
      ['POST', '/allowlist', 'a', { value: 'v' }],
      ['GET', '/blacklist', 'b'],
      ['POST', '/blacklist', 'b', { value: 'v' }],
      ['GET', '/validators', 'v'],
      ['POST', '/validators', 'v', { name: 'n', type: 'BUILTIN', rule: 'json' }],
      ['POST', '/templates/import', 't', { template: { name: 'x' } }],
      ['POST', '/admin/reload', 'c'],
    ] as const;
    for (const [method, url, owner, payload] of routes) {
      for (const token of ['p', 'a', 'b', 'v', 't', 'c', 'd']) {
        const response = await app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
        if (token === owner)
          assert.ok(response.statusCode < 300, `${method} ${url} with ${token}: ${response.statusCode}`);
        else assert.equal(response.statusCode, 403, `${method} ${url} with ${token}`);
      }
    }
  });

  test('public paths need no token; AUTH_PUBLIC_PATHS can change them', async (t) => {
    const { app } = withAuth();
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode, 200);
    const custom = await buildGuard(t, target!, { ...AUTH, AUTH_PUBLIC_PATHS: '/healthz' });
    assert.equal((await custom.app.inject({ method: 'GET', url: '/ready' })).statusCode, 401);
  });

  test('the legacy X-ADMIN-KEY is accepted by admin handlers only', async () => {
    const { app } = withAuth();
    const admin = { 'x-admin-key': 'legacy-admin-key' };
    assert.equal((await app.inject({ method: 'GET', url: '/patterns', headers: admin })).statusCode, 200);
    assert.equal((await app.inject({ method: 'POST', url: '/admin/reload', headers: admin })).statusCode, 200);
    assert.equal(
      (await app.inject({ method: 'POST', url: '/detect', payload: { text: 'x' }, headers: admin })).statusCode,
      401,
    );
    assert.equal(
      (await app.inject({ method: 'GET', url: '/patterns', headers: { 'x-admin-key': 'wrong' } })).statusCode,
      401,
    );
  });

  test('AUTH_REQUIRE_BEARER_TOKEN=false also accepts the bare token', async (t) => {
    const { app } = await buildGuard(t, target!, { ...AUTH, AUTH_REQUIRE_BEARER_TOKEN: 'false' });
    assert.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/detect',
          payload: { text: 'x' },
          headers: { authorization: 'reader' },
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (await app.inject({ method: 'POST', url: '/detect', payload: { text: 'x' }, headers: bearer('reader') }))
        .statusCode,
      200,
    );
  });

  test('bad auth configuration stops start-up naming the variable', () => {
    assert.throws(
      () => readGuardConfig({ AUTH_TOKEN_PERMISSIONS: 'x=everything' }),
      /AUTH_TOKEN_PERMISSIONS names an unknown permission "everything"/,
    );
    assert.throws(
      () => readGuardConfig({ AUTH_TOKEN_PERMISSIONS: 'justaname' }),
      /AUTH_TOKEN_PERMISSIONS must look like/,
    );
    assert.throws(() => readGuardConfig({ AUTH_ENABLED: 'true' }), /AUTH_ENABLED is true but/);
    assert.throws(
      () => readGuardConfig({ CONFIDENCE_ALLOW_THRESHOLD: '0.9', CONFIDENCE_BLOCK_THRESHOLD: '0.5' }),
      /CONFIDENCE_ALLOW_THRESHOLD must not be greater/,
    );
    assert.throws(() => readGuardConfig({ PII_MODE: 'REDACT' }), /PII_MODE must be one of MASK, BLOCK/);
  });
});
