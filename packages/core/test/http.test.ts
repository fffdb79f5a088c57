import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { Type } from 'typebox';
import { connectRedis } from '../src/cache/redis-cache.ts';
import { type App, AppError, CoreErrors, createApp, type HttpConfig, idForLog } from '../src/index.ts';

const baseHttp: HttpConfig = {
  maxRequestSizeBytes: 2048,
  corsAllowedOrigins: [],
  securityHeadersEnabled: true,
  rateLimitMax: 1000,
  rateLimitWindowMs: 60_000,
};

async function buildTestApp(
  http: Partial<HttpConfig> = {},
  extra: { redis?: ReturnType<typeof connectRedis>; logStream?: NodeJS.WritableStream } = {},
): Promise<App> {
  const app = await createApp({
    name: 'test',
    version: '1',
    description: 'test app',
    http: { ...baseHttp, ...http },
    logLevel: extra.logStream ? 'info' : 'silent',
    redis: extra.redis,
    logStream: extra.logStream,
  });
  app.post(
    '/echo',
    { schema: { body: Type.Object({ n: Type.Integer() }), response: { 200: Type.Object({ n: Type.Integer() }) } } },
    async (request) => ({ n: request.body.n }),
  );
  app.get(
    '/items',
    { schema: { querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 5 }) }) } },
    async (r) => ({ limit: r.query.limit }),
  );
  app.get('/things/:name', async (request) => ({ length: (request.params as { name: string }).name.length }));
  app.get('/conflict', async () => {
    throw CoreErrors.conflict('already there');
  });
  app.get('/boom', async () => {
    throw new Error('secret internals at /src/x.ts:1');
  });
  app.get('/custom', async () => {
    throw new AppError('TEAPOT_ISH', 'custom', 422, { details: [{ path: 'a', message: 'b' }] });
  });
  await app.ready();
  return app;
}

