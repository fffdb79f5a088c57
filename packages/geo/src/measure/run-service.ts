import { randomInt } from 'node:crypto';
import { type Executor, fromJsonColumn, toIsoString } from '@keel/core';
import type { Insertable } from 'kysely';
import type { GeoContext } from '../context.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import type { GeoDb, MeasureAnswerTable } from '../db/schema.ts';
import { uuidv7 } from '../ids.ts';
import { analyzeAnswer } from './analyze.ts';
import { AnswerWriter } from './answer-writer.ts';
import { askWithRetry, type EngineClient, RateLimiter } from './engine-client.ts';
import { clientForEngine, microsToDecimal } from './engine-service.ts';
import { loadGraphMatcher } from './graph-entities.ts';
import { judgeAnswer } from './judge.ts';
import { MeasureErrors } from './measure-errors.ts';
import {
  activePromptIds,
  answeredTasks,
  countAnswers,
  type EngineRow,
  enginesByIds,
  findRun,
  insertRun,
  listEngines,
  pageRuns,
  promptsByIds,
  type RunRow,
  updateRun,
} from './measure-store.ts';
import { MAX_PROMPTS_PER_RUN } from './prompt-service.ts';
import { finalizeRun } from './run-finalize.ts';

export const MAX_SAMPLES = 20;
const PROMPT_SLICE = 200;

export function mapRun(row: RunRow) {
  const summary = row.summary === null ? null : fromJsonColumn<Record<string, unknown>>(row.summary);
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    projectId: row.project_id === '' ? null : row.project_id,
    status: row.status as 'pending' | 'running' | 'completed' | 'failed',
    samples: Number(row.samples),
    engineIds: fromJsonColumn<string[]>(row.engine_ids),
    promptCount: fromJsonColumn<string[]>(row.prompt_ids).length,
    totalTasks: Number(row.total_tasks),
    scheduleId: row.schedule_id,
    simulation: row.simulation !== null,
    summary,
    error: row.error,
    createdAt: toIsoString(row.created_at),
    startedAt: row.started_at === null ? null : toIsoString(row.started_at),
    completedAt: row.completed_at === null ? null : toIsoString(row.completed_at),
  };
}

export interface CreateRunInput {
  projectId: string;
  engineIds?: string[] | undefined;
  promptIds?: string[] | undefined;
  samples?: number | undefined;
  scheduleId?: string | undefined;
  /** Seeds the bootstrap (random when absent): the same answers and seed give the same intervals. */
  seed?: number | undefined;
  /** A simulation: the prompts are asked with this modified content given as a source (see simulation-service). */
  simulation?: SimulationSpec | undefined;
  /** An engine of the workspace that rates each answer's subjective impression (GEO paper); skipped without one. */
  judgeEngineId?: string | undefined;
}

export interface SimulationSpec {
  name: string;
  url: string;
  text: string;
  baselineRunId: string | null;
}

/**
 * Creates a run: a snapshot of the prompts (the active ones, or those named) and engines (the active ones, or those
 * named) it will ask, each prompt × engine `samples` times. It is executed by the background worker (or by
 * `keel geo run`); a run stopped midway is resumed where it stopped. `db` is the caller's transaction, if any.
 */
export async function createRun(
  ctx: GeoContext,
  workspaceId: string,
  input: CreateRunInput,
  db: Executor<GeoDb> = ctx.db,
) {
  const samples = input.samples ?? 3;
  if (!Number.isInteger(samples) || samples < 1 || samples > MAX_SAMPLES)
    throw MeasureErrors.invalid(`samples: 1 to ${MAX_SAMPLES}`);
  const engines = input.engineIds
    ? await enginesByIds(db, workspaceId, [...new Set(input.engineIds.map((id) => id.toLowerCase()))])
    : await listEngines(db, workspaceId);
  if (input.engineIds) {
    const found = new Set(engines.filter((e) => Number(e.active) === 1).map((e) => e.id));
    const missing = input.engineIds.find((id) => !found.has(id.toLowerCase()));
    if (missing) throw MeasureErrors.engineNotFound(missing);
  }
  if (engines.length === 0) throw MeasureErrors.nothingToRun('The workspace has no engine configured');
  const judgeId = input.judgeEngineId?.toLowerCase();
  if (judgeId !== undefined) {
    const [judge] = await enginesByIds(db, workspaceId, [judgeId]);
    if (!judge || Number(judge.active) !== 1) throw MeasureErrors.engineNotFound(input.judgeEngineId!);
  }
  let promptIds: string[];
  if (input.promptIds) {
    const wanted = [...new Set(input.promptIds.map((id) => id.toLowerCase()))];
    const found = await promptsByIds(db, workspaceId, wanted);
    const ok = new Set(found.filter((p) => p.project_id === input.projectId).map((p) => p.id));
    const missing = wanted.find((id) => !ok.has(id));
    if (missing) throw MeasureErrors.promptNotFound(missing);
    promptIds = wanted.sort();
  } else {
    promptIds = await activePromptIds(db, workspaceId, input.projectId, MAX_PROMPTS_PER_RUN);
  }
  if (promptIds.length === 0) throw MeasureErrors.nothingToRun('The project has no tracked prompt');
  const now = ctx.now().toISOString();
  const row = {
    id: uuidv7(),
    workspace_id: workspaceId,
    project_id: input.projectId,
    status: 'pending',
    samples,
    engine_ids: JSON.stringify(engines.map((e) => e.id).sort()),
    prompt_ids: JSON.stringify(promptIds),
    judge_engine_id: judgeId ?? null,
    simulation: input.simulation ? JSON.stringify(input.simulation) : null,
    total_tasks: promptIds.length * engines.length * samples,
    seed: input.seed ?? randomInt(1, 2 ** 31),
    summary: null,
    error: null,
    schedule_id: input.scheduleId ?? null,
    attempts: 0,
    claimed_by: null,
    claimed_at: null,
    created_at: now,
    started_at: null,
    completed_at: null,
  };
  await insertRun(db, row);
  return mapRun(row);
}

