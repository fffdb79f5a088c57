import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { createMemoryCache, createSecretBox, openDatabase } from '@keel/core';
import { faultDatabaseBehindProxy, startLoad, waitUntil } from '@keel/core/testing';
import { buildGeoApp, prepareGeoDatabase } from '../src/app.ts';
import { readGeoConfig } from '../src/config.ts';
import type { GeoDb } from '../src/db/schema.ts';
import { bootstrapTenant } from '../src/tenancy/tenancy-service.ts';

const BASE_URL = process.env.TEST_DATABASE_URL;

/** Geo (with its worker) listening on 127.0.0.1 over a throwaway PostgreSQL database reached through a TCP proxy. */
async function geoOverProxy(t: TestContext, baseUrl: string) {
  const { fault, proxy, url, defer } = await faultDatabaseBehindProxy(t, baseUrl);
  const database = await openDatabase<GeoDb>({ url, schema: 'geo', onConnectionLost: () => undefined });
  defer(() => database.close());
  await prepareGeoDatabase(database.db);
  const config = readGeoConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000', GEO_WORKER_INTERVAL_MS: '50' });
  const secrets = createSecretBox(randomBytes(32).toString('hex'));
  const { app } = await buildGeoApp({
    config,
    db: database.db,
    cache: createMemoryCache(),
    secrets,
    startWorker: true,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  defer(() => app.close());
  const tenant = await bootstrapTenant(database.db, secrets, 'Fault tenant');
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${tenant.keys.read}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, text, json: () => JSON.parse(text) };
  };
  const exportJob = () =>
    call('POST', '/api/v1/geo/exports', {
      workspaceId: tenant.workspaceId,
      source: 'dataset',
      dataset: 'campaigns',
      format: 'json',
    });
  // A ready export answers 200 with its bytes; 202 while it is pending or being generated.
  const exportIsReady = async (id: string) => (await call('GET', `/api/v1/geo/exports/${id}`)).status === 200;
  const list = () => call('GET', `/api/v1/geo/exports?workspaceId=${tenant.workspaceId}`);
  return { fault, proxy, call, list, exportJob, exportIsReady };
}

if (BASE_URL) {
  describe('geo survives a lost PostgreSQL connection', () => {
    test('every backend terminated under load: no crash, no 500, 2xx again within seconds; the worker goes on', async (t) => {
      const { fault, list, exportJob, exportIsReady } = await geoOverProxy(t, BASE_URL);
      assert.equal((await exportJob()).status, 202);
      // (A download already streaming when its connection dies can only be cut short: its 200 is already sent.)
      const load = startLoad(async () => (await list()).status);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.ok((await fault.terminateBackends()) > 0);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await fault.terminateBackends();
      const recovered = await waitUntil(async () => (await list()).status === 200, 5000);
      const statuses = await load.stop();
      assert.deepEqual(
        [...new Set(statuses)].filter((status) => !(status >= 200 && status < 300) && status !== 503),
        [],
        `only 2xx and 503: ${statuses.join(',')}`,
      );
      assert.ok(recovered < 5000);
      const second = await exportJob();
      assert.equal(second.status, 202);
      await waitUntil(() => exportIsReady(second.json().id), 35_000);
    });

    test('restart-style: /ready and requests are 503 while it refuses connections, then the service and its worker resume', async (t) => {
      const { proxy, call, list, exportJob, exportIsReady } = await geoOverProxy(t, BASE_URL);
      assert.equal((await call('GET', '/ready')).text, 'READY');
      assert.equal((await call('GET', '/healthz')).text, 'UP');

      proxy.cut();
      await waitUntil(async () => (await call('GET', '/ready')).text.includes('geo-worker failing'), 5000);
      assert.match((await call('GET', '/ready')).text, /^NOT READY: database unreachable/);
      const refused = await list();
      assert.equal(refused.status, 503);
      assert.equal(refused.json().error.code, 'DATABASE_UNAVAILABLE');

      proxy.restore();
      await waitUntil(async () => (await call('GET', '/ready')).status === 200, 35_000);
      assert.equal((await list()).status, 200);
      const job = await exportJob();
      assert.equal(job.status, 202);
      await waitUntil(() => exportIsReady(job.json().id), 35_000);
    });
  });
}
