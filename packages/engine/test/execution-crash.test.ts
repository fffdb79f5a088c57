import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createMemoryCache, openDatabase } from '@keel/core';
import { waitUntil } from '@keel/core/testing';
import pg from 'pg';
import { buildEngineApps, prepareEngineDatabase } from '../src/app.ts';
import { readEngineConfig } from '../src/config.ts';
import type { EngineDb } from '../src/db/schema.ts';
import { bootstrapRealm } from '../src/identity/identity-service.ts';
import { publishedFlow, startFlowWorker, startToolDouble } from './execution-helper.ts';
import { testDatabaseTargets } from './runtime-helper.ts';

/** A database both this process and the worker processes open: a SQLite file, or a PostgreSQL schema. */
async function sharedDatabase(dialect: string, url: string) {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-i13-crash-'));
    const file = path.join(dir, 'engine.sqlite');
    const database = await openDatabase<EngineDb>({ url: file });
    return {
      database,
      env: { WORKER_DB_URL: file } as Record<string, string>,
      drop: async () => {
        await database.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `engine_crash_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase<EngineDb>({ url, schema, poolSize: 4 });
  return {
    database,
    env: { WORKER_DB_URL: url, WORKER_DB_SCHEMA: schema },
    drop: async () => {
      await database.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await client.end();
      }
    },
  };
}

for (const target of testDatabaseTargets()) {
  describe(`a worker process killed mid-flow (${target.dialect})`, () => {
    test('SIGKILL while a write is in flight: a new worker resumes from the last stored step, no effect repeats', async (t) => {
      const shared = await sharedDatabase(target.dialect, target.url);
      t.after(shared.drop);
      await prepareEngineDatabase(shared.database.db);
      const double = await startToolDouble({ slowMs: 2_000 });
      t.after(double.close);
      const apps = await buildEngineApps({
        config: readEngineConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', KEEL_ALLOW_PRIVATE_URLS: 'true' }),
        db: shared.database.db,
        cache: createMemoryCache(),
        secretKeyHex: 'cd'.repeat(32),
      });
      t.after(() => apps.close());
      const call = async (method: string, url: string, options: { token?: string; body?: unknown } = {}) => {
        const response = await apps.rest.inject({
          method: method as 'GET',
          url,
          headers: {
            ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
            ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(options.body !== undefined ? { payload: JSON.stringify(options.body) } : {}),
        });
        return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
      };
      const realm = await bootstrapRealm(shared.database.db, { realmName: 'Crash', username: 'owner-service' });
      const token = (
        await call('POST', '/api/v1/auth/token', {
          body: { access_key: realm.accessKey, secret_key: realm.secretKey },
        })
      ).body.access_token as string;
      const nodes = [
        { id: 'reserve', type: 'tool', tool: 'record', arguments: { object: { step: 1 } }, next: 'charge' },
        { id: 'charge', type: 'tool', tool: 'hold', arguments: { object: { step: 2 } }, next: 'ship' },
        { id: 'ship', type: 'tool', tool: 'record', arguments: { object: { step: 3 } }, next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'shipped' },
      ];
      const flow = await publishedFlow({ call }, token, 'Crash flow', nodes);

      const env = { ...shared.env, WORKER_TOOL_URL: double.url, WORKER_LEASE_MS: '800' };
      let first: ChildProcess | undefined = await startFlowWorker({ ...env, WORKER_ID: 'first' });
      t.after(() => first?.kill('SIGKILL'));
      const killed = new Promise<void>((resolve) => {
        double.onHit((hit) => {
          if (hit.tool === 'hold' && first) {
            // The charge is applied at the tool; the worker dies before it hears back or stores the step.
            first.kill('SIGKILL');
            first = undefined;
            resolve();
          }
        });
      });
      const queued = await call('POST', '/api/v1/runtime/executions', { token, body: { flow_id: flow.id } });
      assert.equal(queued.status, 202);
      await killed;
      double.onHit(undefined);
      const stuck = await call('GET', `/api/v1/runtime/executions/${queued.body.id}`, { token });
      assert.equal(stuck.body.state, 'running', 'the dead worker still holds the lease');
      const events = await call('GET', `/api/v1/runtime/executions/${queued.body.id}/events`, { token });
      assert.deepEqual(
        events.body.data.filter((e: { type: string }) => e.type === 'step.done').map((e: any) => e.data.key),
        ['reserve#1'],
        'only the first step was stored',
      );

      const restartedAt = Date.now();
      const second = await startFlowWorker({ ...env, WORKER_ID: 'second' });
      t.after(() => second.kill('SIGKILL'));
      let done: any;
      await waitUntil(async () => {
        done = (await call('GET', `/api/v1/runtime/executions/${queued.body.id}`, { token })).body;
        return done.state === 'succeeded';
      }, 20_000);
      const resumeMs = Date.now() - restartedAt;
      assert.equal(done.action.content, 'shipped');
      const flowHits = double.hits.filter((hit) => hit.idempotencyKey !== undefined);
      const byKey = new Map<string, number>();
      for (const hit of flowHits) byKey.set(hit.idempotencyKey!, (byKey.get(hit.idempotencyKey!) ?? 0) + 1);
      assert.equal(byKey.size, 3, 'three writes, three keys');
      const holdKey = flowHits.find((hit) => hit.tool === 'hold')!.idempotencyKey!;
      assert.equal(byKey.get(holdKey), 2, 'the in-flight write was sent again with the same key');
      assert.equal(double.effects.size, 3, 'each effect applied once');
      const reserveHits = flowHits.filter((hit) => (hit.arguments as { step?: number })?.step === 1);
      assert.equal(reserveHits.length, 1, 'the stored step did not run again');
      t.diagnostic(`resume after SIGKILL: ${resumeMs} ms (lease 800 ms, tool answer 2 s)`);
    });
  });
}