export async function getRun(ctx: GeoContext, workspaceId: string, runId: string) {
  const row = await findRun(ctx.db, workspaceId, runId.toLowerCase());
  if (!row) throw MeasureErrors.runNotFound(runId);
  return mapRun(row);
}

export async function listRuns(ctx: GeoContext, workspaceId: string, limit: number, cursor: string | undefined) {
  const rows = await pageRuns(ctx.db, workspaceId, limit + 1, decodeCursor('run', cursor));
  const page = pageOf('run', rows, limit);
  return { items: page.rows.map(mapRun), nextCursor: page.next };
}

export interface RunProgress {
  done: number;
  total: number;
  failed: number;
}

export interface ExecuteOptions {
  /** The client of an engine; the configured chat-completions client by default (tests and benches pass doubles). */
  clientFor?: (engine: EngineRow) => EngineClient;
  onProgress?: (progress: RunProgress) => void;
  /** Refreshes the run's claim while it runs (the worker's heartbeat). */
  onHeartbeat?: () => Promise<void>;
  /** Retry attempts per question (default 3). */
  attempts?: number;
}

/**
 * Executes a run to completion, resuming where it stopped: tasks (prompt × engine × sample) that already have a
 * stored answer are never asked again. Each answer is analyzed and committed on its own before it counts as done
 * (answers completing together share one commit), so a process killed midway loses at most the questions
 * in flight. Engines are asked concurrently, each within its own concurrency and requests-per-minute limits.
 * Then the metrics and the records derived from them are written (see finalizeRun).
 */
