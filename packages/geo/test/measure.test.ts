import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runMeasureWorkerOnce } from '../src/measure/measure-worker.ts';
import { computeRunMetrics } from '../src/measure/run-finalize.ts';
import { type EngineDouble, type ScriptedAnswer, startEngineDouble } from './engine-double.ts';
import { call, testDatabaseTargets } from './helper.ts';
import { type SuiteGeo as GeoUnderTest, sharedGeo } from './measure-suite.ts';

const P1 = 'best crm for startups';
const P2 = 'cheapest crm';
const P3 = 'crm with the best support';

/** Two engines: one answering Perplexity-style (`citations` + [n] markers), one OpenAI-style (annotations, URLs in text). */
export const SCRIPTS: Record<string, Record<string, ScriptedAnswer[]>> = {
  e1: {
    [P1]: [
      {
        text: 'Acme is the best choice for startups [1]. Globex is also popular [2].',
        citations: ['https://acme.com/crm', 'https://globex.com/'],
      },
      {
        text: 'Globex leads the market [1]. Initech is cheaper [2].',
        citations: ['https://globex.com/a', 'https://initech.io/b'],
      },
    ],
    [P2]: [
      { text: 'Initech is the cheapest [1].', citations: ['https://initech.io/pricing'] },
      {
        text: "Acmeology is not a brand. Try Acme's free tier, it is excellent [1].",
        citations: [{ url: 'https://docs.acme.com/free', title: 'Free tier' }],
      },
    ],
    [P3]: [
      { text: 'Globex has great support [1].', citations: ['https://globex.com/support'] },
      { text: 'Globex support is reliable.' },
    ],
  },
  judge: {
    default: [
      {
        text: 'Ratings: {"relevance": 4, "influence": 3, "uniqueness": 2, "position": 5, "amount": 1, "click": 3, "diversity": 3}',
      },
    ],
  },
  e2: {
    [P1]: [
      {
        text: 'Top picks: Globex and ACME Corp. See https://www.acme.com/compare for details.',
        annotations: [{ type: 'url_citation', url_citation: { url: 'https://globex.com/review', title: 'Review' } }],
      },
      { text: 'I would avoid Initech; it is buggy.' },
    ],
    [P2]: [{ text: 'Café Acmé offers a cheap plan.' }, { text: 'Subacme and acmes are unrelated words.' }],
    [P3]: [{ text: 'Globex or Initech.' }, { text: 'No clear winner.' }],
  },
};

/** The Wilson score interval, written out again here so the test does not trust the implementation. */
function wilson(k: number, n: number) {
  const z = 1.959963984540054;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, c - h), Math.min(1, c + h)];
}

export async function setupMeasurement(
  geo: GeoUnderTest,
  double: EngineDouble,
  options: { concurrency?: number } = {},
) {
  const { app, a } = geo;
  const graph = await call(app, 'POST', '/api/v1/geo/target-graph', {
    key: a.keys.write,
    headers: { 'idempotency-key': `graph-${Math.random()}` },
    body: {
      operation: 'import',
      workspaceId: a.workspaceId,
      targets: [
        { key: 'acme', name: 'Acme', kind: 'brand', url: 'https://www.acme.com', attributes: { names: ['ACME Corp'] } },
        { key: 'globex', name: 'Globex', kind: 'competitor', url: 'https://globex.com' },
        {
          key: 'initech',
          name: 'Initech',
          kind: 'brand',
          url: 'https://initech.io',
          attributes: { role: 'competitor' },
        },
        { key: 'crm', name: 'CRM software', kind: 'topic' },
      ],
      relations: [],
    },
  });
  assert.equal(graph.status, 200, JSON.stringify(graph.body));
  const engines = [];
  for (const [name, price] of [
    ['e1', '2.50'],
    ['e2', '0'],
  ] as const) {
    const engine = await call(app, 'POST', '/api/v1/geo/engines', {
      key: a.keys.write,
      body: {
        workspaceId: a.workspaceId,
        name,
        provider: 'chat_completions',
        baseUrl: double.baseUrl(name),
        model: 'double-1',
        apiKey: 'sk-test-secret',
        concurrency: options.concurrency ?? 1,
        requestsPerMinute: 100_000,
        inputPricePerMillionTokens: price,
        outputPricePerMillionTokens: price === '0' ? '0' : '10',
      },
    });
    assert.equal(engine.status, 201, JSON.stringify(engine.body));
    engines.push(engine.body);
  }
  const prompts = await call(app, 'POST', '/api/v1/geo/prompts', {
    key: a.keys.write,
    body: {
      workspaceId: a.workspaceId,
      prompts: [
        { text: P1, topic: 'crm', intent: 'commercial' },
        { text: P2, topic: 'crm', persona: 'a founder' },
        { text: P3, locale: 'en-GB' },
      ],
    },
  });
  assert.equal(prompts.status, 200, JSON.stringify(prompts.body));
  return { engines, promptIds: prompts.body.ids as string[] };
}

