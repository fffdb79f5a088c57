import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, type TestContext } from 'node:test';
import { createMemoryCache } from '@keel/core';
import { openTestDatabase, reuseCompiledSchemas, type TestDatabaseTarget } from '@keel/core/testing';
import { buildEngineApps, type EngineApps, prepareEngineDatabase } from '../src/app.ts';
import { readEngineConfig } from '../src/config.ts';
import type { EngineDb } from '../src/db/schema.ts';
import { bootstrapRealm } from '../src/identity/identity-service.ts';

// Every app a test file builds compiles each route schema once (see reuseCompiledSchemas).
reuseCompiledSchemas();

export { testDatabaseTargets } from '@keel/core/testing';

export const SECRET_KEY = 'cd'.repeat(32);

export interface Reply {
  status: number;
  body: any;
  headers: Record<string, unknown>;
}

export interface Realm {
  realmId: string;
  identityId: string;
  accessKey: string;
  secretKey: string;
  /** A bearer token of the realm's owner service identity. */
  token: string;
}

export interface RuntimeUnderTest extends EngineApps {
  /** Two realms, each with an owner service identity. */
  a: Realm;
  b: Realm;
  /** Everything the engine logged (JSON lines). */
  logs: () => string;
  /** Moves the runtime clock forward. */
  advance(ms: number): void;
  call(
    method: string,
    url: string,
    options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  exchange(accessKey: string, secretKey: string): Promise<Reply>;
  newRealm(name: string): Promise<Realm>;
}

/** The engine (runtime on the REST app) on a fresh database with two realms; closed when the test ends. */
export async function buildRuntime(
  t: TestContext,
  target: TestDatabaseTarget,
  options: { env?: Record<string, string> } = {},
): Promise<RuntimeUnderTest> {
  const { engine, close } = await openRuntime(target, options);
  t.after(close);
  return engine;
}

/**
 * One engine for every test of a describe block (building the REST app compiles ~110 routes, which takes a
 * second or more): `fresh()` gives each test its own two realms on it, so tests stay isolated by realm.
 */
export function sharedRuntime(target: TestDatabaseTarget, options: { env?: Record<string, string> } = {}) {
  let opened: Awaited<ReturnType<typeof openRuntime>> | undefined;
  before(async () => {
    opened = await openRuntime(target, options);
  });
  after(async () => {
    await opened?.close();
  });
  return {
    async fresh(): Promise<RuntimeUnderTest> {
      const engine = opened!.engine;
      return { ...engine, a: await engine.newRealm('Realm A'), b: await engine.newRealm('Realm B') };
    },
  };
}

async function openRuntime(
  target: TestDatabaseTarget,
  options: { env?: Record<string, string> },
): Promise<{ engine: RuntimeUnderTest; close: () => Promise<void> }> {
  const config = readEngineConfig({
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000',
    KEEL_ALLOW_PRIVATE_URLS: 'true',
    ...options.env,
  });
  const database = await openTestDatabase<EngineDb>(target, 'engine');
  await prepareEngineDatabase(database.db);
  let offset = 0;
  const clock = () => Date.now() + offset;
  const logStream = new PassThrough();
  let logged = '';
  logStream.on('data', (chunk) => {
    logged += chunk.toString('utf8');
  });
  const apps = await buildEngineApps({
    config,
    db: database.db,
    cache: createMemoryCache(),
    secretKeyHex: SECRET_KEY,
    clock,
    logStream,
  });
  await apps.rest.ready();
  const close = async () => {
    await apps.close();
    await database.close();
  };
  const call: RuntimeUnderTest['call'] = async (method, url, opts = {}) => {
    const response = await apps.rest.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      },
      ...(opts.body !== undefined ? { payload: JSON.stringify(opts.body) } : {}),
    });
    let body: unknown = response.body;
    try {
      body = response.body ? JSON.parse(response.body) : undefined;
    } catch {
      // text
    }
    return { status: response.statusCode, body, headers: response.headers };
  };
  const exchange = (accessKey: string, secretKey: string) =>
    call('POST', '/api/v1/auth/token', { body: { access_key: accessKey, secret_key: secretKey } });
  const newRealm = async (name: string): Promise<Realm> => {
    const created = await bootstrapRealm(database.db, { realmName: name, username: 'owner-service' });
    const token = await exchange(created.accessKey, created.secretKey);
    if (token.status !== 200) throw new Error(`token exchange failed: ${JSON.stringify(token.body)}`);
    return { ...created, token: token.body.access_token };
  };
  return {
    engine: {
      ...apps,
      a: await newRealm('Realm A'),
      b: await newRealm('Realm B'),
      logs: () => logged,
      advance: (ms) => {
        offset += ms;
      },
      call,
      exchange,
      newRealm,
    },
    close,
  };
}

