import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runMeasureWorkerOnce } from '../src/measure/measure-worker.ts';
import { startDueSchedules } from '../src/measure/schedule-service.ts';
import { startEngineDouble } from './engine-double.ts';
import { buildGeo, call, testDatabaseTargets } from './helper.ts';
import { sharedGeo } from './measure-suite.ts';

const engineBody = (workspaceId: string, baseUrl: string, name = 'e1') => ({
  workspaceId,
  name,
  provider: 'chat_completions',
  baseUrl,
  model: 'm',
  apiKey: 'sk-live-do-not-leak-1234',
  requestsPerMinute: 100_000,
});

test('the OpenAPI document describes every measurement route and stays compact (shared responses by $ref)', async (t) => {
  const [target] = testDatabaseTargets();
  const { app } = await buildGeo(t, target!);
  const response = await app.inject({ url: '/openapi.json' });
  // The fuzzer reads at most 256 KiB of a document; repeated error bodies are written once under components.
  assert.ok(response.body.length < 256 * 1024, `${response.body.length} bytes`);
  const doc = response.json();
  for (const path of [
    '/api/v1/geo/prompts',
    '/api/v1/geo/engines',
    '/api/v1/geo/runs',
    '/api/v1/geo/runs/{runId}/answers',
    '/api/v1/geo/answers/{answerId}',
    '/api/v1/geo/schedules',
    '/api/v1/geo/attribution',
    '/api/v1/geo/experiments',
    '/api/v1/geo/simulations',
  ])
    assert.ok(doc.paths[path], path);
  const forbidden = doc.paths['/api/v1/geo/runs'].post.responses['403'];
  assert.match(forbidden.$ref, /^#\/components\/responses\//);
  assert.ok(doc.components.responses[forbidden.$ref.split('/').at(-1)]);
});

for (const target of testDatabaseTargets()) {
  describe(`measurement routes (${target.dialect})`, () => {
    // The SSRF test needs the default policy (its own app); the others share one app that may reach 127.0.0.1.
    const freshGeo = sharedGeo(target, { KEEL_ALLOW_PRIVATE_URLS: 'true' });
    test('engine base URLs pass the SSRF policy; API keys are sealed and never returned', async (t) => {
      const { app, a, db } = await buildGeo(t, target);
      for (const url of [
        'http://127.0.0.1:9/v1',
        'https://[::ffff:127.0.0.1]/v1',
        'https://10.0.0.1/v1',
        'https://localhost/v1',
      ]) {
        const refused = await call(app, 'POST', '/api/v1/geo/engines', {
          key: a.keys.write,
          body: engineBody(a.workspaceId, url),
        });
        assert.equal(refused.status, 400, url);
        assert.equal(refused.body.error.code, 'OUTBOUND_URL_REJECTED');
      }
      const created = await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: engineBody(a.workspaceId, 'https://api.openai.example.com/v1'),
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.hasApiKey, true);
      assert.ok(!JSON.stringify(created.body).includes('sk-live'));
      const listed = await call(app, 'GET', `/api/v1/geo/engines?workspaceId=${a.workspaceId}`, { key: a.keys.read });
      assert.ok(!JSON.stringify(listed.body).includes('sk-live'));
      const stored = await db.selectFrom('measure_engine').select('api_key').executeTakeFirstOrThrow();
      assert.ok(stored.api_key && !stored.api_key.includes('sk-live'));
      const duplicate = await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: engineBody(a.workspaceId, 'https://api.openai.example.com/v1'),
      });
      assert.equal(duplicate.status, 409);
      assert.equal(duplicate.body.error.code, 'GEO_ENGINE_EXISTS');
      const removed = await call(app, 'DELETE', `/api/v1/geo/engines/${created.body.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.write,
      });
      assert.equal(removed.status, 204);
      const after = await call(app, 'GET', `/api/v1/geo/engines?workspaceId=${a.workspaceId}`, { key: a.keys.read });
      assert.deepEqual(after.body.items, []);
      const reused = await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: engineBody(a.workspaceId, 'https://api.openai.example.com/v1'),
      });
      assert.equal(reused.status, 201, 'a removed engine frees its name');
      const badPrice = await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: { ...engineBody(a.workspaceId, 'https://x.example.com', 'e2'), inputPricePerMillionTokens: '1e9' },
      });
      assert.equal(badPrice.status, 400);
    });

    test('permissions and workspaces: writes need geo:write; another tenant learns nothing', async (t) => {
      const { app, a, b } = await freshGeo();
      const double = await startEngineDouble({ e1: { default: [{ text: 'Acme.' }] } });
      t.after(() => double.close());
      const denied = await call(app, 'POST', '/api/v1/geo/prompts', {
        key: a.keys.read,
        body: { workspaceId: a.workspaceId, prompts: [{ text: 'x' }] },
      });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'GEO_PERMISSION_DENIED');
      await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: engineBody(a.workspaceId, double.baseUrl('e1')),
      });
      await call(app, 'POST', '/api/v1/geo/prompts', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, prompts: [{ text: 'q' }] },
      });
      const run = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 1 },
      });
      assert.equal(run.status, 202);
      assert.equal(run.headers.location, `/api/v1/geo/runs/${run.body.id}?workspaceId=${a.workspaceId}`);
      // Another tenant: its own workspace does not hold the run (404), A's workspace is a 403.
      const foreign = await call(app, 'GET', `/api/v1/geo/runs/${run.body.id}?workspaceId=${b.workspaceId}`, {
        key: b.keys.admin,
      });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.error.code, 'GEO_RUN_NOT_FOUND');
      const unknown = await call(
        app,
        'GET',
        `/api/v1/geo/runs/0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77?workspaceId=${b.workspaceId}`,
        {
          key: b.keys.admin,
        },
      );
      assert.deepEqual(
        unknown.body.error.message.replace(/\S+ not found/, ''),
        foreign.body.error.message.replace(/\S+ not found/, ''),
      );
      const crossed = await call(app, 'GET', `/api/v1/geo/runs/${run.body.id}?workspaceId=${a.workspaceId}`, {
        key: b.keys.admin,
      });
      assert.equal(crossed.status, 403);
      const answers = await call(app, 'GET', `/api/v1/geo/runs/${run.body.id}/answers?workspaceId=${b.workspaceId}`, {
        key: b.keys.admin,
      });
      assert.equal(answers.status, 404);
      const foreignRun = await call(app, 'POST', '/api/v1/geo/runs', {
        key: b.keys.admin,
        body: { workspaceId: b.workspaceId },
      });
      assert.equal(foreignRun.status, 422, 'B has no engine: A’s engines are not visible to it');
      const notMine = await call(
        app,
        'DELETE',
        `/api/v1/geo/engines/${run.body.engineIds[0]}?workspaceId=${b.workspaceId}`,
        {
          key: b.keys.admin,
        },
      );
      assert.equal(notMine.status, 404);
    });

    test('run input rules: samples bounded, unknown engines and prompts are 404, nothing to run is a 422, retries replay', async () => {
      const { app, a } = await freshGeo();
      const nothing = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId },
      });
      assert.equal(nothing.status, 422);
      assert.equal(nothing.body.error.code, 'GEO_NOTHING_TO_RUN');
      await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: engineBody(a.workspaceId, 'http://127.0.0.1:9'),
      });
      const noPrompts = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId },
      });
      assert.equal(noPrompts.status, 422);
      await call(app, 'POST', '/api/v1/geo/prompts', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, prompts: [{ text: 'q' }] },
      });
      for (const samples of [0, 21, 1.5]) {
        const bad = await call(app, 'POST', '/api/v1/geo/runs', {
          key: a.keys.write,
          body: { workspaceId: a.workspaceId, samples },
        });
        assert.equal(bad.status, 400, String(samples));
      }
      const unknownEngine = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, engineIds: ['0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77'] },
      });
      assert.equal(unknownEngine.status, 404);
      assert.equal(unknownEngine.body.error.code, 'GEO_ENGINE_NOT_FOUND');
      const unknownPrompt = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, promptIds: ['0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77'] },
      });
      assert.equal(unknownPrompt.status, 404);
      const badPrompt = await call(app, 'POST', '/api/v1/geo/prompts', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, prompts: [{ text: 'q', locale: 'not a locale!' }] },
      });
      assert.equal(badPrompt.status, 400);
      const headers = { 'idempotency-key': 'run-1' };
      const first = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        headers,
        body: { workspaceId: a.workspaceId },
      });
      const replay = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        headers,
        body: { workspaceId: a.workspaceId },
      });
      assert.equal(replay.body.id, first.body.id);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      const conflict = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        headers,
        body: { workspaceId: a.workspaceId, samples: 5 },
      });
      assert.equal(conflict.status, 409);
      const runs = await call(app, 'GET', `/api/v1/geo/runs?workspaceId=${a.workspaceId}`, { key: a.keys.read });
      assert.equal(runs.body.items.length, 1);
    });

    test('an engine failure is stored as a failed answer, never as a made-up one', async () => {
      const { app, a, ctx } = await freshGeo();
      await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: engineBody(a.workspaceId, 'http://127.0.0.1:9'),
      });
      await call(app, 'POST', '/api/v1/geo/prompts', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, prompts: [{ text: 'q' }] },
      });
      const run = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 1 },
      });
      await runMeasureWorkerOnce(ctx, 'w', { attempts: 1 });
      const done = await call(app, 'GET', `/api/v1/geo/runs/${run.body.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(done.body.status, 'completed');
      assert.equal(done.body.summary.failed, 1);
      assert.deepEqual(done.body.summary.metrics, {});
      const answers = await call(app, 'GET', `/api/v1/geo/runs/${run.body.id}/answers?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(answers.body.items[0].status, 'error');
      assert.match(answers.body.items[0].error, /could not be reached/);
    });

    test('schedules start each due run once and move on; alerts fire only on changes the intervals call real', async (t) => {
      const { app, a, ctx } = await freshGeo();
      const double = await startEngineDouble({
        acme: { default: [{ text: 'Acme is the answer.' }] },
        globex: { default: [{ text: 'Globex is the answer.' }] },
      });
      t.after(() => double.close());
      await call(app, 'POST', '/api/v1/geo/target-graph', {
        key: a.keys.write,
        headers: { 'idempotency-key': 'g' },
        body: {
          operation: 'import',
          workspaceId: a.workspaceId,
          targets: [
            { key: 'acme', name: 'Acme' },
            { key: 'globex', name: 'Globex', kind: 'competitor' },
          ],
          relations: [],
        },
      });
      const engine = await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: { ...engineBody(a.workspaceId, double.baseUrl('acme')), name: 'acme-engine' },
      });
      const other = await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: { ...engineBody(a.workspaceId, double.baseUrl('globex')), name: 'globex-engine' },
      });
      await call(app, 'POST', '/api/v1/geo/prompts', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, prompts: Array.from({ length: 10 }, (_, i) => ({ text: `q${i}` })) },
      });
      const schedule = await call(app, 'POST', '/api/v1/geo/schedules', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, everyHours: 24, samples: 2, engineIds: [engine.body.id] },
      });
      assert.equal(schedule.status, 201);
      assert.equal(await startDueSchedules(ctx), 1);
      assert.equal(await startDueSchedules(ctx), 0, 'the next run is due in 24 hours');
      const listed = await call(app, 'GET', `/api/v1/geo/schedules?workspaceId=${a.workspaceId}`, { key: a.keys.read });
      assert.ok(new Date(listed.body.items[0].nextRunAt).getTime() > Date.now() + 23 * 3_600_000);
      await runMeasureWorkerOnce(ctx, 'w');
      // Same prompts, the other engine: Acme is never named now (20/20 → 0/20).
      const rerun = { workspaceId: a.workspaceId, samples: 2, engineIds: [other.body.id] };
      await call(app, 'POST', '/api/v1/geo/runs', { key: a.keys.write, body: rerun });
      await runMeasureWorkerOnce(ctx, 'w');
      const alerts = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=alerts`, {
        key: a.keys.read,
      });
      const mention = alerts.body.items.find((x: any) => x.data.metric === 'mention_rate');
      assert.ok(mention, JSON.stringify(alerts.body.items.map((x: any) => x.data.metric)));
      assert.equal(mention.data.direction, 'down');
      assert.equal(mention.data.previous.value, 1);
      assert.equal(mention.data.current.value, 0);
      // A third run like the second: nothing changed, no new alert.
      await call(app, 'POST', '/api/v1/geo/runs', { key: a.keys.write, body: rerun });
      await runMeasureWorkerOnce(ctx, 'w');
      const after = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=alerts`, {
        key: a.keys.read,
      });
      assert.equal(after.body.items.length, alerts.body.items.length);
      const removed = await call(
        app,
        'DELETE',
        `/api/v1/geo/schedules/${schedule.body.id}?workspaceId=${a.workspaceId}`,
        {
          key: a.keys.write,
        },
      );
      assert.equal(removed.status, 204);
    });
  });
}