for (const target of testDatabaseTargets()) {
  describe(`measurement runs (${target.dialect})`, () => {
    const freshGeo = sharedGeo(target, { KEEL_ALLOW_PRIVATE_URLS: 'true' });
    test('a run against a deterministic engine double: metrics match hand-computed values exactly', async (t) => {
      const geo = await freshGeo();
      const double = await startEngineDouble(SCRIPTS);
      t.after(() => double.close());
      const { app, a, ctx } = geo;
      const { engines } = await setupMeasurement(geo, double);
      const created = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 2, seed: 42 },
      });
      assert.equal(created.status, 202, JSON.stringify(created.body));
      assert.equal(created.body.totalTasks, 12);
      assert.equal(await runMeasureWorkerOnce(ctx, 'w1'), 1);
      const run = await call(app, 'GET', `/api/v1/geo/runs/${created.body.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(run.body.status, 'completed');
      assert.equal(run.body.summary.answered, 12);
      assert.equal(run.body.summary.failed, 0);
      assert.equal(run.body.summary.inputTokens, 120);
      assert.equal(run.body.summary.outputTokens, 240);
      // e1: 6 answers × (10 × 2.50 + 20 × 10) per million tokens = 6 × 225 micro-units.
      assert.equal(run.body.summary.cost, '0.001350');
      assert.deepEqual(
        run.body.summary.skipped.map((s: { metric: string }) => s.metric),
        ['subjective_impression'],
      );
      // Every task was asked exactly once.
      assert.equal(
        [...double.asked.values()].reduce((x, y) => x + y, 0),
        12,
      );

      const metrics = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=metrics&limit=500`,
        {
          key: a.keys.read,
        },
      );
      const byKey = new Map<string, any>(metrics.body.items.map((m: any) => [m.key, m]));
      const metric = (name: string, scope = 'all') => {
        const m = byKey.get(`${name}:${scope}`);
        assert.ok(m, `${name}:${scope}`);
        assert.equal(m.version.runId, created.body.id);
        assert.equal(m.version.definitionVersion, `${name}@1`);
        assert.equal(m.confidence.value, m.data.value);
        assert.ok(m.confidence.interval[0] <= m.data.value && m.data.value <= m.confidence.interval[1]);
        assert.ok(m.evidence.some((e: any) => e.type === 'run' && e.ref === created.body.id));
        return m;
      };
      const e = Math.exp(-0.5);
      // Hand-computed (see SCRIPTS): 12 answers; own brand named in 4, own domain cited in 3.
      const mention = metric('mention_rate');
      assert.equal(mention.data.value, 4 / 12);
      assert.equal(mention.data.sampleCount, 12);
      assert.deepEqual(mention.confidence.interval, wilson(4, 12));
      assert.equal(mention.data.method, 'wilson');
      const citation = metric('citation_rate');
      assert.equal(citation.data.value, 3 / 12);
      assert.deepEqual(citation.confidence.interval, wilson(3, 12));
      assert.equal(metric('share_of_voice').data.value, 4 / 14);
      assert.equal(metric('average_mention_position').data.value, 5 / 4);
      assert.equal(metric('average_mention_position').data.sampleCount, 4);
      assert.equal(metric('citation_share').data.value, 3 / 9);
      // Task order: P1 (e1 s1, e1 s2, e2 s1, e2 s2), P2 (…), P3 (…).
      const pawcSum = 0 + 7 / 11 + 0 + (3 * e) / 9 + 0 + 0 + (8 * e) / 13 + 0 + 0 + 0 + 0 + 0 + 0;
      assert.equal(metric('position_adjusted_word_count').data.value, pawcSum / 12);
      assert.equal(metric('sentiment').data.value, 3 / 4);
      assert.equal(metric('sentiment').data.method, 'bootstrap');
      const [e1, e2] = engines as { id: string }[];
      assert.equal(metric('mention_rate', `engine:${e1!.id}`).data.value, 2 / 6);
      assert.equal(metric('citation_rate', `engine:${e2!.id}`).data.value, 1 / 6);
      assert.equal(metric('share_of_voice', `engine:${e1!.id}`).data.value, 2 / 8);
      assert.equal(metric('average_mention_position', `engine:${e2!.id}`).data.value, 3 / 2);
      assert.equal(metric('citation_share', `engine:${e1!.id}`).data.value, 2 / 7);
      assert.equal(metric('sentiment', `engine:${e2!.id}`).data.value, 1 / 2);
      assert.equal(metric('mention_rate', `engine:${e1!.id}`).data.metric, 'mention_rate.by_engine');
      assert.equal(byKey.get('entity_mention_rate:globex').data.value, 6 / 12);
      assert.equal(byKey.get('entity_mention_rate:initech').data.value, 4 / 12);
      assert.equal(byKey.get('entity_mention_rate:acme').data.value, 4 / 12);
      assert.equal(byKey.has('entity_mention_rate:crm'), false);

      // Recomputing gives the same values and intervals (seeded bootstrap, task order).
      const again = await computeRunMetrics(ctx.db, created.body.id, 42);
      const sov = again.scopes.find((s) => s.scope === 'all')!.results.find((r) => r.metric === 'share_of_voice')!;
      assert.deepEqual([sov.interval.low, sov.interval.high], metric('share_of_voice').confidence.interval);

      // A second run with the same seed against the same double gives identical metrics.
      for (const key of double.asked.keys()) double.asked.set(key, 0);
      const second = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 2, seed: 42 },
      });
      await runMeasureWorkerOnce(ctx, 'w1');
      const secondMetrics = await computeRunMetrics(ctx.db, second.body.id, 42);
      const strip = (x: typeof again) =>
        x.scopes.map((s) =>
          s.results.map((r) => [s.scope, r.metric, r.interval.value, r.interval.low, r.interval.high]),
        );
      assert.deepEqual(strip(secondMetrics), strip(again));

      // The evidence: answers with their citations.
      const answers = await call(
        app,
        'GET',
        `/api/v1/geo/runs/${created.body.id}/answers?workspaceId=${a.workspaceId}&limit=500`,
        { key: a.keys.read },
      );
      assert.equal(answers.body.items.length, 12);
      const annotated = answers.body.items.find((x: any) => x.text.startsWith('Top picks'));
      assert.deepEqual(
        annotated.citations.map((c: any) => [c.url, c.source]),
        [
          ['https://globex.com/review', 'annotation'],
          ['https://www.acme.com/compare', 'text'],
        ],
      );
      const one = await call(
        app,
        'GET',
        `/api/v1/geo/answers/${mention.evidence[1].ref}?workspaceId=${a.workspaceId}`,
        {
          key: a.keys.read,
        },
      );
      assert.equal(one.status, 200);
    });

    test('a run writes an immutable report, evidence-backed recommendations and the AI visibility dashboard', async (t) => {
      const geo = await freshGeo();
      const double = await startEngineDouble(SCRIPTS);
      t.after(() => double.close());
      const { app, a, ctx } = geo;
      await setupMeasurement(geo, double);
      const created = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 2, seed: 7 },
      });
      await runMeasureWorkerOnce(ctx, 'w1');
      const run = await call(app, 'GET', `/api/v1/geo/runs/${created.body.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      const reports = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=reports`, {
        key: a.keys.read,
      });
      assert.equal(reports.body.items.length, 1);
      const report = reports.body.items[0];
      assert.equal(report.id, run.body.summary.reportId);
      assert.equal(report.version.runId, created.body.id);
      assert.ok(
        report.data.rows.some((r: any) => r.metric === 'mention_rate' && r.scope === 'all' && r.value === 4 / 12),
      );
      const recommendations = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=recommendations`,
        { key: a.keys.read },
      );
      // P3: Globex named in 3 of 4 answers, Acme in none.
      const gap = recommendations.body.items.find((r: any) => r.data.kind === 'prompt_gap');
      assert.ok(gap);
      assert.deepEqual(gap.data.competitors[0], { key: 'globex', answers: 3 });
      assert.equal(gap.data.answers, 4);
      assert.ok(gap.evidence.some((e: any) => e.type === 'answer'));
      assert.ok(gap.evidence.some((e: any) => e.type === 'metric'));
      const dashboards = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=dashboards`,
        {
          key: a.keys.read,
        },
      );
      assert.equal(dashboards.body.items.length, 1);
      assert.equal(dashboards.body.items[0].data.title, 'AI visibility');
      // The share page renders it with the run's metric series.
      const share = await call(app, 'POST', `/api/v1/geo/dashboards/${dashboards.body.items[0].id}/shares`, {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId },
      });
      assert.equal(share.status, 201, JSON.stringify(share.body));
      const shared = await call(app, 'GET', '/api/v1/geo/shared-dashboard', {
        headers: { 'x-share-token': share.body.token },
      });
      assert.equal(shared.status, 200);
      const widget = shared.body.dashboard.widgets.find((w: any) => w.metric === 'mention_rate');
      assert.deepEqual(
        widget.points.map((p: any) => p.value),
        [4 / 12],
      );
      // geo_get_report reads it (the latest) through MCP.
      const mcp = await app.inject({
        method: 'POST',
        url: '/api/v1/geo/mcp',
        headers: {
          authorization: `Bearer ${a.keys.read}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'geo_get_report', arguments: { workspaceId: a.workspaceId } },
        }),
      });
      assert.equal(mcp.statusCode, 200);
      assert.ok(mcp.body.includes(run.body.summary.reportId));
      // A second run: no second dashboard.
      await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, samples: 1 },
      });
      await runMeasureWorkerOnce(ctx, 'w1');
      const after = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=dashboards`, {
        key: a.keys.read,
      });
      assert.equal(after.body.items.length, 1);
    });
    test('with a judge engine, subjective impression is measured per the GEO paper (0 where the brand is absent)', async (t) => {
      const geo = await freshGeo();
      const double = await startEngineDouble(SCRIPTS);
      t.after(() => double.close());
      const { app, a, ctx } = geo;
      const { engines } = await setupMeasurement(geo, double);
      const judge = await call(app, 'POST', '/api/v1/geo/engines', {
        key: a.keys.write,
        body: {
          workspaceId: a.workspaceId,
          name: 'judge',
          provider: 'chat_completions',
          baseUrl: double.baseUrl('judge'),
          model: 'judge-1',
          requestsPerMinute: 100_000,
        },
      });
      const created = await call(app, 'POST', '/api/v1/geo/runs', {
        key: a.keys.write,
        body: {
          workspaceId: a.workspaceId,
          samples: 2,
          seed: 5,
          engineIds: engines.map((e: { id: string }) => e.id),
          judgeEngineId: judge.body.id,
        },
      });
      assert.equal(created.status, 202);
      await runMeasureWorkerOnce(ctx, 'w1');
      const run = await call(app, 'GET', `/api/v1/geo/runs/${created.body.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.deepEqual(run.body.summary.skipped, []);
      // (4 + 3 + 2 + 5 + 1 + 3 + 3) / 7 / 5 = 0.6 for the 4 answers naming or citing Acme, 0 for the 8 others;
      // the judge was asked only those 4 times.
      const si = 21 / 7 / 5;
      const sum = 0 + si + 0 + si + 0 + 0 + si + si + 0 + 0 + 0 + 0 + 0;
      assert.equal(run.body.summary.metrics.subjective_impression.value, sum / 12);
      assert.equal(run.body.summary.metrics.subjective_impression.sampleCount, 12);
      const judged = [...double.asked.entries()].filter(([key]) => key.startsWith('judge|'));
      assert.equal(
        judged.reduce((n, [, count]) => n + count, 0),
        4,
      );
    });
  });
}
