import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, type TestContext, test } from 'node:test';
import {
  createApp,
  createReadiness,
  type HttpConfig,
  type OpenedCache,
  openCache,
  registerHealthRoutes,
} from '../src/index.ts';
import { startTcpProxy, throughProxy, waitUntil } from '../src/testing.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;

const baseHttp: HttpConfig = {
  maxRequestSizeBytes: 1024 * 1024,
  corsAllowedOrigins: [],
  securityHeadersEnabled: true,
  rateLimitMax: 5,
  rateLimitWindowMs: 60_000,
  trustProxy: false,
};

/** Collects the JSON log lines of an app, and what reaches stderr meanwhile. */
function captureLogs(t: TestContext) {
  const lines: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    lines.push(String(chunk));
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  t.after(() => {
    process.stderr.write = write;
  });
  return { stream, lines };
}

/** An app on `opened` with a rate limit of 5 per minute per `x-client`, a cache route and the probe pair. */
async function appWith(t: TestContext, name: string, opened: OpenedCache, logStream?: NodeJS.WritableStream) {
  const app = await createApp({
    name,
    version: '1',
    description: '',
    http: baseHttp,
    logLevel: 'info',
    redis: opened.redis,
    rateLimitKey: (request) => String(request.headers['x-client'] ?? 'anonymous'),
    logStream: logStream ?? new PassThrough().resume(),
  });
  app.get('/cached', async () => ({ value: (await opened.cache.get<number>('counter')) ?? null }));
  const readiness = createReadiness();
  readiness.add('cache', () => opened.cache.ping());
  registerHealthRoutes(app, readiness);
  await app.ready();
  t.after(async () => {
    await app.close();
    await opened.close();
  });
  return {
    app,
    hit: async (client: string) =>
      (await app.inject({ method: 'GET', url: '/cached', headers: { 'x-client': client } })).statusCode,
    ready: async () => (await app.inject({ method: 'GET', url: '/ready' })).body,
  };
}

describe('Redis unreachable at start-up', () => {
  test('one warning naming REDIS_URL, no crash; subscribe resolves, the cache serves from memory, ready says cache unreachable', async (t) => {
    const logs = captureLogs(t);
    const opened = openCache({ redisUrl: 'redis://user:secret-password@127.0.0.1:1/0', service: 'down' });
    const { hit, ready } = await appWith(t, 'down', opened, logs.stream);
    await opened.cache.subscribe('invalidate', () => undefined);
    await opened.cache.set('counter', 7, 60_000);
    assert.equal(await opened.cache.get('counter'), 7);
    assert.equal(await hit('a'), 200);
    assert.equal(await ready(), 'NOT READY: cache unreachable');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // several reconnection attempts
    const warnings = logs.lines.filter((line) => line.includes('REDIS_URL'));
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /REDIS_URL: Redis at 127\.0\.0\.1:1 is unreachable \(ECONNREFUSED\)/);
    assert.equal(warnings[0]!.includes('secret-password'), false);
  });

  test('rate limits apply in process while Redis is unreachable, without waiting for it', async (t) => {
    const opened = openCache({ redisUrl: 'redis://127.0.0.1:1', service: 'down-limits' });
    const { hit } = await appWith(t, 'down-limits', opened);
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 6; i++) statuses.push(await hit('same-client'));
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
    assert.ok(Date.now() - started < 1000, 'no request waited for Redis');
  });
});

if (REDIS_URL) {
  describe('Redis lost and back at run time (a TCP proxy in front of the shared server)', () => {
    test('fast local fallback with one warning, local rate limits, then shared limits and invalidations again', async (t) => {
      const target = new URL(REDIS_URL);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      t.after(() => proxy.close());
      const url = throughProxy(REDIS_URL, proxy);
      const name = `fault-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const logs = captureLogs(t);
      const openedA = openCache({ redisUrl: url, service: name });
      const openedB = openCache({ redisUrl: url, service: name });
      const a = await appWith(t, name, openedA, logs.stream);
      const b = await appWith(t, name, openedB);
      await waitUntil(async () => (await a.ready()) === 'READY' && (await b.ready()) === 'READY');
      const heardByB: string[] = [];
      await openedB.cache.subscribe('invalidate', (message) => heardByB.push(message));
      await new Promise((resolve) => setTimeout(resolve, 100));

      // Shared: the budget of one client is counted across both instances; B hears A's invalidation.
      const shared = [await a.hit('c1'), await b.hit('c1'), await a.hit('c1'), await b.hit('c1'), await a.hit('c1')];
      assert.deepEqual([...shared, await b.hit('c1')], [200, 200, 200, 200, 200, 429]);
      await openedA.cache.publish('invalidate', 'before');
      await waitUntil(() => heardByB.includes('before'), 3000);

      proxy.cut();
      await waitUntil(async () => (await a.ready()) === 'NOT READY: cache unreachable', 5000);
      const timings: number[] = [];
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        const started = performance.now();
        statuses.push(await a.hit(`outage-${i % 3}`));
        timings.push(performance.now() - started);
      }
      timings.sort((x, y) => x - y);
      const p50 = timings[Math.floor(timings.length / 2)]!;
      assert.ok(p50 < 50, `p50 ${p50.toFixed(1)} ms`);
      assert.ok(timings.at(-1)! < 600, `slowest ${timings.at(-1)!.toFixed(1)} ms`);
      // Ten requests per client against a limit of five: the limit still applies, in this process.
      assert.equal(statuses.filter((status) => status === 429).length, 15);
      await openedA.cache.set('counter', 3, 60_000);
      assert.equal(await openedA.cache.get('counter'), 3, 'the in-process fallback serves while Redis is away');
      const warnings = logs.lines.filter((line) => line.includes('is unreachable'));
      assert.equal(warnings.length, 1, `one warning per outage:\n${warnings.join('\n')}`);

      proxy.restore();
      await waitUntil(async () => (await a.ready()) === 'READY' && (await b.ready()) === 'READY', 8000);
      assert.ok(logs.lines.some((line) => line.includes('Redis answers again')));
      await waitUntil(() => heardByB.includes('*'), 3000); // B drops what it may have missed
      // Shared again: a fresh client's budget spans both instances, and B hears A after re-subscribing.
      const again = [await a.hit('c2'), await b.hit('c2'), await a.hit('c2'), await b.hit('c2'), await a.hit('c2')];
      assert.deepEqual([...again, await b.hit('c2')], [200, 200, 200, 200, 200, 429]);
      await openedA.cache.publish('invalidate', 'after');
      await waitUntil(() => heardByB.includes('after'), 3000);
      assert.equal(await openedA.cache.get('counter'), undefined, 'the in-process fallback is dropped on recovery');
    });
  });
}
