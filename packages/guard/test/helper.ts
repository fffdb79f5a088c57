import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, type TestContext } from 'node:test';
import { type App, type Cache, createMemoryCache } from '@keel/core';
import { openTestDatabase, reuseCompiledSchemas, type TestDatabaseTarget } from '@keel/core/testing';
import type { Kysely } from 'kysely';
import { buildGuardApp, prepareGuardDatabase } from '../src/app.ts';
import { readGuardConfig } from '../src/config.ts';
import type { GuardContext } from '../src/context.ts';
import type { GuardDb } from '../src/db/schema.ts';

// Every app a test file builds compiles each route schema once (see reuseCompiledSchemas).
reuseCompiledSchemas();

export { testDatabaseTargets } from '@keel/core/testing';

export interface GuardUnderTest {
  app: App;
  ctx: GuardContext;
  db: Kysely<GuardDb>;
  cache: Cache;
}

/** A guard app on a fresh database of the given dialect, closed when the test ends. */
export async function buildGuard(
  t: TestContext,
  target: TestDatabaseTarget,
  env: Record<string, string> = {},
  options: { cache?: Cache; logStream?: NodeJS.WritableStream } = {},
): Promise<GuardUnderTest> {
  const { guard, close } = await openGuard(target, env, options);
  t.after(close);
  return guard;
}

/**
 * One guard app for every test of a describe block, built before its first test and closed after its last
 * (building an app costs far more than most tests). Guard's patterns, lists and validators are global, not per
 * tenant: only tests that write nothing another test could see share one; a test that writes keeps `buildGuard`.
 */
export function sharedGuard(target: TestDatabaseTarget, env: Record<string, string> = {}): () => GuardUnderTest {
  let opened: Awaited<ReturnType<typeof openGuard>> | undefined;
  before(async () => {
    opened = await openGuard(target, env);
  });
  after(async () => {
    await opened?.close();
  });
  return () => {
    if (!opened) throw new Error('sharedGuard: call it inside a describe, and the returned function inside its tests');
    return opened.guard;
  };
}

async function openGuard(
  target: TestDatabaseTarget,
  env: Record<string, string>,
  options: { cache?: Cache; logStream?: NodeJS.WritableStream } = {},
): Promise<{ guard: GuardUnderTest; close(): Promise<void> }> {
  const config = readGuardConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000', ...env });
  // On PostgreSQL the schema is emptied and kept for the next test instead of being migrated again.
  const database = await openTestDatabase<GuardDb>(target, 'guard', {
    prepare: prepareGuardDatabase,
    reuseSchema: true,
  });
  const cache = options.cache ?? createMemoryCache();
  const { app, ctx } = await buildGuardApp({ config, db: database.db, cache, logStream: options.logStream });
  await app.ready();
  const close = async () => {
    await app.close();
    await database.close();
  };
  return { guard: { app, ctx, db: database.db, cache }, close };
}

/** POST /detect and return the parsed body (asserting nothing about the status). */
export async function detect(app: App, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'POST', url: '/detect', payload: body, headers });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeUpstream {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A chat-completions upstream served on 127.0.0.1 by the test: `reply` decides the answer to each request
 * (status and body, or a delay), and every request is recorded.
 */
export async function startFakeUpstream(
  t: TestContext,
  reply: (
    request: RecordedRequest,
  ) =>
    | { status?: number; body?: unknown; delayMs?: number }
    | Promise<{ status?: number; body?: unknown; delayMs?: number }>,
): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: raw ? JSON.parse(raw) : undefined,
    };
    requests.push(recorded);
    const answer = await reply(recorded);
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    if (res.destroyed) return;
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.after(close);
  return { url: `http://127.0.0.1:${port}/v1`, requests, close };
}

/** A chat-completions response whose assistant message is `content`. */
export function completion(content: string) {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1,
    model: 'test-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  };
}
