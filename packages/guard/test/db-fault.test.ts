import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { createMemoryCache, openDatabase } from '@keel/core';
import { faultDatabaseBehindProxy, startLoad, waitUntil } from '@keel/core/testing';
import { buildGuardApp, prepareGuardDatabase } from '../src/app.ts';
import { readGuardConfig } from '../src/config.ts';
import type { GuardDb } from '../src/db/schema.ts';

const BASE_URL = process.env.TEST_DATABASE_URL;

/** Guard listening on 127.0.0.1 over a throwaway PostgreSQL database reached through a TCP proxy. */
async function guardOverProxy(t: TestContext, baseUrl: string) {
  const { fault, proxy, url, defer } = await faultDatabaseBehindProxy(t, baseUrl);
  const database = await openDatabase<GuardDb>({ url, schema: 'guard', onConnectionLost: () => undefined });
  defer(() => database.close());
  await prepareGuardDatabase(database.db);
  const config = readGuardConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000' });
  const { app } = await buildGuardApp({ config, db: database.db, cache: createMemoryCache() });
  await app.listen({ host: '127.0.0.1', port: 0 });
  defer(() => app.close());
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(base + path, {
      method,
      ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    return { status: response.status, text: await response.text() };
  };
  const auditCount = async (rid: string) =>
    Number(
      (
        await database.db
          .selectFrom('detect_audit')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('rid', '=', rid)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { fault, proxy, call, auditCount };
}

if (BASE_URL) {
  describe('guard survives a lost PostgreSQL connection', () => {
    test('every backend terminated under load: no crash, no 500, 2xx again within seconds', async (t) => {
      const { fault, call } = await guardOverProxy(t, BASE_URL);
      const load = startLoad(async () => (await call('GET', '/patterns')).status);
      const detect = startLoad(async () => (await call('POST', '/detect', { text: 'mail a@example.org' })).status, 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.ok((await fault.terminateBackends()) > 0);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await fault.terminateBackends();
      const recovered = await waitUntil(async () => (await call('GET', '/patterns')).status === 200, 5000);
      const statuses = [...(await load.stop()), ...(await detect.stop())];
      assert.deepEqual(
        [...new Set(statuses)].filter((status) => !(status >= 200 && status < 300) && status !== 503),
        [],
        'only 2xx and 503',
      );
      assert.ok(recovered < 5000);
      await waitUntil(async () => (await call('GET', '/ready')).status === 200, 5000);
    });

    test('restart-style: /ready and database routes are 503 while it refuses connections; audit entries wait and are stored after', async (t) => {
      const { proxy, call, auditCount } = await guardOverProxy(t, BASE_URL);
      assert.equal((await call('GET', '/ready')).text, 'READY');
      assert.equal((await call('POST', '/detect', { text: 'warm-up' })).status, 200);

      proxy.cut();
      await waitUntil(async () => (await call('GET', '/ready')).status === 503, 5000);
      const patterns = await call('GET', '/patterns');
      assert.equal(patterns.status, 503);
      assert.equal(JSON.parse(patterns.text).error.code, 'DATABASE_UNAVAILABLE');
      // Detection runs on the configuration in memory; its audit entry waits for the database.
      const detected = await call('POST', '/detect', { text: 'mail a@example.org', rid: 'during-outage' });
      assert.equal(detected.status, 200);
      await waitUntil(async () => (await call('GET', '/ready')).text.includes('audit-writer failing'), 5000);
      assert.match((await call('GET', '/ready')).text, /^NOT READY: database unreachable/);

      proxy.restore();
      await waitUntil(async () => (await call('GET', '/ready')).status === 200, 35_000);
      assert.equal((await call('GET', '/patterns')).status, 200);
      await waitUntil(async () => (await auditCount('during-outage')) === 1, 35_000);
    });
  });
}