export async function executeRun(ctx: GeoContext, runId: string, options: ExecuteOptions = {}) {
  const run = await findRun(ctx.db, undefined, runId);
  if (!run) throw MeasureErrors.runNotFound(runId);
  if (run.status === 'completed') return mapRun(run);
  await updateRun(ctx.db, run.id, {
    status: 'running',
    started_at: run.started_at === null ? ctx.now().toISOString() : toIsoString(run.started_at),
  });
  try {
    const engineIds = fromJsonColumn<string[]>(run.engine_ids);
    const promptIds = fromJsonColumn<string[]>(run.prompt_ids);
    const engines = await enginesByIds(ctx.db, run.workspace_id, engineIds);
    const matcher = await loadGraphMatcher(ctx.db, run.workspace_id, run.project_id);
    const writer = new AnswerWriter(ctx.db);
    const samples = Number(run.samples);
    const simulation = run.simulation === null ? null : fromJsonColumn<SimulationSpec>(run.simulation);
    const source = simulation ? { url: simulation.url, text: simulation.text } : undefined;
    const judgeRow =
      run.judge_engine_id === null
        ? undefined
        : (await enginesByIds(ctx.db, run.workspace_id, [run.judge_engine_id]))[0];
    const judge = judgeRow
      ? options.clientFor
        ? options.clientFor(judgeRow)
        : clientForEngine(ctx, judgeRow)
      : undefined;
    const judgeLimiter = judgeRow ? new RateLimiter(Number(judgeRow.requests_per_minute)) : undefined;
    const progress: RunProgress = {
      done: await countAnswers(ctx.db, run.id),
      total: Number(run.total_tasks),
      failed: 0,
    };
    options.onProgress?.({ ...progress });
    let lastBeat = Date.now();

    async function* tasksOf(engine: EngineRow) {
      for (let i = 0; i < promptIds.length; i += PROMPT_SLICE) {
        const slice = promptIds.slice(i, i + PROMPT_SLICE);
        const prompts = new Map((await promptsByIds(ctx.db, run!.workspace_id, slice)).map((p) => [p.id, p]));
        const done = new Set(
          (await answeredTasks(ctx.db, run!.id, engine.id, slice)).map((a) => `${a.prompt_id}|${Number(a.sample)}`),
        );
        for (const promptId of slice) {
          const prompt = prompts.get(promptId);
          if (!prompt) continue;
          for (let sample = 1; sample <= samples; sample++)
            if (!done.has(`${promptId}|${sample}`)) yield { prompt, sample };
        }
      }
    }

    async function runEngine(engine: EngineRow) {
      const client = options.clientFor ? options.clientFor(engine) : clientForEngine(ctx, engine);
      const limiter = new RateLimiter(Number(engine.requests_per_minute));
      const tasks = tasksOf(engine);
      const inPrice = Number(engine.input_price_micros);
      const outPrice = Number(engine.output_price_micros);
      const worker = async () => {
        for (;;) {
          const next = await tasks.next();
          if (next.done) return;
          const { prompt, sample } = next.value;
          await limiter.take();
          const started = Date.now();
          const id = uuidv7();
          let row: Omit<
            Insertable<MeasureAnswerTable>,
            'id' | 'run_id' | 'workspace_id' | 'prompt_id' | 'engine_id' | 'sample' | 'latency_ms' | 'created_at'
          >;
          try {
            const reply = await askWithRetry(
              client,
              { prompt: prompt.text, locale: prompt.locale, persona: prompt.persona, source },
              options.attempts ?? 3,
            );
            const features = analyzeAnswer(reply.text, reply.citations, matcher);
            let judgeCost = 0;
            let judgeUsage = { inputTokens: 0, outputTokens: 0 };
            if (judge && judgeRow) {
              await judgeLimiter!.take();
              const judged = await judgeAnswer(judge, reply.text, features, matcher, options.attempts ?? 3);
              features.subjectiveImpression = judged.impression;
              judgeUsage = { inputTokens: judged.usage.inputTokens, outputTokens: judged.usage.outputTokens };
              judgeCost = Math.round(
                (judgeUsage.inputTokens * Number(judgeRow.input_price_micros) +
                  judgeUsage.outputTokens * Number(judgeRow.output_price_micros)) /
                  1_000_000,
              );
            }
            row = {
              status: 'ok',
              text: reply.text.slice(0, 200_000),
              citations: JSON.stringify(reply.citations),
              features: JSON.stringify(features),
              input_tokens: reply.inputTokens + judgeUsage.inputTokens,
              output_tokens: reply.outputTokens + judgeUsage.outputTokens,
              cost_micros:
                Math.round((reply.inputTokens * inPrice + reply.outputTokens * outPrice) / 1_000_000) + judgeCost,
              error: null,
            };
          } catch (error) {
            progress.failed++;
            row = {
              status: 'error',
              text: '',
              citations: '[]',
              features: '{}',
              input_tokens: 0,
              output_tokens: 0,
              cost_micros: 0,
              error: (error instanceof Error ? error.message : 'the engine failed').slice(0, 500),
            };
          }
          await writer.write({
            id,
            run_id: run!.id,
            workspace_id: run!.workspace_id,
            prompt_id: prompt.id,
            engine_id: engine.id,
            sample,
            latency_ms: Date.now() - started,
            created_at: ctx.now().toISOString(),
            ...row,
          });
          progress.done++;
          options.onProgress?.({ ...progress });
          if (options.onHeartbeat && Date.now() - lastBeat > 30_000) {
            lastBeat = Date.now();
            await options.onHeartbeat();
          }
        }
      };
      const concurrency = Math.max(1, Number(engine.concurrency));
      try {
        await Promise.all(Array.from({ length: concurrency }, worker));
      } finally {
        await client.close?.();
      }
    }

    try {
      await Promise.all(engines.map(runEngine));
    } finally {
      await judge?.close?.();
    }
    await finalizeRun(ctx, run.id);
  } catch (error) {
    ctx.log.error({ err: error, runId: run.id }, 'measurement run stopped; it resumes on the next attempt');
    await updateRun(ctx.db, run.id, {
      status: 'pending',
      error: (error instanceof Error && 'code' in error ? error.message : 'the run stopped unexpectedly').slice(0, 500),
    });
    throw error;
  }
  return getRun(ctx, run.workspace_id, run.id);
}

/** The run's totals in API form (tokens, cost as a decimal string). */
export function costSummary(totals: { inputTokens: number; outputTokens: number; costMicros: number }) {
  return {
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    cost: microsToDecimal(totals.costMicros),
  };
}
