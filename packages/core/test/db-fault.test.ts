import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { toAppError } from '../src/http/error-handler.ts';
import {
  ConfigReader,
  createApp,
  createMemoryCache,
  createOutboxTables,
  createOutboxWorker,
  createServiceReadiness,
  enqueueOutbox,
  isDatabaseUnavailable,
  OUTBOX_TABLE,
  type OutboxDb,
  openDatabase,
  readHttpConfig,
  registerHealthRoutes,
} from '../src/index.ts';
import { createFaultDatabase, startTcpProxy, throughProxy } from '../src/testing.ts';

const BASE_URL = process.env.TEST_DATABASE_URL;

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 8000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

describe('connection-loss errors', () => {
  test('lost, refused and reset connections are recognised; query errors are not', () => {
    for (const error of [
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      Object.assign(new Error('protocol violation'), { code: '08P01' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], 'connect failed'),
      new Error('wrapped', { cause: Object.assign(new Error('inner'), { code: '57P01' }) }),
    ]) {
      assert.equal(isDatabaseUnavailable(error), true, String(error));
    }
    for (const error of [
      Object.assign(new Error('duplicate key'), { code: '23505' }),
      Object.assign(new Error('syntax error'), { code: '42601' }),
      new Error('SQLITE_CONSTRAINT'),
      undefined,
      'Connection terminated',
    ]) {
      assert.equal(isDatabaseUnavailable(error), false, String(error));
    }
  });

  test('the HTTP error mapping answers 503 DATABASE_UNAVAILABLE with Retry-After, never a 500', () => {
    const mapped = toAppError(
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      1000,
    );
    assert.equal(mapped.statusCode, 503);
    assert.equal(mapped.code, 'DATABASE_UNAVAILABLE');
    assert.deepEqual(mapped.headers, { 'retry-after': '1' });
    assert.equal(toAppError(new Error('Connection terminated unexpectedly'), 1000).statusCode, 503);
  });
});

async function faultDatabase(t: TestContext, baseUrl: string) {
  const fault = await createFaultDatabase(baseUrl);
  t.after(() => fault.drop());
  return fault;
}

/** An app with one database route and the probe pair, listening on 127.0.0.1. */
async function appOn(t: TestContext, url: string) {
  const database = await openDatabase({ url, schema: 'core_fault', onConnectionLost: () => undefined });
  const app = await createApp({
    name: 'fault',
    version: '1',
    description: 'fault test',
    http: readHttpConfig(new ConfigReader({ RATE_LIMIT_MAX: '1000000' })),
    logLevel: 'silent',
  });
  app.get('/now', async () => {
    const { rows } = await sql<{ n: number }>`select 1 as n`.execute(database.db);
    return { n: rows[0]?.n };
  });
  registerHealthRoutes(app, createServiceReadiness({ db: database.db, cache: createMemoryCache() }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await app.close();
    await database.close();
  });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const get = async (path: string) => {
    const response = await fetch(base + path);
    return { status: response.status, text: await response.text(), headers: response.headers };
  };
  return { database, app, get };
}

