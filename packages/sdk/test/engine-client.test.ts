import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { createMemoryCache } from '@keel/core';
import { openTestDatabase, testDatabaseTargets } from '@keel/core/testing';
import {
  bootstrapMerchant,
  buildEngineApps,
  type EngineDb,
  prepareEngineDatabase,
  readEngineConfig,
} from '@keel/engine';
import { ApiError, EngineClient } from '../src/index.ts';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** A stand-in engine on 127.0.0.1: `answer` decides each reply; every request is recorded. */
async function fakeEngine(t: TestContext, answer: (seen: Seen, index: number) => { status: number; body?: unknown }) {
  const requests: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body: Buffer.concat(chunks).toString(),
      };
      requests.push(seen);
      const reply = answer(seen, requests.length - 1);
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body ?? {}));
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
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

function tokenReply(n: number, expiresIn = 900) {
  return {
    status: 200,
    body: {
      access_token: `token-${n}`,
      expires_in: expiresIn,
      token_type: 'Bearer',
      user_id: 'u',
      realm_id: 'r',
      user_type: 'service',
    },
  };
}

describe('EngineClient token handling', () => {
  test('one exchange serves concurrent calls; the token is exchanged again shortly before it expires', async (t) => {
    let exchanges = 0;
    const service = await fakeEngine(t, (seen) =>
      seen.url === '/api/v1/auth/token'
        ? tokenReply(++exchanges, 120)
        : { status: 200, body: { data: [], next_cursor: null } },
    );
    let now = 1_000_000;
    const client = new EngineClient({ baseUrl: service.url, accessKey: 'eak_1', secretKey: 'esk_1', clock: () => now });
    await Promise.all([client.providers.list(), client.prompts.list(), client.sessions.list()]);
    assert.equal(exchanges, 1);
    const exchange = service.requests.find((r) => r.url === '/api/v1/auth/token')!;
    assert.deepEqual(JSON.parse(exchange.body), { access_key: 'eak_1', secret_key: 'esk_1' });
    assert.equal(exchange.authorization, undefined);
    assert.ok(
      service.requests.filter((r) => r.url !== '/api/v1/auth/token').every((r) => r.authorization === 'Bearer token-1'),
    );
    now += 80_000; // 40 s left: still beyond the 30 s refresh margin
    await client.providers.list();
    assert.equal(exchanges, 1);
    now += 15_000; // 25 s left: refresh first
    await client.providers.list();
    assert.equal(exchanges, 2);
    assert.equal(service.requests.at(-1)!.authorization, 'Bearer token-2');
  });

  test('after a 401 the client exchanges once and repeats the call once; a second 401 is an ApiError', async (t) => {
    let exchanges = 0;
    let calls = 0;
    const service = await fakeEngine(t, (seen) => {
      if (seen.url === '/api/v1/auth/token') return tokenReply(++exchanges);
      calls++;
      if (seen.authorization === 'Bearer token-1')
        return { status: 401, body: { error: { code: 'AUTH_TOKEN_EXPIRED', message: 'expired', traceId: 't' } } };
      return { status: 200, body: { authenticated: true } };
    });
    const client = new EngineClient({ baseUrl: service.url, accessKey: 'a', secretKey: 's' });
    const me = await client.identity.whoAmI();
    assert.equal(me.authenticated, true);
    assert.equal(exchanges, 2);
    assert.equal(calls, 2);

    const revoked = await fakeEngine(t, (seen) =>
      seen.url === '/api/v1/auth/token'
        ? tokenReply(1)
        : { status: 401, body: { error: { code: 'AUTH_TOKEN_INVALID', message: 'no', traceId: 't' } } },
    );
    const stuck = new EngineClient({ baseUrl: revoked.url, accessKey: 'a', secretKey: 's' });
    await assert.rejects(
      stuck.identity.whoAmI(),
      (error: ApiError) => error instanceof ApiError && error.status === 401 && error.code === 'AUTH_TOKEN_INVALID',
    );
    assert.equal(revoked.requests.filter((r) => r.url === '/api/v1/auth/is-authenticated').length, 2);
    const badKeys = await fakeEngine(t, () => ({
      status: 401,
      body: { error: { code: 'AUTH_INVALID_CREDENTIALS', message: 'no', traceId: 't' } },
    }));
    await assert.rejects(
      new EngineClient({ baseUrl: badKeys.url, accessKey: 'a', secretKey: 's' }).providers.list(),
      /do not match|no/,
    );
  });

  test('transient failures are retried for idempotent calls only; a turn without idempotency_key is not repeated', async (t) => {
    const service = await fakeEngine(t, (seen, index) => {
      if (seen.url === '/api/v1/auth/token') return tokenReply(1);
      if (seen.url.startsWith('/api/v1/runtime/providers'))
        return index < 3 ? { status: 503 } : { status: 200, body: { data: [], next_cursor: null } };
      return { status: 502, body: { error: { code: 'RUNTIME_PROVIDER_FAILED', message: 'upstream', traceId: 'tr' } } };
    });
    const client = new EngineClient({ baseUrl: service.url, accessKey: 'a', secretKey: 's', retryBaseDelayMs: 1 });
    const providers = await client.providers.list();
    assert.deepEqual(providers.data, []);
    await assert.rejects(
      client.runtime.execute({ agent_id: 'x', input: { message: 'hi' } }),
      (e: ApiError) => e.status === 502 && e.traceId === 'tr',
    );
    assert.equal(service.requests.filter((r) => r.url === '/api/v1/runtime/execute').length, 1);
    await assert.rejects(client.runtime.execute({ agent_id: 'x', input: { message: 'hi' }, idempotency_key: 'k' }));
    assert.equal(
      service.requests.filter((r) => r.url === '/api/v1/runtime/execute').length,
      4,
      'with a key: 1 + 2 retries',
    );
  });
});

