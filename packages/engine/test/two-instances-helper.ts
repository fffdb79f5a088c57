// Two engine instances on one PostgreSQL database and one Redis (a shared cache namespace), a realm bootstrapped on
// it and a runtime token: for tests of limits that must hold across instances.
import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import { openCache } from '@keel/core';
import { openTestDatabase, waitUntil } from '@keel/core/testing';
import { buildEngineApps, prepareEngineDatabase } from '../src/app.ts';
import { readEngineConfig } from '../src/config.ts';
import type { EngineDb } from '../src/db/schema.ts';
import { bootstrapRealm } from '../src/identity/identity-service.ts';
import { SECRET_KEY } from './runtime-helper.ts';

export async function startTwoInstances(
  t: TestContext,
  urls: { database: string; redis: string },
  names: { service: string; realm: string },
) {
  const database = await openTestDatabase<EngineDb>({ dialect: 'postgres', url: urls.database }, 'engine');
  // Closed in reverse order in one hook: the apps before the database they write to.
  const closers: (() => Promise<void>)[] = [() => database.close()];
  t.after(async () => {
    for (const close of closers.reverse()) await close();
  });
  await prepareEngineDatabase(database.db);
  const config = readEngineConfig({
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '1000000',
    KEEL_ALLOW_PRIVATE_URLS: 'true',
    ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0',
  });
  const service = `${names.service}-${randomUUID()}`;
  const instances: Awaited<ReturnType<typeof buildEngineApps>>[] = [];
  for (let i = 0; i < 2; i++) {
    const opened = openCache({ redisUrl: urls.redis, service });
    await waitUntil(() => opened.cache.ping(), 5000);
    const apps = await buildEngineApps({
      config,
      db: database.db,
      cache: opened.cache,
      redis: opened.redis,
      secretKeyHex: SECRET_KEY,
    });
    closers.push(async () => {
      await apps.close();
      await opened.close();
    });
    instances.push(apps);
  }
  const realm = await bootstrapRealm(database.db, { realmName: names.realm, username: 'owner-service' });
  const call = async (index: number, method: string, url: string, body?: unknown, token?: string) => {
    const response = await instances[index]!.rest.inject({
      method: method as 'POST',
      url,
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.json(), headers: response.headers };
  };
  const token = (
    await call(0, 'POST', '/api/v1/auth/token', { access_key: realm.accessKey, secret_key: realm.secretKey })
  ).body.access_token as string;
  /** The first instance in the shape `setupAgent` takes. */
  const engine = {
    call: (method: string, url: string, options: { token?: string | null; body?: unknown } = {}) =>
      call(0, method, url, options.body, options.token ?? undefined),
  };
  return { call, token, realm: { ...realm, token }, engine };
}
