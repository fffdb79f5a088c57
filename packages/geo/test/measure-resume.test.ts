import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMemoryCache, createSecretBox, openDatabase } from '@keel/core';
import pg from 'pg';
import { buildGeoApp, prepareGeoDatabase } from '../src/app.ts';
import { readGeoConfig } from '../src/config.ts';
import type { GeoDb } from '../src/db/schema.ts';
import { runMeasureWorkerOnce } from '../src/measure/measure-worker.ts';
import { bootstrapTenant } from '../src/tenancy/tenancy-service.ts';
import { startEngineDouble } from './engine-double.ts';
import { call, testDatabaseTargets } from './helper.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'measure-run-child.ts');

for (const target of testDatabaseTargets()) {
  describe(`measurement run kill and resume (${target.dialect})`, () => {
    test('a run SIGKILLed midway resumes without asking any answered question again', async (t) => {
      let url: string;
      let schema: string | undefined;
      if (target.dialect === 'sqlite') {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geo-resume-'));
        t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
        url = path.join(dir, 'geo.sqlite');
      } else {
        url = target.url;
        schema = `geo_resume_${randomBytes(6).toString('hex')}`;
        t.after(async () => {
          const client = new pg.Client({ connectionString: target.url });
          await client.connect();
          await client.query(`drop schema if exists "${schema}" cascade`);
          await client.end();
        });
      }
      const database = await openDatabase<GeoDb>({ url, schema });
      await prepareGeoDatabase(database.db);
      const secretHex = randomBytes(32).toString('hex');
      const secrets = createSecretBox(secretHex);
      let clock = Date.now();
      const { app, ctx } = await buildGeoApp({
        config: readGeoConfig({ LOG_LEVEL: 'silent', KEEL_ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_MAX: '1000000' }),
        db: database.db,
        cache: createMemoryCache(),
        secrets,
        now: () => new Date(clock),
      });
      t.after(async () => {
        await app.close();
        await database.close();
      });
      const a = await bootstrapTenant(database.db, secrets, 'Tenant A');
      const double = await startEngineDouble(
        {
          e1: { default: [{ text: 'Acme is good [1].', citations: ['https://acme.com/'] }] },
          e2: { default: [{ text: 'Globex is fine.' }] },
        },
        { delayMs: 15 },
      );
      t.after(() => double.close());
      await call(app, 'POST', '/api/v1/geo/target-graph', {
        key: a.keys.write,
        headers: { 'idempotency-key': 'g1' },
        body: {
          operation: 'import',
          workspaceId: a.workspaceId,
          targets: [
            { key: 'acme', name: 'Acme', url: 'https://acme.com' },
            { key: 'globex', name: 'Globex', kind: 'competitor' },
          ],
          relations: [],
        },
      });
      for (const name of ['e1', 'e2']) {
        const engine = await call(app, 'POST', '/api/v1/geo/engines', {
          key: a.keys.write,
          body: {
            workspaceId: a.workspaceId,
            name,
            provider: 'chat_completions',
            baseUrl: double.baseUrl(name),
            model: 'double',
            concurrency: 2,
            requestsPerMinute: 100_000,
          },
        });
        assert.equal(engine.status, 201);
      }
      const prompts = Array.from({ length: 60 }, (_, i) => ({ text: `question ${i + 1}` }));
      await call(app, 'POST', '/api/v1/geo/prompts', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, prompts },
      });
      const run = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 1 },
      });
      assert.equal(run.body.totalTasks, 120);

      const child = spawn(process.execPath, [CHILD], {
        env: { ...process.env, DB_URL: url, DB_SCHEMA: schema ?? '', SECRET_HEX: secretHex },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
        child.on('exit', (code, signal) => resolve(signal ?? code)),
      );
      const totalAsked = () => [...double.asked.values()].reduce((x, y) => x + y, 0);
      const deadline = Date.now() + 60_000;
      while (totalAsked() < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL', stderr);

      const storedBefore = await database.db
        .selectFrom('measure_answer')
        .innerJoin('measure_prompt', 'measure_prompt.id', 'measure_answer.prompt_id')
        .innerJoin('measure_engine', 'measure_engine.id', 'measure_answer.engine_id')
        .select(['measure_prompt.text', 'measure_engine.name'])
        .where('run_id', '=', run.body.id)
        .execute();
      assert.ok(
        storedBefore.length >= 30 && storedBefore.length < 120,
        `stored ${storedBefore.length} before the kill`,
      );
      const askedAtKill = totalAsked();

      // The dead worker's claim goes stale; the next worker round takes the run over and finishes it.
      clock += 3 * 60 * 1000;
      assert.equal(await runMeasureWorkerOnce(ctx, 'parent'), 1);
      const finished = await call(app, 'GET', `/api/v1/geo/runs/${run.body.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(finished.body.status, 'completed');
      assert.equal(finished.body.summary.answered, 120);
      // No answered question was asked again …
      for (const row of storedBefore)
        assert.equal(double.asked.get(`${row.name}|${row.text}`), 1, `${row.name} ${row.text}`);
      // … and only the questions in flight at the kill (at most the engines' concurrency, 2 + 2) were asked twice.
      const askedTwice = [...double.asked.values()].filter((n) => n > 1).length;
      assert.ok(askedTwice <= 4, `asked twice: ${askedTwice}`);
      assert.equal(totalAsked(), 120 + askedTwice);
      assert.ok(askedAtKill - storedBefore.length <= 4);
      const mention = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=metrics&limit=500`,
        { key: a.keys.read },
      );
      const rate = mention.body.items.find((m: any) => m.key === 'mention_rate:all');
      assert.equal(rate.data.value, 60 / 120);
      assert.equal(rate.data.sampleCount, 120);
    });
  });
}
