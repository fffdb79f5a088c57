import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { type App, type Cache, createMemoryCache, createSecretBox } from '@keel/core';
import { openTestDatabase, reuseCompiledSchemas, type TestDatabaseTarget } from '@keel/core/testing';
import type { Kysely } from 'kysely';
import { buildGeoApp, prepareGeoDatabase } from '../src/app.ts';
import { readGeoConfig } from '../src/config.ts';
import type { GeoContext } from '../src/context.ts';
import type { GeoDb } from '../src/db/schema.ts';
import { type BootstrapResult, bootstrapTenant } from '../src/tenancy/tenancy-service.ts';

// Every app a test file builds compiles each route schema once (see reuseCompiledSchemas).
reuseCompiledSchemas();

export { testDatabaseTargets } from '@keel/core/testing';

export interface GeoUnderTest {
  app: App;
  ctx: GeoContext;
  db: Kysely<GeoDb>;
  cache: Cache;
  /** A tenant with two workspaces and its keys. */
  a: BootstrapResult;
  /** Another tenant, for cross-tenant denial. */
  b: BootstrapResult;
  clock: { now: Date };
}

/** A geo app on a fresh database of the given dialect with two bootstrapped tenants; closed when the test ends. */
export async function buildGeo(
  t: TestContext,
  target: TestDatabaseTarget,
  env: Record<string, string> = {},
  options: { startWorker?: boolean; logStream?: NodeJS.WritableStream; cache?: Cache } = {},
): Promise<GeoUnderTest> {
  const config = readGeoConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '1000000',
    GEO_WORKER_INTERVAL_MS: '20',
    ...env,
  });
  // On PostgreSQL the schema is emptied and kept for the next test instead of being migrated again.
  const database = await openTestDatabase<GeoDb>(target, 'geo', { prepare: prepareGeoDatabase, reuseSchema: true });
  const cache = options.cache ?? createMemoryCache();
  const secrets = createSecretBox(randomBytes(32).toString('hex'));
  const clock = { now: new Date() };
  let frozen = false;
  const { app, ctx } = await buildGeoApp({
    config,
    db: database.db,
    cache,
    logStream: options.logStream,
    now: () => (frozen ? clock.now : new Date()),
    startWorker: options.startWorker ?? false,
    secrets,
  });
  await app.ready();
  t.after(async () => {
    await app.close();
    await database.close();
  });
  const a = await bootstrapTenant(database.db, secrets, 'Tenant A');
  const b = await bootstrapTenant(database.db, secrets, 'Tenant B');
  return {
    app,
    ctx,
    db: database.db,
    cache,
    a,
    b,
    get clock() {
      frozen = true;
      return clock;
    },
  };
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

/** An inject helper returning status, parsed body and headers. */
export async function call(
  app: App,
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH',
  url: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const response = await app.inject({
    method,
    url,
    headers: {
      ...(options.key ? bearer(options.key) : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { payload: JSON.stringify(options.body) } : {}),
  });
  let body: any;
  try {
    body = response.body.length > 0 ? response.json() : undefined;
  } catch {
    body = response.body;
  }
  return { status: response.statusCode, body, headers: response.headers, raw: response };
}