export interface UpstreamCall {
  headers: http.IncomingHttpHeaders;
  body: any;
  at: number;
}

export type UpstreamAnswer =
  | {
      status?: number;
      content?: string;
      delayMs?: number;
      usage?: { prompt_tokens: number; completion_tokens: number };
      raw?: string;
    }
  | undefined;

/** A chat-completions upstream double on 127.0.0.1; `answer` decides each reply (default: an echo). */
export async function startUpstream(
  t: TestContext,
  answer: (call: UpstreamCall, n: number) => UpstreamAnswer = () => undefined,
) {
  const calls: UpstreamCall[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const call = { headers: req.headers, body: text ? JSON.parse(text) : undefined, at: Date.now() };
      calls.push(call);
      const plan = answer(call, calls.length) ?? {};
      const send = () => {
        if (res.destroyed) return;
        if (plan.raw !== undefined) {
          res.writeHead(plan.status ?? 200, { 'content-type': 'application/json' });
          res.end(plan.raw);
          return;
        }
        const last = call.body?.messages?.at(-1)?.content ?? '';
        const status = plan.status ?? 200;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            status === 200
              ? {
                  id: 'chatcmpl-test',
                  object: 'chat.completion',
                  model: call.body?.model ?? 'test-model',
                  choices: [
                    {
                      index: 0,
                      message: { role: 'assistant', content: plan.content ?? `echo: ${last}` },
                      finish_reason: 'stop',
                    },
                  ],
                  usage: plan.usage ?? { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
                }
              : { error: { message: 'upstream failure with request details', type: 'server_error' } },
          ),
        );
      };
      if (plan.delayMs) setTimeout(send, plan.delayMs);
      else send();
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
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, calls };
}

/** A ready agent in a realm: provider (upstream double), active system prompt, agent identity and config. */
export async function setupAgent(
  engine: RuntimeUnderTest,
  realm: Realm,
  upstreamUrl: string,
  overrides: {
    settings?: Record<string, unknown>;
    provider?: Record<string, unknown>;
    prompt?: Record<string, unknown>;
    config?: Record<string, unknown>;
  } = {},
) {
  const provider = await engine.call('POST', '/api/v1/runtime/providers', {
    token: realm.token,
    body: {
      type: 'openai_compatible',
      name: `provider-${Math.random().toString(36).slice(2, 8)}`,
      base_url: upstreamUrl,
      api_key: 'sk-test-upstream-key-1234567890',
      text_model: 'test-model',
      input_price_per_million: 1,
      output_price_per_million: 2,
      ...overrides.provider,
    },
  });
  if (provider.status !== 201) throw new Error(`provider: ${JSON.stringify(provider.body)}`);
  const prompt = await engine.call('POST', '/api/v1/runtime/prompts', {
    token: realm.token,
    body: {
      name: 'Shop assistant',
      key: `shop-${Math.random().toString(36).slice(2, 8)}`,
      content: 'You are the assistant of {{ shop }}. Be brief.',
      variables: ['shop'],
      is_active: true,
      ...overrides.prompt,
    },
  });
  if (prompt.status !== 201) throw new Error(`prompt: ${JSON.stringify(prompt.body)}`);
  const agent = await engine.call('POST', `/api/v1/realms/${realm.realmId}/agents`, {
    token: realm.token,
    body: { username: `agent-${Math.random().toString(36).slice(2, 8)}` },
  });
  if (agent.status !== 201) throw new Error(`agent: ${JSON.stringify(agent.body)}`);
  const agentId = agent.body.identity.id as string;
  const config = await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
    token: realm.token,
    body: {
      system_prompt_id: prompt.body.id,
      ai_provider_id: provider.body.id,
      ...(overrides.settings ? { settings: overrides.settings } : {}),
      ...overrides.config,
    },
  });
  if (config.status !== 200) throw new Error(`config: ${JSON.stringify(config.body)}`);
  return { providerId: provider.body.id as string, promptId: prompt.body.id as string, agentId };
}

/** A bearer token of a new service identity of realm A with `role`. */
export async function roleToken(engine: RuntimeUnderTest, role: string): Promise<string> {
  const created = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/identities/services`, {
    token: engine.a.token,
    body: { username: `svc-${role}-${Math.random().toString(36).slice(2, 8)}`, role },
  });
  if (created.status !== 201) throw new Error(`service identity: ${JSON.stringify(created.body)}`);
  const c = created.body.credentials;
  return (await engine.exchange(c.access_key, c.secret_key)).body.access_token;
}
