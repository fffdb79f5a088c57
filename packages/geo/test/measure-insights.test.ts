import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runMeasureWorkerOnce } from '../src/measure/measure-worker.ts';
import { startEngineDouble } from './engine-double.ts';
import { call, testDatabaseTargets } from './helper.ts';
import { sharedGeo } from './measure-suite.ts';

for (const target of testDatabaseTargets()) {
  describe(`attribution, experiments and simulations (${target.dialect})`, () => {
    const freshGeo = sharedGeo(target, { KEEL_ALLOW_PRIVATE_URLS: 'true' });
    test('AI referrals and crawler hits are attributed to the target whose URL path is the longest prefix', async () => {
      const { app, a } = await freshGeo();
      await call(app, 'POST', '/api/v1/geo/target-graph', {
        key: a.keys.write,
        headers: { 'idempotency-key': 'g' },
        body: {
          operation: 'import',
          workspaceId: a.workspaceId,
          targets: [
            { key: 'site', name: 'Shop', url: 'https://shop.example/' },
            { key: 'products', name: 'Products', kind: 'page', url: 'https://shop.example/products' },
          ],
          relations: [],
        },
      });
      const events = [
        ...Array.from({ length: 3 }, (_, i) => ({
          type: 'pageview',
          url: `https://shop.example/products/${i}`,
          referrer: 'https://chatgpt.com/',
        })),
        { type: 'pageview', url: 'https://shop.example/about', referrer: 'https://www.perplexity.ai/search' },
        { type: 'pageview', url: 'https://shop.example/productsale', referrer: 'https://chatgpt.com/' },
        {
          type: 'pageview',
          url: 'https://shop.example/products/9',
          userAgent: 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)',
        },
        { type: 'pageview', url: 'https://shop.example/products/9', referrer: 'https://www.google.com/' },
      ];
      const sent = await call(app, 'POST', '/api/v2/geo/events', {
        headers: { 'x-site-token': a.siteToken },
        body: { consent: { analytics: true }, events },
      });
      assert.equal(sent.status, 202);
      const denied = await call(app, 'POST', '/api/v1/geo/attribution', {
        key: a.keys.read,
        body: { workspaceId: a.workspaceId },
      });
      assert.equal(denied.status, 403);
      const result = await call(app, 'POST', '/api/v1/geo/attribution', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, days: 7 },
      });
      assert.equal(result.status, 201, JSON.stringify(result.body));
      const byKey = new Map(
        result.body.items.map((item: any) => [item.key.split(':').slice(0, 2).join(':'), item.data]),
      );
      const chatgpt: any = byKey.get('referral:chatgpt');
      assert.equal(chatgpt.hits, 4);
      // /products/0–2 → products; /productsale is not under /products → the site root.
      assert.deepEqual(chatgpt.targets, [
        { key: 'products', hits: 3 },
        { key: 'site', hits: 1 },
      ]);
      assert.equal((byKey.get('referral:perplexity') as any).targets[0].key, 'site');
      const crawler: any = [...byKey.entries()].find(([k]) => String(k).startsWith('crawler:'))?.[1];
      assert.ok(crawler, JSON.stringify([...byKey.keys()]));
      assert.equal(crawler.hits, 1);
      assert.equal(crawler.targets[0].key, 'products');
      assert.equal(byKey.size, 3, 'the Google referral is not AI traffic');
      const listed = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=attribution`, {
        key: a.keys.read,
      });
      assert.equal(listed.body.items.length, 3);
    });

    test('an observed experiment is tested for significance; a simulation is kept apart in mode simulated', async (t) => {
      const { app, a, ctx } = await freshGeo();
      const double = await startEngineDouble({
        before: {
          default: [
            { text: 'Globex is the pick.' },
            { text: 'Globex again.' },
            { text: 'Globex, then Acme.' },
            { text: 'Initech.' },
          ],
        },
        after: {
          default: [
            { text: 'Acme is the pick.' },
            { text: 'Acme, then Globex.' },
            { text: 'Acme again.' },
            { text: 'Globex.' },
          ],
        },
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
      const engine = async (name: string) =>
        (
          await call(app, 'POST', '/api/v1/geo/engines', {
            key: a.keys.write,
            body: {
              workspaceId: a.workspaceId,
              name,
              provider: 'chat_completions',
              baseUrl: double.baseUrl(name),
              model: 'm',
              requestsPerMinute: 100_000,
            },
          })
        ).body.id;
      const before = await engine('before');
      const after = await engine('after');
      await call(app, 'POST', '/api/v1/geo/prompts', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, prompts: Array.from({ length: 25 }, (_, i) => ({ text: `q${i}` })) },
      });
      const control = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 4, engineIds: [before] },
      });
      await runMeasureWorkerOnce(ctx, 'w');
      const running = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 4, engineIds: [after] },
      });
      const early = await call(app, 'POST', '/api/v1/geo/experiments', {
        key: a.keys.write,
        body: {
          workspaceId: a.workspaceId,
          name: 'faq page',
          metric: 'mention_rate',
          controlRunId: control.body.id,
          treatmentRunId: running.body.id,
        },
      });
      assert.equal(early.status, 409);
      assert.equal(early.body.error.code, 'GEO_RUN_NOT_COMPLETE');
      await runMeasureWorkerOnce(ctx, 'w');
      const experiment = await call(app, 'POST', '/api/v1/geo/experiments', {
        key: a.keys.write,
        body: {
          workspaceId: a.workspaceId,
          name: 'faq page',
          metric: 'mention_rate',
          controlRunId: control.body.id,
          treatmentRunId: running.body.id,
          change: 'added an FAQ with statistics to /crm',
        },
      });
      assert.equal(experiment.status, 201, JSON.stringify(experiment.body));
      assert.equal(experiment.body.mode, 'observed');
      // 25 of 100 answers name Acme before, 75 of 100 after.
      assert.equal(experiment.body.data.control.value, 0.25);
      assert.equal(experiment.body.data.treatment.value, 0.75);
      assert.equal(experiment.body.data.significant, true);
      assert.ok(experiment.body.data.pValue < 1e-6);

      const simulation = await call(app, 'POST', '/api/v1/geo/simulations', {
        key: a.keys.write,
        body: {
          workspaceId: a.workspaceId,
          name: 'what if the FAQ ships',
          engineIds: [before],
          samples: 4,
          baselineRunId: control.body.id,
          content: { url: 'https://acme.com/crm', text: 'Acme CRM: 30% faster onboarding.' },
        },
      });
      assert.equal(simulation.status, 202, JSON.stringify(simulation.body));
      assert.equal(simulation.body.simulation, true);
      await runMeasureWorkerOnce(ctx, 'w');
      const observed = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=experiments`,
        { key: a.keys.read },
      );
      assert.deepEqual(
        observed.body.items.map((x: any) => x.mode),
        ['observed'],
      );
      const simulated = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=experiments&mode=simulated`,
        {
          key: a.keys.read,
        },
      );
      const rate = simulated.body.items.find((x: any) => x.data.metric === 'mention_rate');
      assert.equal(rate.mode, 'simulated');
      assert.equal(rate.data.baseline.control.runId, control.body.id);
      assert.equal(rate.data.baseline.significant, false);
      // The simulation wrote no metrics: the metrics dataset holds only the two observed runs.
      const metrics = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=metrics&limit=500`,
        { key: a.keys.read },
      );
      assert.ok(metrics.body.items.every((m: any) => m.version.runId !== simulation.body.id));
    });
  });
}
