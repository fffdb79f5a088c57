import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { createMemoryCache, createOutboxWorker, openDatabase } from '@keel/core';
import { faultDatabaseBehindProxy, startLoad, waitUntil } from '@keel/core/testing';
import { buildEngineApps, prepareEngineDatabase } from '../src/app.ts';
import { bootstrapMerchant } from '../src/cli/bootstrap.ts';
import { readEngineConfig } from '../src/config.ts';
import type { EngineDb } from '../src/db/schema.ts';
import { product, SECRET_KEY, startReceiver } from './helper.ts';

const BASE_URL = process.env.TEST_DATABASE_URL;

/**
 * The engine as `keel start engine` wires it (three listeners and the delivery worker) over a throwaway
 * PostgreSQL database reached through a TCP proxy.
 */
async function engineOverProxy(t: TestContext, baseUrl: string) {
  const { fault, proxy, url, defer } = await faultDatabaseBehindProxy(t, baseUrl);
  const database = await openDatabase<EngineDb>({ url, schema: 'engine', onConnectionLost: () => undefined });
  defer(() => database.close());
  await prepareEngineDatabase(database.db);
  const config = readEngineConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '1000000',
    KEEL_ALLOW_PRIVATE_URLS: 'true',
  });
  const engine = await buildEngineApps({
    config,
    db: database.db,
    cache: createMemoryCache(),
    secretKeyHex: SECRET_KEY,
  });
  const worker = createOutboxWorker({
    db: database.db,
    allowPrivate: true,
    retryScheduleMs: [100, 200, 400],
    pollIntervalMs: 50,
    resolveTarget: (message) => engine.ctx.destinations.resolve(message.target),
  });
  engine.ctx.notifyOutbox = () => worker.notify();
  engine.readiness.add('webhook-worker', () => worker.check());
  worker.start();
  defer(() => worker.stop());
  defer(() => engine.close());
  const bases: Record<'rest' | 'mcp' | 'webhook', string> = { rest: '', mcp: '', webhook: '' };
  for (const name of ['rest', 'mcp', 'webhook'] as const) {
    await engine[name].listen({ host: '127.0.0.1', port: 0 });
    bases[name] = `http://127.0.0.1:${(engine[name].server.address() as AddressInfo).port}`;
  }
  const boot = await bootstrapMerchant(database.db, engine.ctx.principals);
  const call = async (method: string, path: string, body?: unknown, listener: keyof typeof bases = 'rest') => {
    const response = await fetch(bases[listener] + path, {
      method,
      headers: {
        authorization: `Bearer ${boot.keys.merchant}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, text, json: () => JSON.parse(text) };
  };
  const store = boot.storeIds[0]!;
  const receiver = await startReceiver(t);
  const destination = await call('POST', '/api/v1/catalog/webhooks/destinations', {
    url: receiver.url,
    events: ['product.created'],
  });
  assert.equal(destination.status, 201, destination.text);
  /** Creates a product and waits until its product.created webhook has arrived. */
  const deliveredAfterCreate = async () => {
    const created = await call('POST', '/api/v1/catalog/products', product(store));
    assert.equal(created.status, 201, created.text);
    const id = created.json().id;
    await waitUntil(() => receiver.received.some((r) => JSON.stringify(r.body).includes(id)), 35_000);
  };
  return { fault, proxy, call, deliveredAfterCreate };
}

const LISTENERS = ['rest', 'mcp', 'webhook'] as const;

if (BASE_URL) {
  describe('engine survives a lost PostgreSQL connection', () => {
    test('every backend terminated under load: no crash, no 500, 2xx again within seconds; deliveries go on', async (t) => {
      const { fault, call, deliveredAfterCreate } = await engineOverProxy(t, BASE_URL);
      await deliveredAfterCreate();
      const reads = startLoad(async () => (await call('GET', '/api/v1/catalog/products?q=shoe&limit=5')).status, 6);
      const writes = startLoad(async () => (await call('POST', '/api/v1/catalog/products', product('x'))).status, 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.ok((await fault.terminateBackends()) > 0);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await fault.terminateBackends();
      const recovered = await waitUntil(
        async () => (await call('GET', '/api/v1/catalog/products?q=shoe&limit=5')).status === 200,
        5000,
      );
      const statuses = [...(await reads.stop()), ...(await writes.stop())];
      // Writes to an unknown store are a 403/404 in normal operation; never a 500 or a dropped connection.
      assert.deepEqual(
        [...new Set(statuses)].filter((status) => status >= 500 && status !== 503),
        [],
        `no 5xx other than 503: ${[...new Set(statuses)].join(',')}`,
      );
      assert.equal(statuses.includes(0), false, 'every request was answered');
      assert.ok(recovered < 5000);
      await deliveredAfterCreate();
    });

    test('restart-style: every listener is not ready and requests are 503 while it refuses connections, then all resume', async (t) => {
      const { proxy, call, deliveredAfterCreate } = await engineOverProxy(t, BASE_URL);
      for (const listener of LISTENERS) assert.equal((await call('GET', '/ready', undefined, listener)).text, 'READY');
      assert.deepEqual((await call('GET', '/api/v1/ready')).json(), { status: 'ready' });

      proxy.cut();
      await waitUntil(async () => (await call('GET', '/ready')).text.includes('webhook-worker failing'), 5000);
      for (const listener of LISTENERS) {
        const ready = await call('GET', '/ready', undefined, listener);
        assert.equal(ready.status, 503);
        assert.match(ready.text, /^NOT READY: database unreachable/);
        assert.equal((await call('GET', '/healthz', undefined, listener)).text, 'UP');
      }
      const json = await call('GET', '/api/v1/ready');
      assert.equal(json.status, 503);
      assert.deepEqual(json.json().unavailable, ['database', 'webhook-worker']);
      const refused = await call('GET', '/api/v1/catalog/products?q=shoe&limit=5');
      assert.equal(refused.status, 503);
      assert.equal(refused.json().error.code, 'DATABASE_UNAVAILABLE');

      proxy.restore();
      await waitUntil(async () => (await call('GET', '/ready')).status === 200, 35_000);
      assert.equal((await call('GET', '/api/v1/catalog/products?q=shoe&limit=5')).status, 200);
      await deliveredAfterCreate();
    });
  });
}