const target = testDatabaseTargets()[0]!;

describe('EngineClient against the engine', () => {
  test('configure a provider, a prompt and an agent, then chat in a session and read it back', async (t) => {
    const upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            choices: [{ message: { role: 'assistant', content: 'Size 42 is in stock.' } }],
            usage: { prompt_tokens: 10, completion_tokens: 6 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
    const database = await openTestDatabase<EngineDb>(target, 'engine');
    await prepareEngineDatabase(database.db);
    const apps = await buildEngineApps({
      config: readEngineConfig({ LOG_LEVEL: 'silent', KEEL_ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_MAX: '100000' }),
      db: database.db,
      cache: createMemoryCache(),
      secretKeyHex: 'ef'.repeat(32),
    });
    await apps.rest.listen({ host: '127.0.0.1', port: 0 });
    t.after(async () => {
      await apps.close();
      await database.close();
    });
    const boot = await bootstrapMerchant(database.db, apps.ctx.principals);
    const baseUrl = `http://127.0.0.1:${(apps.rest.server.address() as AddressInfo).port}`;
    const client = new EngineClient({ baseUrl, accessKey: boot.accessKey, secretKey: boot.secretKey });

    const me = await client.identity.whoAmI();
    assert.equal(me.realm_id, boot.realmId);
    const provider = await client.providers.create({
      type: 'openai_compatible',
      name: 'local',
      base_url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`,
      api_key: 'sk-local-secret-1234567890',
      text_model: 'm',
    });
    assert.equal(provider.api_key_set, true);
    const prompt = await client.prompts.create({
      name: 'Shop',
      key: 'shop',
      content: 'You sell shoes.',
      is_active: true,
    });
    const agent = await client.identity.createAgentIdentity(boot.realmId, { username: 'seller' });
    const config = await client.agents.putConfig(agent.identity.id, {
      ai_provider_id: provider.id,
      system_prompt_id: prompt.id,
    });
    assert.equal(config.settings.max_tool_calls, 8);
    const session = await client.sessions.create({ agent_id: agent.identity.id, channel: 'web' });
    const turn = await client.runtime.chat({
      agent_id: agent.identity.id,
      session_id: session.session_id,
      resume_token: session.resume_token,
      messages: [{ role: 'user', content: 'Do you have size 42?' }],
    });
    assert.equal(turn.action.type, 'RESPOND');
    assert.equal(turn.content, 'Size 42 is in stock.');
    const messages = await client.sessions.listMessages(session.session_id, session.resume_token);
    assert.equal(messages.data.length, 2);
    await assert.rejects(client.sessions.get(session.session_id), (e: ApiError) => e.status === 403);
    const status = await client.sessions.status(session.session_id);
    assert.equal(status.status, 'active');
    const config2 = await client.runtime.sdkConfig();
    assert.equal(config2.contract_version, '2026-08-22');
    const keys = await client.identity.createKeys({ name: 'rotation' });
    const second = new EngineClient({ baseUrl, accessKey: keys.access_key, secretKey: keys.secret_key });
    assert.equal((await second.identity.whoAmI()).key_id, keys.key_id);
    await client.identity.revokeKey(keys.key_id);
    await assert.rejects(second.identity.whoAmI(), (e: ApiError) => e.status === 401);
  });
});
