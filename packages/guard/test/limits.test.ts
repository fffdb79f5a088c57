import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildGuard, detect, testDatabaseTargets } from './helper.ts';

const [target] = testDatabaseTargets();

describe('limits and headers', () => {
  test('MAX_REQUEST_SIZE_BYTES: a larger body is a 413 with the error body', async (t) => {
    const { app } = await buildGuard(t, target!, { MAX_REQUEST_SIZE_BYTES: '2048' });
    const response = await app.inject({ method: 'POST', url: '/detect', payload: { text: 'x'.repeat(4000) } });
    assert.equal(response.statusCode, 413);
    assert.equal(response.json().error.code, 'PAYLOAD_TOO_LARGE');
    assert.equal((await detect(app, { text: 'small' })).status, 200);
  });

  test('the rate limit answers 429 with a JSON body and Retry-After', async (t) => {
    const { app } = await buildGuard(t, target!, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' });
    for (let i = 0; i < 3; i++) assert.equal((await detect(app, { text: 'x' })).status, 200);
    const limited = await detect(app, { text: 'x' });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.equal(
      (await app.inject({ method: 'GET', url: '/healthz' })).statusCode,
      200,
      'health checks are not rate limited',
    );
  });

  test('with auth on, each token has its own rate-limit bucket', async (t) => {
    const { app } = await buildGuard(t, target!, {
      RATE_LIMIT_MAX: '2',
      AUTH_ENABLED: 'true',
      AUTH_TOKEN_PERMISSIONS: 'a=detect:read,b=detect:read',
    });
    const call = (token: string) => detect(app, { text: 'x' }, { authorization: `Bearer ${token}` });
    assert.deepEqual([(await call('a')).status, (await call('a')).status, (await call('a')).status], [200, 200, 429]);
    assert.equal((await call('b')).status, 200);
  });

  test('CORS_ALLOWED_ORIGINS empty denies; a listed origin is allowed', async (t) => {
    const preflight = {
      method: 'OPTIONS' as const,
      url: '/detect',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    };
    const deny = await buildGuard(t, target!);
    assert.equal((await deny.app.inject(preflight)).headers['access-control-allow-origin'], undefined);
    const allow = await buildGuard(t, target!, { CORS_ALLOWED_ORIGINS: 'https://app.example' });
    assert.equal((await allow.app.inject(preflight)).headers['access-control-allow-origin'], 'https://app.example');
  });

  test('SECURITY_HEADERS_ENABLED: on by default, off when false', async (t) => {
    const on = await buildGuard(t, target!);
    assert.equal((await detect(on.app, { text: 'x' })).headers['x-content-type-options'], 'nosniff');
    const off = await buildGuard(t, target!, { SECURITY_HEADERS_ENABLED: 'false' });
    assert.equal((await detect(off.app, { text: 'x' })).headers['x-content-type-options'], undefined);
  });

  test('a /detect that outlives its time limit is a 503, not a hang', async (t) => {
    const { app } = await buildGuard(t, target!, { DETECT_TIMEOUT_MS: '100' });
    // Linear-time patterns still take real time over megabytes: ten of these need seconds, the limit is 100 ms.
    for (let i = 0; i < 10; i++) {
      const created = await app.inject({
        method: 'POST',
        url: '/patterns',
        payload: { Name: `SLOW_${i}`, Regex: `[a-j]{${3 + i},}[0-9]` },
      });
      assert.equal(created.statusCode, 201);
    }
    const started = performance.now();
    const { status, body } = await detect(app, { text: 'abcdefghij '.repeat(200_000) });
    assert.equal(status, 503);
    assert.equal(body.error.code, 'GUARD_DETECT_TIMEOUT');
    assert.ok(performance.now() - started < 5000);
  });
});
