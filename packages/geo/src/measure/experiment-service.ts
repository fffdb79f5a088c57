import { type Executor, fromJsonColumn } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { mapRecord, withApiJson } from '../datasets/dataset-service.ts';
import { findRunMetricRecord, insertRecords } from '../datasets/dataset-store.ts';
import type { GeoDb } from '../db/schema.ts';
import { uuidv7 } from '../ids.ts';
import { MeasureErrors } from './measure-errors.ts';
import { findRun } from './measure-store.ts';
import type { MetricResult } from './metrics.ts';
import { twoProportionTest } from './stats.ts';

/** Metrics an experiment can compare: the rates, whose counts a two-proportion test takes. */
export const EXPERIMENT_METRICS = ['mention_rate', 'citation_rate'] as const;
export type ExperimentMetric = (typeof EXPERIMENT_METRICS)[number];
const SIGNIFICANCE = 0.05;

interface Arm {
  runId: string;
  value: number;
  successes: number;
  trials: number;
  interval: [number, number];
  metricRecordId: string | null;
}

/** The all-engines count behind a completed run's rate metric. */
async function armOf(db: Executor<GeoDb>, workspaceId: string, runId: string, metric: ExperimentMetric): Promise<Arm> {
  const run = await findRun(db, workspaceId, runId);
  if (!run) throw MeasureErrors.runNotFound(runId);
  if (run.status !== 'completed') throw MeasureErrors.runNotComplete(runId, run.status);
  const row = await findRunMetricRecord(db, workspaceId, runId, `${metric}:all`);
  if (!row) throw MeasureErrors.invalid(`run ${runId} has no ${metric} (no successful answers)`);
  const data = fromJsonColumn<Record<string, number>>(row.data);
  return {
    runId,
    value: Number(data.value),
    successes: Number(data.numerator),
    trials: Number(data.denominator),
    interval: [Number(row.confidence_low), Number(row.confidence_high)],
    metricRecordId: row.id,
  };
}

function comparison(control: Arm, treatment: Arm) {
  const test = twoProportionTest(control.successes, control.trials, treatment.successes, treatment.trials);
  return {
    difference: treatment.value - control.value,
    test: 'two-proportion z-test (pooled), two-sided',
    z: test.z,
    pValue: test.pValue,
    alpha: SIGNIFICANCE,
    significant: test.pValue < SIGNIFICANCE,
  };
}

/**
 * Records an observed experiment: a content change measured before and after (or A/B) by two completed runs,
 * compared on a rate with a two-proportion z-test. Written to `experiments` with mode `observed`, apart from
 * simulations.
 */
export async function createObservedExperiment(
  ctx: GeoContext,
  workspaceId: string,
  input: {
    name: string;
    metric: ExperimentMetric;
    controlRunId: string;
    treatmentRunId: string;
    change?: string | undefined;
    design?: 'before_after' | 'ab' | undefined;
  },
) {
  const control = await armOf(ctx.db, workspaceId, input.controlRunId.toLowerCase(), input.metric);
  const treatment = await armOf(ctx.db, workspaceId, input.treatmentRunId.toLowerCase(), input.metric);
  const now = ctx.now().toISOString();
  const row = withApiJson({
    id: uuidv7(),
    workspace_id: workspaceId,
    dataset: 'experiments',
    mode: 'observed',
    record_key: input.name,
    definition_version: `observed_${input.metric}@1`,
    run_id: treatment.runId,
    import_id: null,
    computed_at: now,
    data: JSON.stringify({
      name: input.name,
      design: input.design ?? 'before_after',
      change: input.change ?? null,
      metric: input.metric,
      control,
      treatment,
      ...comparison(control, treatment),
    }),
    confidence_value: treatment.value,
    confidence_low: treatment.interval[0],
    confidence_high: treatment.interval[1],
    evidence: JSON.stringify([
      { type: 'run', ref: control.runId, description: 'control' },
      { type: 'run', ref: treatment.runId, description: 'treatment' },
      ...[control, treatment].map((arm) => ({ type: 'metric', ref: arm.metricRecordId!, description: input.metric })),
    ]),
    status: null,
    subject_hash: null,
    created_at: now,
    updated_at: now,
  });
  await insertRecords(ctx.db, [row]);
  return mapRecord({ ...row, api_json: row.api_json } as never);
}

/**
 * The records of a completed simulation: one `experiments` record (mode `simulated`) per rate and bootstrap metric
 * with the simulated value and interval and, when a baseline run was named, the comparison with it. Simulations
 * never write `metrics`, reports, alerts or dashboards: they are kept apart from what was observed.
 */
export async function simulationRecords(
  db: Executor<GeoDb>,
  run: { id: string; workspace_id: string; simulation: string },
  overall: Map<string, MetricResult>,
  now: string,
) {
  const spec = fromJsonColumn<{ name: string; url: string; baselineRunId: string | null }>(run.simulation);
  const rows = [];
  for (const result of overall.values()) {
    let baseline: Record<string, unknown> | null = null;
    if (spec.baselineRunId && (EXPERIMENT_METRICS as readonly string[]).includes(result.metric)) {
      const arm = await armOf(db, run.workspace_id, spec.baselineRunId, result.metric as ExperimentMetric).catch(
        () => null,
      );
      if (arm) {
        const simulated: Arm = {
          runId: run.id,
          value: result.interval.value,
          successes: result.numerator ?? 0,
          trials: result.denominator ?? 0,
          interval: [result.interval.low, result.interval.high],
          metricRecordId: null,
        };
        baseline = { control: arm, ...comparison(arm, simulated) };
      }
    }
    rows.push(
      withApiJson({
        id: uuidv7(),
        workspace_id: run.workspace_id,
        dataset: 'experiments',
        mode: 'simulated',
        record_key: `${result.metric}:all`,
        definition_version: result.definitionVersion,
        run_id: run.id,
        import_id: null,
        computed_at: now,
        data: JSON.stringify({
          name: spec.name,
          design: 'simulation',
          contentUrl: spec.url,
          metric: result.metric,
          value: result.interval.value,
          sampleCount: result.sampleCount,
          method: result.method,
          numerator: result.numerator,
          denominator: result.denominator,
          baselineRunId: spec.baselineRunId,
          baseline,
        }),
        confidence_value: result.interval.value,
        confidence_low: result.interval.low,
        confidence_high: result.interval.high,
        evidence: JSON.stringify([
          { type: 'run', ref: run.id, description: 'simulation run' },
          ...result.evidenceAnswerIds.map((id) => ({ type: 'answer', ref: id })),
        ]),
        status: null,
        subject_hash: null,
        created_at: now,
        updated_at: now,
      }),
    );
  }
  return rows;
}
