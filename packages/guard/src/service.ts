import path from 'node:path';
import {
  type CoreConfig,
  defaultDatabaseUrl,
  type Env,
  migrateToLatest,
  openCache,
  openDatabase,
  type RunningService,
  resolveWorkerCount,
  type ServiceDefinition,
  startWorkerPool,
} from '@keel/core';
import { buildGuardApp, prepareGuardDatabase } from './app.ts';
import { type GuardConfig, readGuardConfig } from './config.ts';
import { guardMigrations } from './db/migrations/index.ts';
import type { GuardDb } from './db/schema.ts';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function databaseUrl(core: CoreConfig): string {
  return core.databaseUrl ?? defaultDatabaseUrl(core.dataDir, 'guard');
}

function bindHost(config: GuardConfig): string {
  return !config.auth.enabled && !LOOPBACK.has(config.core.host) ? '127.0.0.1' : config.core.host;
}

function baseUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * One guard instance in this process: opens its database and cache, builds the app and listens. With
 * `prepare` it also migrates and seeds the database (the instance that owns start-up does that once).
 */
export async function runGuardInstance(
  env: Env,
  options: { prepare: boolean },
): Promise<{ port: number; close(): Promise<void> }> {
  const config = readGuardConfig(env);
  const database = await openDatabase<GuardDb>({ url: databaseUrl(config.core), schema: 'guard' });
  const opened = openCache({ redisUrl: config.core.redisUrl, service: 'guard' });
  try {
    if (options.prepare) await prepareGuardDatabase(database.db);
    const { app } = await buildGuardApp({ config, db: database.db, cache: opened.cache, redis: opened.redis });
    const host = bindHost(config);
    if (host !== config.core.host)
      app.log.warn({ requested: config.core.host }, 'AUTH_ENABLED is false: guard binds 127.0.0.1 only');
    await app.listen({ host, port: config.core.ports.guard });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.core.ports.guard;
    return {
      port,
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

/**
 * Starts guard. With GUARD_WORKERS above 1, the database is migrated here once and that many worker processes
 * share guard's port (see worker.ts); otherwise guard runs inside this process.
 */
async function start({ env }: { env: Env; core: CoreConfig }): Promise<RunningService> {
  const config = readGuardConfig(env);
  const workers = resolveWorkerCount(config.workers);
  const host = bindHost(config);
  if (workers <= 1) {
    const instance = await runGuardInstance(env, { prepare: true });
    return { name: 'guard', addresses: [{ label: 'guard', url: baseUrl(host, instance.port) }], close: instance.close };
  }
  const database = await openDatabase<GuardDb>({ url: databaseUrl(config.core), schema: 'guard' });
  try {
    await prepareGuardDatabase(database.db);
  } finally {
    await database.close();
  }
  const pool = await startWorkerPool({
    exec: path.join(import.meta.dirname, 'worker.ts'),
    workers,
    env: { ...env },
    log: (line) => process.stderr.write(`keel: guard: ${line}\n`),
  });
  return {
    name: 'guard',
    addresses: [{ label: `guard`, url: `${baseUrl(host, pool.port)} (${workers} worker processes)` }],
    close: () => pool.close(),
  };
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
