import {
  type CoreConfig,
  defaultDatabaseUrl,
  type Env,
  migrateToLatest,
  openCache,
  openDatabase,
  type RunningService,
  type ServiceDefinition,
} from '@keel/core';
import { buildGuardApp, prepareGuardDatabase } from './app.ts';
import { readGuardConfig } from './config.ts';
import { guardMigrations } from './db/migrations/index.ts';
import type { GuardDb } from './db/schema.ts';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function databaseUrl(core: CoreConfig): string {
  return core.databaseUrl ?? defaultDatabaseUrl(core.dataDir, 'guard');
}

/** Starts guard: opens its database (migrating and seeding it) and cache, then listens. */
async function start({ env }: { env: Env; core: CoreConfig }): Promise<RunningService> {
  const config = readGuardConfig(env);
  const database = await openDatabase<GuardDb>({ url: databaseUrl(config.core), schema: 'guard' });
  const opened = openCache({ redisUrl: config.core.redisUrl, service: 'guard' });
  try {
    await prepareGuardDatabase(database.db);
    const { app } = await buildGuardApp({ config, db: database.db, cache: opened.cache, redis: opened.redis });
    let host = config.core.host;
    if (!config.auth.enabled && !LOOPBACK.has(host)) {
      app.log.warn({ requested: host }, 'AUTH_ENABLED is false: guard binds 127.0.0.1 only');
      host = '127.0.0.1';
    }
    await app.listen({ host, port: config.core.ports.guard });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.core.ports.guard;
    const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return {
      name: 'guard',
      addresses: [{ label: 'guard', url: base }],
      close: async () => {
        await app.close();
        await opened.close();
        await database.close();
      },
    };
  } catch (error) {
    await opened.close();
    await database.close();
    throw error;
  }
}

async function migrate({ env }: { env: Env; core: CoreConfig }): Promise<string[]> {
  const config = readGuardConfig(env);
  const database = await openDatabase<GuardDb>({ url: databaseUrl(config.core), schema: 'guard' });
  try {
    return await migrateToLatest(database.db, guardMigrations);
  } finally {
    await database.close();
  }
}

export const guardService: ServiceDefinition = {
  name: 'guard',
  description: 'PII and secret detection, guardrails and the chat-completions gateway',
  start,
  migrate,
};
