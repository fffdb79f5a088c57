import {
  type CoreConfig,
  createOutboxWorker,
  type Env,
  loadSecretKey,
  type OutboxWorker,
  openCache,
  openDatabase,
  type RunningService,
  type ServiceDefinition,
} from '@keel/core';
import { buildEngineApps } from './app.ts';
import { engineCommands } from './cli/commands.ts';
import { readEngineConfig } from './config.ts';
import { engineDatabaseUrl, openEngineDatabase, prepareEngineDatabase } from './db/open.ts';
import type { EngineDb } from './db/schema.ts';
import { createExecutionWorker, type ExecutionWorker } from './executions/execution-worker.ts';
import { createTriggerScheduler, type TriggerScheduler } from './flows/flow-trigger-scheduler.ts';
import { ensureFirstRealm } from './identity/identity-service.ts';
import { loadTokenSigningKey } from './identity/tokens.ts';

function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Starts the engine: one database and cache, the delivery worker, and three listeners (REST, MCP, webhook ingress). */
async function start({ env }: { env: Env; core: CoreConfig }): Promise<RunningService> {
  const config = readEngineConfig(env);
  const database = await openEngineDatabase(config);
  const opened = openCache({ redisUrl: config.core.redisUrl, service: 'engine' });
  let worker: OutboxWorker | undefined;
  let flowWorker: ExecutionWorker | undefined;
  let triggerScheduler: TriggerScheduler | undefined;
  const apps: { close(): Promise<void> }[] = [];
  try {
    const { keyHex, generated } = loadSecretKey({ secretKey: config.core.secretKey, dataDir: config.core.dataDir });
    const tokenKey = loadTokenSigningKey({ configured: config.runtime.tokenSigningKey, dataDir: config.core.dataDir });
    const engine = await buildEngineApps({
      tokenSigningKeyHex: tokenKey.keyHex,
      config,
      db: database.db,
      cache: opened.cache,
      redis: opened.redis,
      secretKeyHex: keyHex,
    });
    apps.push(engine);
    if (generated)
      engine.rest.log.warn(
        'KEEL_SECRET_KEY is not set: generated one into KEEL_DATA_DIR/secret.key (share it between instances)',
      );
    if (tokenKey.generated)
      engine.rest.log.warn(
        'ENGINE_TOKEN_SIGNING_KEY is not set: generated one into KEEL_DATA_DIR/engine-token.key (share it between instances)',
      );
    // An empty database gets its first realm and owner service identity once; the credentials are printed
    // (stdout, never the log) on that start only.
    const first = await ensureFirstRealm(database.db);
    if (first)
      process.stdout.write(
        `keel: engine created the first realm ${first.realmId} with a service identity (owner); its key pair is shown once:\n` +
          `keel:   access_key ${first.accessKey}\nkeel:   secret_key ${first.secretKey}\n` +
          'keel: exchange it at POST /api/v1/auth/token; store the secret in a server-side secret store\n',
      );
    if (config.webhooks.workerEnabled) {
      worker = createOutboxWorker({
        db: database.db,
        allowPrivate: config.core.allowPrivateUrls,
        timeoutMs: config.webhooks.timeoutMs,
        retryScheduleMs: config.webhooks.retryScheduleMs,
        concurrency: config.webhooks.concurrency,
        pollIntervalMs: config.webhooks.pollIntervalMs,
        retentionMs: config.webhooks.retentionDays * 24 * 3600 * 1000,
        resolveTarget: (message) => engine.ctx.destinations.resolve(message.target),
        logger: engine.rest.log,
      });
      const running = worker;
      engine.ctx.notifyOutbox = () => running.notify();
      engine.readiness.add('webhook-worker', () => running.check());
      worker.start();
    }
    if (config.runtime.executions.workerEnabled) {
      const running = createExecutionWorker(engine.runtime, config.runtime.executions);
      flowWorker = running;
      engine.runtime.extensions.executions = running;
      engine.readiness.add('flow-execution-worker', () => running.check());
      running.start();
      const scheduler = createTriggerScheduler(engine.runtime, {
        pollMs: Math.min(1000, config.runtime.executions.pollMs),
      });
      triggerScheduler = scheduler;
      engine.readiness.add('flow-trigger-scheduler', () => scheduler.check());
      scheduler.start();
    }
    const host = config.core.host;
    const addresses = [];
    for (const [label, app, port] of [
      ['engine', engine.rest, config.core.ports.engine],
      ['engine-mcp', engine.mcp, config.core.ports.engineMcp],
      ['engine-webhooks', engine.webhook, config.core.ports.engineWebhook],
    ] as const) {
      await app.listen({ host, port });
      const address = app.server.address();
      addresses.push({ label, url: urlOf(host, typeof address === 'object' && address ? address.port : port) });
    }
    return {
      name: 'engine',
      addresses,
      close: async () => {
        await triggerScheduler?.stop();
        await flowWorker?.stop();
        await engine.close();
        await worker?.stop();
        await opened.close();
        await database.close();
      },
    };
  } catch (error) {
    await triggerScheduler?.stop();
    await flowWorker?.stop();
    await Promise.allSettled(apps.map((app) => app.close()));
    await worker?.stop();
    await opened.close();
    await database.close();
    throw error;
  }
}

async function migrate({ env }: { env: Env; core: CoreConfig }): Promise<string[]> {
  const config = readEngineConfig(env);
  const database = await openDatabase<EngineDb>({ url: engineDatabaseUrl(config.core), schema: 'engine' });
  try {
    return await prepareEngineDatabase(database.db);
  } finally {
    await database.close();
  }
}

export const engineService: ServiceDefinition = {
  name: 'engine',
  description:
    'Merchant catalog (products, carts, checkouts, orders), catalog webhooks in and out, procurement, public MCP tools',
  start,
  migrate,
  commands: engineCommands,
};
