import { type Executor, fromJsonColumn, withTransaction } from '@keel/core';
import type { Insertable } from 'kysely';
import type { GeoContext } from '../context.ts';
import { withApiJson } from '../datasets/dataset-service.ts';
import { findRecordByKey, insertRecords, overallMetricRecords } from '../datasets/dataset-store.ts';
import type { DatasetRecordTable, GeoDb } from '../db/schema.ts';
import { uuidv7 } from '../ids.ts';
import type { AnswerFeatures } from './analyze.ts';
import { microsToDecimal } from './engine-service.ts';
import { simulationRecords } from './experiment-service.ts';
import { MeasureErrors } from './measure-errors.ts';
import {
  enginesByIds,
  findRun,
  pageAnswersInTaskOrder,
  previousCompletedRun,
  promptsByIds,
  runTotals,
  updateRun,
} from './measure-store.ts';
import { type MetricResult, ScopeMetrics } from './metrics.ts';
import { PoissonWeights, wilsonInterval } from './stats.ts';

const PAGE = 1000;
const MAX_RECOMMENDATIONS = 20;
const MAX_ENTITY_METRICS = 100;
/** The record key of the ready-made dashboard created with a workspace's first run. */
export const AI_VISIBILITY_DASHBOARD_KEY = 'ai-visibility';
export const DASHBOARD_WIDGETS = [
  { metric: 'mention_rate', title: 'Mention rate (visibility)', type: 'line' },
  { metric: 'share_of_voice', title: 'Share of voice', type: 'line' },
  { metric: 'citation_rate', title: 'Citation rate', type: 'line' },
  { metric: 'citation_share', title: 'Citation share', type: 'line' },
  { metric: 'average_mention_position', title: 'Average mention position', type: 'line' },
  { metric: 'position_adjusted_word_count', title: 'Position-adjusted word count', type: 'line' },
  { metric: 'sentiment', title: 'Sentiment', type: 'line' },
] as const;

interface PromptTally {
  promptId: string;
  n: number;
  own: number;
  competitors: Map<string, number>;
  answersWithoutOwn: string[];
}

/** The metrics of a run computed from its stored answers, in task order (the same every time for the same run). */
export async function computeRunMetrics(db: Executor<GeoDb>, runId: string, seed: number, replicates = 1000) {
  const scopes = new Map<string, ScopeMetrics>();
  const weights = new PoissonWeights(seed, replicates);
  const scope = (name: string) => {
    let s = scopes.get(name);
    if (!s) {
      s = new ScopeMetrics(name, replicates);
      scopes.set(name, s);
    }
    return s;
  };
  const all = scope('all');
  const entityCounts = new Map<string, { role: string; answers: number }>();
  let okAnswers = 0;
  const gaps: PromptTally[] = [];
  let tally: PromptTally | undefined;
  const closeTally = () => {
    if (!tally || tally.n === 0) return;
    const competitorAnswers = Math.max(0, ...tally.competitors.values());
    // A gap: competitors are named in at least half of the prompt's answers, the own brand in none.
    if (tally.own === 0 && competitorAnswers * 2 >= tally.n) {
      gaps.push(tally);
      gaps.sort((a, b) => Math.max(...b.competitors.values()) / b.n - Math.max(...a.competitors.values()) / a.n);
      if (gaps.length > MAX_RECOMMENDATIONS) gaps.pop();
    }
  };
  let after: { promptId: string; engineId: string; sample: number } | undefined;
  for (;;) {
    const page = await pageAnswersInTaskOrder(db, runId, after, PAGE);
    for (const answer of page) {
      if (answer.status !== 'ok') continue;
      const features = fromJsonColumn<AnswerFeatures>(answer.features);
      okAnswers++;
      const w = weights.next();
      all.add(answer.id, features, w);
      scope(`engine:${answer.engine_id}`).add(answer.id, features, w);
      for (const mention of features.mentions) {
        const entry = entityCounts.get(mention.key) ?? { role: mention.role, answers: 0 };
        entry.answers++;
        entityCounts.set(mention.key, entry);
      }
      if (tally?.promptId !== answer.prompt_id) {
        closeTally();
        tally = { promptId: answer.prompt_id, n: 0, own: 0, competitors: new Map(), answersWithoutOwn: [] };
      }
      tally.n++;
      if (features.ownMentioned) tally.own++;
      else if (tally.answersWithoutOwn.length < 5) tally.answersWithoutOwn.push(answer.id);
      for (const mention of features.mentions)
        if (mention.role === 'competitor')
          tally.competitors.set(mention.key, (tally.competitors.get(mention.key) ?? 0) + 1);
    }
    if (page.length < PAGE) break;
    const last = page.at(-1)!;
    after = { promptId: last.prompt_id, engineId: last.engine_id, sample: Number(last.sample) };
  }
  closeTally();
  const entities = [...entityCounts.entries()]
    .sort((a, b) => b[1].answers - a[1].answers || (a[0] < b[0] ? -1 : 1))
    .slice(0, MAX_ENTITY_METRICS)
    .map(([key, entry]) => ({
      key,
      role: entry.role,
      answers: entry.answers,
      interval: okAnswers === 0 ? null : wilsonInterval(entry.answers, okAnswers),
    }));
  return {
    okAnswers,
    scopes: [...scopes.values()].map((s) => ({ scope: s.scope, results: s.results() })),
    entities,
    gaps,
  };
}

