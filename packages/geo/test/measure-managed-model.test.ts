import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { awsModulesLoadedBy, converseAnswer, startFakeBedrock, useFakeAwsCredentials } from '@keel/models/testing';
import { runMeasureWorkerOnce } from '../src/measure/measure-worker.ts';
import { buildGeo, call, testDatabaseTargets } from './helper.ts';

useFakeAwsCredentials();

test('importing @keel/geo and building its app does not load the AWS SDK (only asking a managed-model engine does)', async () => {
  const seen = await awsModulesLoadedBy(
    `
    const geo = await import('@keel/geo');
    const { openTestDatabase } = await import('@keel/core/testing');
    const { createMemoryCache } = await import('@keel/core');
    const database = await openTestDatabase(${JSON.stringify(testDatabaseTargets()[0])}, 'geo');
    await geo.prepareGeoDatabase(database.db);
    const config = geo.readGeoConfig({ LOG_LEVEL: 'silent', KEEL_SECRET_KEY: '${'ab'.repeat(32)}' });
    const { app } = await geo.buildGeoApp({ config, db: database.db, cache: createMemoryCache() });
    await app.ready();
    await app.close();
    await database.close();
  `,
    { cwd: path.resolve(import.meta.dirname, '..') },
  );
  assert.deepEqual(seen, []);
});

for (const target of testDatabaseTargets()) {
  describe(`managed-model engines (${target.dialect})`, () => {
    test('a run against the managed model (fake Bedrock endpoint): answers stored with their sources, tokens and cost counted', async (t) => {
      const bedrock = await startFakeBedrock(t, (call) => {
        const question = call.body.messages?.[0]?.content?.[0]?.text ?? '';
        return question.includes('support')
          ? { status: 429, body: { message: 'Too many requests' }, errorType: 'ThrottlingException' }
          : { body: converseAnswer('Acme leads, see https://acme.com/crm. Globex follows.') };
      });
      const { app, a, ctx } = await buildGeo(t, target, { MANAGED_MODEL_ENDPOINT_OVERRIDE: bedrock.url });
      await call(app, 'POST', '/api/v1/geo/target-graph', {
        key: a.keys.write,
        headers: { 'idempotency-key': 'g' },
        body: {
          operation: 'import',
          workspaceId: a.workspaceId,
          targets: [
            { key: 'acme', name: 'Acme', url: 'https://acme.com/' },
            { key: 'globex', name: 'Globex', kind: 'competitor' },
          ],
          relations: [],
        },
      });
      const engine = await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: {
          workspaceId: a.workspaceId,
          name: 'bedrock',
          provider: 'managed_model',
          region: 'us-east-1',
          model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
          inputPricePerMillionTokens: '1000',
          outputPricePerMillionTokens: '5000',
          requestsPerMinute: 100_000,
        },
      });
      assert.equal(engine.status, 201, JSON.stringify(engine.body));
      assert.deepEqual(
        {
          provider: engine.body.provider,
          region: engine.body.region,
          baseUrl: engine.body.baseUrl,
          hasApiKey: engine.body.hasApiKey,
        },
        { provider: 'managed_model', region: 'us-east-1', baseUrl: null, hasApiKey: false },
      );
      await call(app, 'POST', '/api/v1/geo/prompts', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, prompts: [{ text: 'best crm' }, { text: 'crm with good support' }] },
      });
      const created = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 2 },
      });
      assert.equal(created.status, 202);
      await runMeasureWorkerOnce(ctx, 'w', { attempts: 1 });
      const done = await call(app, 'GET', `/api/v1/geo/runs/${created.body.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(done.body.status, 'completed', JSON.stringify(done.body));

      // Every call reached the endpoint as a Converse request of the configured model.
      assert.equal(bedrock.calls.length, 4);
      for (const c of bedrock.calls) {
        assert.equal(c.path, '/model/anthropic.claude-3-5-haiku-20241022-v1:0/converse');
        assert.match(
          String(c.headers.authorization),
          /^AWS4-HMAC-SHA256 Credential=AKIDLOCALTESTONLY000\/\d+\/us-east-1\/bedrock\//,
        );
        assert.match(c.body.system[0].text, /Cite your sources with URLs/);
      }
      const answers = await call(
        app,
        'GET',
        `/api/v1/geo/runs/${created.body.id}/answers?workspaceId=${a.workspaceId}`,
        { key: a.keys.read },
      );
      const ok = answers.body.items.filter((x: any) => x.status === 'ok');
      const failed = answers.body.items.filter((x: any) => x.status === 'error');
      assert.equal(ok.length, 2);
      assert.equal(failed.length, 2, 'a throttled ask is stored as failed (after its retries), never invented');
      assert.match(failed[0].error, /HTTP 429/);
      for (const answer of ok) {
        assert.equal(answer.text, 'Acme leads, see https://acme.com/crm. Globex follows.');
        assert.deepEqual(answer.citations, [{ url: 'https://acme.com/crm', title: null, source: 'text' }]);
        assert.deepEqual([answer.inputTokens, answer.outputTokens], [12, 4]);
      }
      // Tokens and cost: 2 answers × (12 in, 4 out) at 1000 / 5000 per million = 2 × 0.032.
      assert.deepEqual(
        {
          answered: done.body.summary.answered,
          failed: done.body.summary.failed,
          inputTokens: done.body.summary.inputTokens,
          outputTokens: done.body.summary.outputTokens,
          cost: done.body.summary.cost,
        },
        { answered: 2, failed: 2, inputTokens: 24, outputTokens: 8, cost: '0.064000' },
      );
      assert.equal(done.body.summary.metrics.mention_rate.value, 1, 'both answers name Acme');
      assert.equal(done.body.summary.metrics.mention_rate.sampleCount, 2);
    });

    test('managed-model engines take a region and no base URL or key; chat-completions engines the reverse', async (t) => {
      const { app, a } = await buildGeo(t, target);
      const base = { workspaceId: a.workspaceId, name: 'x', model: 'm' };
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ provider: 'managed_model' }, /region: a managed model needs its AWS region/],
        [{ provider: 'managed_model', region: 'Mars-1' }, /region/],
        [{ provider: 'managed_model', region: 'eu-west-1', baseUrl: 'https://x.example' }, /baseUrl: a managed model/],
        [{ provider: 'managed_model', region: 'eu-west-1', apiKey: 'sk' }, /apiKey: a managed model uses/],
        [{ provider: 'chat_completions' }, /baseUrl: a chat-completions engine needs its URL/],
        [
          { provider: 'chat_completions', baseUrl: 'https://api.example.com/v1', region: 'us-east-1' },
          /region applies/,
        ],
        [{ provider: 'bedrock', region: 'us-east-1' }, /provider/],
      ];
      for (const [body, message] of cases) {
        const response = await call(app, 'POST', '/api/v1/geo/engines', {
          key: a.keys.write,
          body: { ...base, ...body },
        });
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.match(response.body.error.message, message, JSON.stringify(body));
      }
      const listed = await call(app, 'GET', `/api/v1/geo/engines?workspaceId=${a.workspaceId}`, { key: a.keys.read });
      assert.deepEqual(listed.body.items, []);
    });
  });
}
