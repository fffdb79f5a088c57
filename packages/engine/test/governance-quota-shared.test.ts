// Two engine instances on one PostgreSQL database and one Redis share a realm's quota: the counters live in Redis,
// so requests answered by either instance use up the same window.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { openCache } from '@keel/core';
import { openTestDatabase, waitUntil } from '@keel/core/testing';
import { buildEngineApps, prepareEngineDatabase } from '../src/app.ts';
import { readEngineConfig } from '../src/config.ts';
import type { EngineDb } from '../src/db/schema.ts';
import { bootstrapRealm } from '../src/identity/identity-service.ts';
import { SECRET_KEY, setupAgent, startUpstream } from './runtime-helper.ts';

const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

for (const [dbUrl, cacheUrl] of databaseUrl && redisUrl ? [[databaseUrl, redisUrl]] : []) {
  test('two instances on PostgreSQL + Redis share one realm quota (429 with Retry-After on either)', async (t) => {
    const database = await openTestDatabase<EngineDb>({ dialect: 'postgres', url: dbUrl! }, 'engine');
    t.after(() => database.close());
    await prepareEngineDatabase(database.db);
    const config = readEngineConfig({
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '1000000',
      KEEL_ALLOW_PRIVATE_URLS: 'true',
      ENGINE_TOOL_PROBE_INTERVAL_SECONDS: '0',
    });
    const service = `governance-quota-${randomUUID()}`;
    const instances: Awaited<ReturnType<typeof buildEngineApps>>[] = [];
    for (let i = 0; i < 2; i++) {
      const opened = openCache({ redisUrl: cacheUrl, service });
      await waitUntil(() => opened.cache.ping(), 5000);
      const apps = await buildEngineApps({
        config,
        db: database.db,
        cache: opened.cache,
        redis: opened.redis,
        secretKeyHex: SECRET_KEY,
      });
      t.after(async () => {
        await apps.close();
        await opened.close();
      });
      instances.push(apps);
    }
    const realm = await bootstrapRealm(database.db, { realmName: 'Shared quota', username: 'owner-service' });
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
    const upstream = await startUpstream(t);
    const engine = {
      call: (method: string, url: string, options: { token?: string | null; body?: unknown } = {}) =>
        call(0, method, url, options.body, options.token ?? undefined),
    };
    const { agentId } = await setupAgent(engine as never, { ...realm, token }, upstream.url, {
      prompt: { content: 'Be brief.', variables: [] },
    });
    const quota = await call(1, 'PUT', '/api/v1/governance/quotas', { window_seconds: 3600, max_requests: 3 }, token);
    assert.equal(quota.status, 200, JSON.stringify(quota.body));
    const chat = (index: number) =>
      call(
        index,
        'POST',
        '/api/v1/runtime/ai/chat',
        { agent_id: agentId, messages: [{ role: 'user', content: 'Hello' }] },
        token,
      );
    assert.equal((await chat(0)).status, 200);
    assert.equal((await chat(1)).status, 200);
    assert.equal((await chat(0)).status, 200);
    // Each instance alone has counted at most two: only the shared counter says the window is used up.
    for (const index of [1, 0]) {
      const over = await chat(index);
      assert.equal(over.status, 429, JSON.stringify(over.body));
      assert.equal(over.body.error.code, 'GOVERNANCE_QUOTA_EXCEEDED');
      assert.ok(Number(over.headers['retry-after']) >= 1);
    }
    assert.equal(upstream.calls.length, 3);
    const snapshot = await call(1, 'GET', '/api/v1/governance', undefined, token);
    assert.equal(snapshot.body.quota.usage.requests, 5);
  });
}