if (BASE_URL) {
  describe('PostgreSQL connection loss (a throwaway database)', () => {
    test('terminating every backend under load: nothing crashes, no 500, 2xx again within seconds', async (t) => {
      const fault = await faultDatabase(t, BASE_URL);
      const { get } = await appOn(t, fault.url);
      const statuses: number[] = [];
      let running = true;
      const load = Array.from({ length: 8 }, async () => {
        while (running) statuses.push((await get('/now')).status);
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.ok((await fault.terminateBackends()) > 0, 'the pool had backends to terminate');
      const terminatedAt = statuses.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
      await fault.terminateBackends();
      const recovered = await until(async () => (await get('/now')).status === 200, 5000);
      running = false;
      await Promise.all(load);
      assert.ok(statuses.length > terminatedAt, 'requests kept being answered');
      assert.deepEqual(
        [...new Set(statuses)].filter((status) => status !== 200 && status !== 503),
        [],
      );
      assert.ok(recovered < 5000);
      assert.equal((await get('/ready')).status, 200);
    });

    test('waiting for a busy pool longer than the connect bound is no failure (a burst under load queues)', async (t) => {
      const fault = await faultDatabase(t, BASE_URL);
      const database = await openDatabase({ url: fault.url, schema: 'core_fault', poolSize: 1 });
      t.after(() => database.close());
      // The only connection is held for 5.5 s, past the 5 s bound on connecting; the second query waits its turn.
      const holder = sql`select pg_sleep(5.5)`.execute(database.db);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { rows } = await sql<{ n: number }>`select 1 as n`.execute(database.db);
      assert.equal(rows[0]?.n, 1);
      await holder;
    });

    test('a query in flight when its backend is terminated fails with a connection-loss error; the pool reconnects', async (t) => {
      const fault = await faultDatabase(t, BASE_URL);
      const database = await openDatabase({ url: fault.url, schema: 'core_fault', onConnectionLost: () => undefined });
      t.after(() => database.close());
      const slow = sql`select pg_sleep(5)`.execute(database.db).then(
        () => undefined,
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      await fault.terminateBackends();
      const error = await slow;
      assert.ok(error, 'the query failed');
      assert.equal(isDatabaseUnavailable(error), true);
      const { rows } = await sql<{ n: number }>`select 2 as n`.execute(database.db);
      assert.equal(rows[0]?.n, 2);
    });

    test('restart-style: while the database refuses connections /ready and requests are 503, then 200 again', async (t) => {
      const fault = await faultDatabase(t, BASE_URL);
      const target = new URL(BASE_URL);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      t.after(() => proxy.close());
      const { get } = await appOn(t, throughProxy(fault.url, proxy));
      assert.equal((await get('/now')).status, 200);
      assert.equal((await get('/ready')).status, 200);

      proxy.cut();
      await until(async () => (await get('/ready')).status === 503, 5000);
      const ready = await get('/ready');
      assert.equal(ready.text, 'NOT READY: database unreachable');
      const refused = await get('/now');
      assert.equal(refused.status, 503);
      assert.equal(JSON.parse(refused.text).error.code, 'DATABASE_UNAVAILABLE');
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.equal((await get('/healthz')).status, 200, 'liveness does not depend on the database');

      proxy.restore();
      await until(async () => (await get('/ready')).status === 200, 5000);
      assert.equal((await get('/now')).status, 200);
    });

    test('the outbox worker backs off while the database is away, reports it, and delivers once it returns', async (t) => {
      const fault = await faultDatabase(t, BASE_URL);
      const target = new URL(BASE_URL);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      t.after(() => proxy.close());
      const database = await openDatabase<OutboxDb>({
        url: throughProxy(fault.url, proxy),
        schema: 'core_fault',
        onConnectionLost: () => undefined,
      });
      t.after(() => database.close());
      await createOutboxTables(database.db);
      const received: string[] = [];
      const server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          received.push(String(req.headers['webhook-id']));
          res.end('ok');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      t.after(() => {
        server.closeAllConnections();
        server.close();
      });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const logged: string[] = [];
      const log = (message: string) => logged.push(message);
      const worker = createOutboxWorker({
        db: database.db,
        allowPrivate: true,
        pollIntervalMs: 50,
        resolveTarget: async () => ({ url }),
        logger: { info: (_o, m) => log(m), warn: (_o, m) => log(m), error: (_o, m) => log(m) },
      });
      worker.start();
      t.after(() => worker.stop());
      assert.equal(worker.check(), true);

      proxy.cut();
      await until(() => worker.check() !== true, 5000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(
        logged.filter((m) => m.includes('unreachable')).length,
        1,
        `one warning per outage, not one per round: ${logged.join(' | ')}`,
      );

      proxy.restore();
      const [id] = await until(async () => {
        try {
          await sql`select 1`.execute(database.db);
          return true;
        } catch {
          return false;
        }
      }).then(() => enqueueOutbox(database.db, [{ target: 'd', topic: 't', payload: '{}' }]));
      worker.notify();
      await until(() => received.includes(id!), 35_000);
      await until(() => worker.check() === true, 5000);
      assert.ok(logged.some((m) => m.includes('resumed')));
      const row = await database.db.selectFrom(OUTBOX_TABLE).select('status').where('id', '=', id!).executeTakeFirst();
      await until(async () => {
        const current = await database.db
          .selectFrom(OUTBOX_TABLE)
          .select('status')
          .where('id', '=', id!)
          .executeTakeFirst();
        return current?.status === 'delivered';
      });
      assert.ok(row);
    });
  });
}