type NewRecord = Omit<Insertable<DatasetRecordTable>, 'api_json'>;

function record(
  workspaceId: string,
  runId: string,
  now: string,
  fields: {
    dataset: string;
    key: string;
    definitionVersion: string;
    data: Record<string, unknown>;
    confidence?: { value: number; low: number; high: number } | undefined;
    evidence: { type: string; ref: string; description?: string }[];
  },
): NewRecord & { id: string } {
  return {
    id: uuidv7(),
    workspace_id: workspaceId,
    dataset: fields.dataset,
    mode: '',
    record_key: fields.key,
    definition_version: fields.definitionVersion,
    run_id: runId,
    import_id: null,
    computed_at: now,
    data: JSON.stringify(fields.data),
    confidence_value: fields.confidence?.value ?? null,
    confidence_low: fields.confidence?.low ?? null,
    confidence_high: fields.confidence?.high ?? null,
    evidence: JSON.stringify(fields.evidence),
    status: null,
    subject_hash: null,
    created_at: now,
    updated_at: now,
  };
}

const answerEvidence = (ids: string[], runId: string) =>
  ids.map((id) => ({ type: 'answer', ref: id, description: `answer of run ${runId}` }));

/**
 * Completes a run in one transaction: its metrics (dataset `metrics`, each with run id, definition version, sample
 * count and a 95% interval, evidence = the run and sample answers), an immutable report (`reports`),
 * recommendations derived from the evidence (`recommendations`), alerts on changes since the previous run that the
 * intervals say are real (`alerts`), the ready-made "AI visibility" dashboard on a workspace's first run
 * (`dashboards`), and the run's summary. Recomputing the same run's metrics gives the same values and intervals.
 */
