import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, type TestContext } from 'node:test';
import { type Cache, createMemoryCache, createOutboxWorker, type OutboxWorker } from '@keel/core';
import { openTestDatabase, reuseCompiledSchemas, type TestDatabaseTarget } from '@keel/core/testing';
import type { Kysely } from 'kysely';
import { keelInProcess } from '../../cli/test/in-process.ts';
import { buildEngineApps, type EngineApps, prepareEngineDatabase } from '../src/app.ts';
import { type BootstrapResult, bootstrapMerchant } from '../src/cli/bootstrap.ts';
import { readEngineConfig } from '../src/config.ts';
import type { EngineDb } from '../src/db/schema.ts';

// Every app a test file builds compiles each route schema once (see reuseCompiledSchemas).
reuseCompiledSchemas();

export { testDatabaseTargets } from '@keel/core/testing';

export const SECRET_KEY = 'ab'.repeat(32);

export interface EngineUnderTest extends EngineApps {
  db: Kysely<EngineDb>;
  cache: Cache;
  boot: BootstrapResult;
  /** The delivery worker, when started with `{ worker: true }`. */
  worker: OutboxWorker | undefined;
  /** REST call with a key (the merchant key by default). */
  call(
    method: string,
    url: string,
    options?: { key?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
}

/** The engine's apps on a fresh database of the given dialect with one bootstrapped merchant; closed when the test ends. */
export async function buildEngine(
  t: TestContext,
  target: TestDatabaseTarget,
  options: EngineOptions = {},
): Promise<EngineUnderTest> {
  const opened = await openEngine(target, options);
  t.after(opened.close);
  return opened.fresh();
}

export interface EngineOptions {
  env?: Record<string, string>;
  worker?: boolean;
}

/**
 * One engine for every test of a describe block (building the apps compiles every route's schemas, a second or
 * more per build): `fresh()` bootstraps a new merchant on it (its own stores and keys), so tests stay isolated by
 * merchant. A test that needs its own configuration or database keeps calling `buildEngine`.
 */
export function sharedEngine(target: TestDatabaseTarget, options: EngineOptions = {}) {
  let opened: Awaited<ReturnType<typeof openEngine>> | undefined;
  before(async () => {
    opened = await openEngine(target, options);
  });
  after(async () => {
    await opened?.close();
  });
  return {
    /** The shared engine with a new merchant of its own. */
    fresh(): Promise<EngineUnderTest> {
      if (!opened) throw new Error('sharedEngine: fresh() is for tests of the describe block that declared it');
      return opened.fresh();
    },
  };
}

let merchants = 0;

async function openEngine(
  target: TestDatabaseTarget,
  options: EngineOptions,
): Promise<{ fresh(): Promise<EngineUnderTest>; close(): Promise<void> }> {
  const config = readEngineConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '1000000',
    KEEL_ALLOW_PRIVATE_URLS: 'true',
    ...options.env,
  });
  const database = await openTestDatabase<EngineDb>(target, 'engine');
  await prepareEngineDatabase(database.db);
  const cache = createMemoryCache();
  const apps = await buildEngineApps({ config, db: database.db, cache, secretKeyHex: SECRET_KEY });
  let worker: OutboxWorker | undefined;
  if (options.worker) {
    worker = createOutboxWorker({
      db: database.db,
      allowPrivate: config.core.allowPrivateUrls,
      timeoutMs: config.webhooks.timeoutMs,
      retryScheduleMs: options.env?.ENGINE_WEBHOOK_RETRY_SCHEDULE ? config.webhooks.retryScheduleMs : [100, 200],
      pollIntervalMs: 20,
      resolveTarget: (message) => apps.ctx.destinations.resolve(message.target),
    });
    const running = worker;
    apps.ctx.notifyOutbox = () => running.notify();
    worker.start();
  }
  await Promise.all([apps.rest.ready(), apps.mcp.ready(), apps.webhook.ready()]);
  const close = async () => {
    await apps.close();
    await worker?.stop();
    await database.close();
  };
  const fresh = async (): Promise<EngineUnderTest> => {
    merchants += 1;
    const boot = await bootstrapMerchant(database.db, apps.ctx.principals, `${new Date().toISOString()} #${merchants}`);
    const call: EngineUnderTest['call'] = async (method, url, opts = {}) => {
      const key = opts.key === undefined ? boot.keys.merchant : opts.key;
      const response = await apps.rest.inject({
        method: method as 'GET',
        url,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...opts.headers,
        },
        ...(opts.body !== undefined ? { payload: JSON.stringify(opts.body) } : {}),
      });
      return {
        status: response.statusCode,
        body: response.body ? safeJson(response.body) : undefined,
        headers: response.headers,
      };
    };
    return { ...apps, db: database.db, cache, boot, worker, call };
  };
  return { fresh, close };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: any;
  raw: string;
}

/** A merchant's webhook receiver served on 127.0.0.1 by the test; `answer` decides each status. */
export async function startReceiver(
  t: TestContext,
  answer: (received: Received, count: number) => number | Promise<number> = () => 200,
) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const entry = { headers: req.headers, body: raw ? JSON.parse(raw) : undefined, raw };
      received.push(entry);
      const status = await answer(entry, received.length);
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * `keel …` run in this process (the CLI's command line, as the bin runs it) on this process's environment plus `env`;
 * answers its exit code and output. Tests of the process itself (`keel start`, a kill) spawn `KEEL`.
 */
export const runKeel = (args: string[], env: Record<string, string | undefined>) => keelInProcess(args, env);

/** The `keel` CLI's entry point (source). */
export const KEEL = path.join(import.meta.dirname, '..', '..', 'cli', 'src', 'keel.ts');

/** A valid product body for a store. */
export function product(storeId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    storeId,
    sku: `SKU-${Math.random().toString(36).slice(2, 10)}`,
    name: 'Trail running shoe',
    price: 89.99,
    inventoryQuantity: 50,
    ...overrides,
  };
}