describe('createApp', () => {
  test('every response carries x-request-id, and every error body carries the same id', async (t) => {
    const app = await buildTestApp();
    t.after(() => app.close());
    const ok = await app.inject({ method: 'POST', url: '/echo', payload: { n: 1 } });
    assert.equal(ok.statusCode, 200);
    assert.match(String(ok.headers['x-request-id']), /^[0-9a-f]{32}$/);
    const error = await app.inject({ method: 'GET', url: '/conflict' });
    assert.equal(error.statusCode, 409);
    assert.deepEqual(error.json(), {
      error: { code: 'CONFLICT', message: 'already there', traceId: error.headers['x-request-id'] },
    });
  });

  test('a safe incoming x-request-id is kept; an unsafe one is replaced', async (t) => {
    const app = await buildTestApp();
    t.after(() => app.close());
    const kept = await app.inject({ method: 'GET', url: '/conflict', headers: { 'x-request-id': 'trace-123' } });
    assert.equal(kept.headers['x-request-id'], 'trace-123');
    assert.equal(kept.json().error.traceId, 'trace-123');
    const replaced = await app.inject({
      method: 'GET',
      url: '/conflict',
      headers: { 'x-request-id': 'bad\tvalue <script>' },
    });
    assert.notEqual(replaced.headers['x-request-id'], 'bad\tvalue <script>');
  });

  test('a 5xx says only Internal Server Error and never leaks internals', async (t) => {
    const app = await buildTestApp();
    t.after(() => app.close());
    const response = await app.inject({ method: 'GET', url: '/boom' });
    assert.equal(response.statusCode, 500);
    assert.deepEqual(response.json().error.message, 'Internal Server Error');
    assert.doesNotMatch(response.body, /secret internals|src\/x\.ts/);
  });

  test('validation errors are 400 with details; unknown routes 404; AppError details pass through', async (t) => {
    const app = await buildTestApp();
    t.after(() => app.close());
    const invalid = await app.inject({ method: 'POST', url: '/echo', payload: { n: 'x' } });
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().error.code, 'VALIDATION_FAILED');
    assert.ok(invalid.json().error.details.length > 0);
    const coerced = await app.inject({ method: 'POST', url: '/echo', payload: { n: '1' } });
    assert.equal(coerced.statusCode, 400, 'JSON bodies are not coerced');
    const query = await app.inject({ method: 'GET', url: '/items?limit=3' });
    assert.deepEqual(query.json(), { limit: 3 }, 'query strings are coerced to the declared type');
    const outOfRange = await app.inject({ method: 'GET', url: '/items?limit=9' });
    assert.equal(outOfRange.statusCode, 400);
    const missing = await app.inject({ method: 'GET', url: '/nope' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error.code, 'ROUTE_NOT_FOUND');
    const custom = await app.inject({ method: 'GET', url: '/custom' });
    assert.deepEqual(custom.json().error.details, [{ path: 'a', message: 'b' }]);
  });

  test('a NUL character in a body, query or path is a 400 naming where, unless the route opts in', async (t) => {
    const app = await createApp({ name: 'nul', version: '1', description: 'nul', http: baseHttp, logLevel: 'silent' });
    t.after(() => app.close());
    app.post('/echo', async (request) => request.body);
    app.get('/items', async (request) => request.query);
    app.post('/read-only', { config: { acceptsNul: true } }, async (request) => ({ ok: typeof request.body }));
    const body = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"n": 1, "tags": ["a", "b\\u0000c"]}',
    });
    assert.equal(body.statusCode, 400);
    assert.equal(body.json().error.code, 'VALIDATION_FAILED');
    assert.match(body.json().error.message, /body \/tags\/1: text must not contain the NUL character/);
    const escaped = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"n": 2, "note": "a backslash then u0000: \\\\u0000"}',
    });
    assert.equal(escaped.statusCode, 200, 'an escaped backslash followed by u0000 is ordinary text');
    const query = await app.inject({ method: 'GET', url: '/items?limit=1&q=a%00b' });
    assert.equal(query.statusCode, 400);
    assert.match(query.json().error.message, /querystring \/q/);
    const allowed = await app.inject({
      method: 'POST',
      url: '/read-only',
      headers: { 'content-type': 'application/json' },
      payload: '{"text": "a\\u0000b"}',
    });
    assert.equal(allowed.statusCode, 200);
    const deep = await app.inject({
      method: 'POST',
      url: '/read-only',
      headers: { 'content-type': 'application/json' },
      payload: `${'['.repeat(1000)}${']'.repeat(1000)}`,
    });
    assert.equal(deep.statusCode, 400, 'deep nesting is refused on every route');
    assert.match(deep.json().error.message, /nested more than 64 levels/);
  });

  test('invalid JSON is a 400 that does not echo the parser', async (t) => {
    const app = await buildTestApp();
    t.after(() => app.close());
    const response = await app.inject({
      method: 'POST',
      url: '/echo',
      payload: '{"n": 1,',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().error.code, 'INVALID_JSON');
  });

  test('write requests without Content-Type application/json get 415', async (t) => {
    const app = await buildTestApp();
    t.after(() => app.close());
    const text = await app.inject({
      method: 'POST',
      url: '/echo',
      payload: '{"n":1}',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(text.statusCode, 415);
    assert.equal(text.json().error.code, 'UNSUPPORTED_MEDIA_TYPE');
    const none = await app.inject({ method: 'POST', url: '/echo' });
    assert.equal(none.statusCode, 415);
    const withCharset = await app.inject({
      method: 'POST',
      url: '/echo',
      payload: '{"n":1}',
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
    });
    assert.equal(withCharset.statusCode, 200);
  });

  test('a body over the limit is a 413', async (t) => {
    const app = await buildTestApp();
    t.after(() => app.close());
    const response = await app.inject({
      method: 'POST',
      url: '/echo',
      payload: JSON.stringify({ n: 1, pad: 'x'.repeat(4096) }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.statusCode, 413);
    assert.equal(response.json().error.code, 'PAYLOAD_TOO_LARGE');
  });

  test('security headers are on by default and can be turned off', async (t) => {
    const on = await buildTestApp();
    const off = await buildTestApp({ securityHeadersEnabled: false });
    t.after(() => Promise.all([on.close(), off.close()]));
    const a = await on.inject({ method: 'GET', url: '/conflict' });
    assert.equal(a.headers['x-content-type-options'], 'nosniff');
    assert.equal(a.headers['x-frame-options'], 'DENY');
    assert.match(String(a.headers['content-security-policy']), /default-src 'none'/);
    const b = await off.inject({ method: 'GET', url: '/conflict' });
    assert.equal(b.headers['x-content-type-options'], undefined);
  });

  test('CORS is denied by default and allowed for listed origins only', async (t) => {
    const deny = await buildTestApp();
    const allow = await buildTestApp({ corsAllowedOrigins: ['https://shop.example'] });
    t.after(() => Promise.all([deny.close(), allow.close()]));
    const preflight = {
      method: 'OPTIONS' as const,
      url: '/echo',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    };
    const denied = await deny.inject(preflight);
    assert.equal(denied.headers['access-control-allow-origin'], undefined);
    const allowed = await allow.inject(preflight);
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://shop.example');
    const other = await allow.inject({
      ...preflight,
      headers: { ...preflight.headers, origin: 'https://evil.example' },
    });
    assert.equal(other.headers['access-control-allow-origin'], undefined);
  });

  test('X-Forwarded-For decides the client address only from a trusted proxy (TRUST_PROXY)', async (t) => {
    const seen = async (http: Partial<HttpConfig>) => {
      const app = await createApp({
        name: 'ip',
        version: '1',
        description: 'ip',
        http: { ...baseHttp, ...http },
        logLevel: 'silent',
      });
      t.after(() => app.close());
      app.get('/ip', async (request) => ({ ip: request.ip }));
      const response = await app.inject({
        url: '/ip',
        remoteAddress: '10.1.2.3',
        headers: { 'x-forwarded-for': '203.0.113.7' },
      });
      return response.json().ip as string;
    };
    assert.equal(await seen({}), '10.1.2.3', 'untrusted: a client cannot pick its own address');
    assert.equal(await seen({ trustProxy: ['10.0.0.0/8'] }), '203.0.113.7');
    assert.equal(await seen({ trustProxy: ['192.168.0.0/16'] }), '10.1.2.3', 'a proxy outside the list is not trusted');
    assert.equal(await seen({ trustProxy: 1 }), '203.0.113.7');
  });

  test('rate limiting answers 429 with Retry-After and the JSON error body', async (t) => {
    const app = await buildTestApp({ rateLimitMax: 2 });
    t.after(() => app.close());
    for (let i = 0; i < 2; i++) assert.equal((await app.inject({ method: 'GET', url: '/conflict' })).statusCode, 409);
    const limited = await app.inject({ method: 'GET', url: '/conflict' });
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(limited.json().error.code, 'RATE_LIMITED');
    assert.equal(limited.json().error.traceId, limited.headers['x-request-id']);
  });

  test('rate-limit counters are shared through Redis when it is configured', {
    skip: !process.env.TEST_REDIS_URL && 'TEST_REDIS_URL not set',
  }, async (t) => {
    const redisA = connectRedis(process.env.TEST_REDIS_URL!);
    const redisB = connectRedis(process.env.TEST_REDIS_URL!);
    const name = `rl-${Date.now()}-${Math.random()}`;
    const a = await createApp({
      name,
      version: '1',
      description: '',
      http: { ...baseHttp, rateLimitMax: 3 },
      logLevel: 'silent',
      redis: redisA,
    });
    const b = await createApp({
      name,
      version: '1',
      description: '',
      http: { ...baseHttp, rateLimitMax: 3 },
      logLevel: 'silent',
      redis: redisB,
    });
    for (const app of [a, b]) app.get('/x', async () => ({ ok: true }));
    t.after(async () => {
      await Promise.all([a.close(), b.close()]);
      redisA.disconnect();
      redisB.disconnect();
    });
    // Until a client is connected, limits are counted in process (commands never wait for a connection).
    await Promise.all([redisA, redisB].map((redis) => (redis.status === 'ready' ? undefined : once(redis, 'ready'))));
    const statuses = [];
    for (const app of [a, b, a, b]) statuses.push((await app.inject({ method: 'GET', url: '/x' })).statusCode);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
  });

  test('OpenAPI 3.1 is served at /openapi.json and a docs page at /docs', async (t) => {
    const app = await buildTestApp();
    t.after(() => app.close());
    const spec = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(spec.statusCode, 200);
    assert.equal(spec.json().openapi, '3.1.0');
    assert.ok(spec.json().paths['/echo'].post);
    const docs = await app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(docs.statusCode, 200);
    assert.match(docs.headers['content-type'] as string, /text\/html/);
  });

  test('request logs name the route, never a path segment or the query string', async (t) => {
    const stream = new PassThrough();
    const lines: string[] = [];
    stream.on('data', (chunk) => lines.push(...String(chunk).split('\n').filter(Boolean)));
    const app = await buildTestApp({}, { logStream: stream });
    t.after(() => app.close());
    await app.inject({ method: 'GET', url: '/items?limit=3&email=someone@example.com' });
    const completed = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request completed');
    assert.equal(completed.route, '/items');
    assert.equal(completed.path, undefined);
    assert.doesNotMatch(lines.join('\n'), /someone@example\.com/);
  });

  test('a secret in a path segment, matched or not, never reaches the request log', async (t) => {
    const stream = new PassThrough();
    const lines: string[] = [];
    stream.on('data', (chunk) => lines.push(...String(chunk).split('\n').filter(Boolean)));
    const app = await buildTestApp({}, { logStream: stream });
    t.after(() => app.close());
    const secret = 'sk-live-PATHSECRET7731q8w9';
    assert.equal((await app.inject({ method: 'GET', url: `/things/${secret}` })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: `/nowhere/${secret}/x` })).statusCode, 404);
    const completed = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request completed');
    assert.deepEqual(
      completed.map((l) => l.route),
      ['/things/:name', '(unmatched)'],
    );
    assert.ok(!lines.join('\n').includes('PATHSECRET'), 'the segment is not logged');
  });

  test('idForLog hides a client-chosen id behind a short SHA-256 prefix', () => {
    assert.equal(idForLog('abc'), 'sha256:ba7816bf8f01cfea');
    assert.ok(!idForLog('sk-live-secret').includes('secret'));
  });
});