export async function finalizeRun(ctx: GeoContext, runId: string): Promise<void> {
  const run = await findRun(ctx.db, undefined, runId);
  if (!run) throw MeasureErrors.runNotFound(runId);
  if (run.status === 'completed') return;
  const computed = await computeRunMetrics(ctx.db, run.id, Number(run.seed));
  const totals = await runTotals(ctx.db, run.id);
  const engines = await enginesByIds(ctx.db, run.workspace_id, fromJsonColumn<string[]>(run.engine_ids));
  const engineName = new Map(engines.map((e) => [e.id, e.name]));
  const now = ctx.now().toISOString();
  const ws = run.workspace_id;
  const runRef = { type: 'run', ref: run.id, description: 'measurement run' };
  const rows: (NewRecord & { id: string })[] = [];
  const metricIds = new Map<string, string>();
  const overall = new Map<string, MetricResult>();

  for (const { scope, results } of computed.scopes) {
    const engineId = scope === 'all' ? null : scope.slice('engine:'.length);
    for (const result of results) {
      const row = record(ws, run.id, now, {
        dataset: 'metrics',
        key: `${result.metric}:${scope}`,
        definitionVersion: result.definitionVersion,
        data: {
          metric: engineId === null ? result.metric : `${result.metric}.by_engine`,
          baseMetric: result.metric,
          scope: engineId === null ? 'all' : 'engine',
          engineId,
          engineName: engineId === null ? null : (engineName.get(engineId) ?? null),
          projectId: run.project_id === '' ? null : run.project_id,
          value: result.interval.value,
          sampleCount: result.sampleCount,
          method: result.method,
          level: 0.95,
          unit: result.unit,
          numerator: result.numerator,
          denominator: result.denominator,
        },
        confidence: result.interval,
        evidence: [runRef, ...answerEvidence(result.evidenceAnswerIds, run.id)],
      });
      rows.push(row);
      metricIds.set(`${result.metric}:${scope}`, row.id);
      if (engineId === null) overall.set(result.metric, result);
    }
  }
  const skipped = run.judge_engine_id
    ? overall.has('subjective_impression')
      ? []
      : [{ metric: 'subjective_impression', reason: 'the judge engine gave no usable rating' }]
    : [{ metric: 'subjective_impression', reason: 'no judge engine configured: skipped, never estimated' }];
  if (run.simulation !== null) {
    const simulated = await simulationRecords(ctx.db, { ...run, simulation: run.simulation }, overall, now);
    await withTransaction(ctx.db, async (trx) => {
      await insertRecords(trx, simulated);
      await updateRun(trx, run.id, {
        status: 'completed',
        summary: JSON.stringify({
          answered: totals.answered,
          failed: totals.failed,
          inputTokens: totals.inputTokens,
          outputTokens: totals.outputTokens,
          cost: microsToDecimal(totals.costMicros),
          metrics: Object.fromEntries(
            [...overall.values()].map((m) => [
              m.metric,
              { value: m.interval.value, interval: [m.interval.low, m.interval.high], sampleCount: m.sampleCount },
            ]),
          ),
          skipped,
          experimentIds: simulated.map((r) => r.id),
        }),
        error: null,
        completed_at: now,
      });
    });
    return;
  }
  for (const entity of computed.entities) {
    if (!entity.interval) continue;
    const row = record(ws, run.id, now, {
      dataset: 'metrics',
      key: `entity_mention_rate:${entity.key}`,
      definitionVersion: 'entity_mention_rate@1',
      data: {
        metric: 'entity_mention_rate',
        baseMetric: 'entity_mention_rate',
        scope: 'entity',
        entityKey: entity.key,
        role: entity.role,
        value: entity.interval.value,
        sampleCount: computed.okAnswers,
        method: 'wilson',
        level: 0.95,
        unit: 'rate',
        numerator: entity.answers,
        denominator: computed.okAnswers,
      },
      confidence: entity.interval,
      evidence: [runRef],
    });
    rows.push(row);
  }

  // Recommendations: prompts where competitors are named and the own brand is not.
  const gapPrompts = new Map(
    (
      await promptsByIds(
        ctx.db,
        ws,
        computed.gaps.map((g) => g.promptId),
      )
    ).map((p) => [p.id, p]),
  );
  for (const gap of computed.gaps) {
    const prompt = gapPrompts.get(gap.promptId);
    const competitors = [...gap.competitors.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5);
    rows.push(
      record(ws, run.id, now, {
        dataset: 'recommendations',
        key: `prompt-gap:${gap.promptId}`,
        definitionVersion: 'prompt_gap@1',
        data: {
          kind: 'prompt_gap',
          title: `Be present where "${(prompt?.text ?? '').slice(0, 120)}" is answered`,
          detail: `Competitors are named in ${competitors[0]![1]} of ${gap.n} answers to this prompt; you in none. Publish content that answers it directly, with statistics, quotations and sources (the GEO paper's most effective methods), on a page engines cite.`,
          promptId: gap.promptId,
          topic: prompt?.topic ?? null,
          answers: gap.n,
          ownMentions: 0,
          competitors: competitors.map(([key, answers]) => ({ key, answers })),
        },
        evidence: [
          runRef,
          { type: 'prompt', ref: gap.promptId },
          ...answerEvidence(gap.answersWithoutOwn, run.id),
          ...(metricIds.has('mention_rate:all')
            ? [{ type: 'metric', ref: metricIds.get('mention_rate:all')!, description: 'mention_rate' }]
            : []),
        ],
      }),
    );
  }
  const mention = overall.get('mention_rate');
  const citation = overall.get('citation_rate');
  if (mention && citation && citation.interval.high < mention.interval.low) {
    rows.push(
      record(ws, run.id, now, {
        dataset: 'recommendations',
        key: 'mentioned-not-cited',
        definitionVersion: 'mentioned_not_cited@1',
        data: {
          kind: 'mentioned_not_cited',
          title: 'Engines name you but rarely cite your pages',
          detail: `You are named in ${(mention.interval.value * 100).toFixed(1)}% of answers but your domains are cited in ${(citation.interval.value * 100).toFixed(1)}% (the 95% intervals do not overlap). Make the pages engines should cite easy to quote: facts, numbers and sources on stable URLs.`,
        },
        evidence: [
          runRef,
          { type: 'metric', ref: metricIds.get('mention_rate:all')!, description: 'mention_rate' },
          { type: 'metric', ref: metricIds.get('citation_rate:all')!, description: 'citation_rate' },
          ...answerEvidence(mention.evidenceAnswerIds.slice(0, 5), run.id),
        ],
      }),
    );
  }
  const sentiment = overall.get('sentiment');
  if (sentiment && sentiment.interval.high < 0) {
    rows.push(
      record(ws, run.id, now, {
        dataset: 'recommendations',
        key: 'negative-sentiment',
        definitionVersion: 'negative_sentiment@1',
        data: {
          kind: 'negative_sentiment',
          title: 'Answers describe you negatively',
          detail: `The sentiment of sentences naming you is ${sentiment.interval.value.toFixed(2)} (95% interval up to ${sentiment.interval.high.toFixed(2)}). Read the answers behind it and address the criticism they repeat.`,
        },
        evidence: [
          runRef,
          { type: 'metric', ref: metricIds.get('sentiment:all')!, description: 'sentiment' },
          ...answerEvidence(sentiment.evidenceAnswerIds.slice(0, 5), run.id),
        ],
      }),
    );
  }

  // Alerts: a change since the previous completed run whose 95% intervals do not overlap.
  const previous = await previousCompletedRun(ctx.db, ws, run.project_id, run.id);
  if (previous) {
    const before = await overallMetricRecords(ctx.db, ws, previous.id);
    for (const old of before) {
      const metric = (old.record_key ?? '').replace(/:all$/, '');
      const current = overall.get(metric);
      if (!current || old.confidence_value === null) continue;
      const low = Number(old.confidence_low);
      const high = Number(old.confidence_high);
      const rose = current.interval.low > high;
      const fell = current.interval.high < low;
      if (!rose && !fell) continue;
      rows.push(
        record(ws, run.id, now, {
          dataset: 'alerts',
          key: `${metric}:${run.id}`,
          definitionVersion: 'interval_change@1',
          data: {
            metric,
            direction: rose ? 'up' : 'down',
            rule: 'the 95% intervals of the two runs do not overlap',
            previousRunId: previous.id,
            previous: { value: Number(old.confidence_value), interval: [low, high] },
            current: { value: current.interval.value, interval: [current.interval.low, current.interval.high] },
            title: `${metric} went ${rose ? 'up' : 'down'}: ${Number(old.confidence_value).toFixed(3)} → ${current.interval.value.toFixed(3)}`,
          },
          evidence: [
            runRef,
            { type: 'metric', ref: old.id, description: 'previous run' },
            { type: 'metric', ref: metricIds.get(`${metric}:all`)!, description: 'this run' },
          ],
        }),
      );
    }
  }

  const summary = {
    answered: totals.answered,
    failed: totals.failed,
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    cost: microsToDecimal(totals.costMicros),
    metrics: Object.fromEntries(
      [...overall.values()].map((m) => [
        m.metric,
        { value: m.interval.value, interval: [m.interval.low, m.interval.high], sampleCount: m.sampleCount },
      ]),
    ),
    skipped,
  };
  const reportRows = [...overall.values()].map((m) => ({
    metric: m.metric,
    definitionVersion: m.definitionVersion,
    scope: 'all',
    value: m.interval.value,
    low: m.interval.low,
    high: m.interval.high,
    sampleCount: m.sampleCount,
  }));
  for (const { scope, results } of computed.scopes) {
    if (scope === 'all') continue;
    const name = engineName.get(scope.slice('engine:'.length)) ?? scope;
    for (const m of results)
      reportRows.push({
        metric: m.metric,
        definitionVersion: m.definitionVersion,
        scope: `engine ${name}`,
        value: m.interval.value,
        low: m.interval.low,
        high: m.interval.high,
        sampleCount: m.sampleCount,
      });
  }
  rows.push(
    record(ws, run.id, now, {
      dataset: 'reports',
      key: `run:${run.id}`,
      definitionVersion: 'ai_visibility_report@1',
      data: {
        title: 'AI visibility report',
        runId: run.id,
        projectId: run.project_id === '' ? null : run.project_id,
        prompts: fromJsonColumn<string[]>(run.prompt_ids).length,
        engines: engines.map((e) => ({ id: e.id, name: e.name, model: e.model })),
        samples: Number(run.samples),
        ...summary,
        rows: reportRows,
      },
      evidence: [runRef],
    }),
  );

  await withTransaction(ctx.db, async (trx) => {
    const dashboard = await findRecordByKey(trx, ws, 'dashboards', AI_VISIBILITY_DASHBOARD_KEY);
    if (!dashboard)
      rows.push(
        record(ws, run.id, now, {
          dataset: 'dashboards',
          key: AI_VISIBILITY_DASHBOARD_KEY,
          definitionVersion: 'ai_visibility_dashboard@1',
          data: {
            title: 'AI visibility',
            description:
              'How often and how prominently AI engines name and cite you, run after run (95% intervals in the metrics dataset).',
            widgets: DASHBOARD_WIDGETS,
          },
          evidence: [runRef],
        }),
      );
    await insertRecords(
      trx,
      rows.map((row) => withApiJson(row as never)),
    );
    await updateRun(trx, run.id, {
      status: 'completed',
      summary: JSON.stringify({ ...summary, reportId: rows.find((r) => r.dataset === 'reports')!.id }),
      error: null,
      completed_at: now,
    });
  });
}
