import { dialectOf, type Executor } from '@keel/core';
import { CompiledQuery, type Insertable, type Selectable, sql } from 'kysely';
import type {
  GeoDb,
  MeasureAnswerTable,
  MeasureEngineTable,
  MeasurePromptTable,
  MeasureRunTable,
  MeasureScheduleTable,
} from '../db/schema.ts';

export type PromptRow = Selectable<MeasurePromptTable>;
export type EngineRow = Selectable<MeasureEngineTable>;
export type RunRow = Selectable<MeasureRunTable>;
export type AnswerRow = Selectable<MeasureAnswerTable>;
export type ScheduleRow = Selectable<MeasureScheduleTable>;

const CHUNK = 200;

/** Inserts prompts; an existing (workspace, project, key) is updated in place (topic, intent, persona, active). */
export async function upsertPrompts(db: Executor<GeoDb>, rows: Insertable<MeasurePromptTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await db
      .insertInto('measure_prompt')
      .values(rows.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'project_id', 'prompt_key']).doUpdateSet((eb) => ({
          topic: eb.ref('excluded.topic'),
          intent: eb.ref('excluded.intent'),
          persona: eb.ref('excluded.persona'),
          active: 1,
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
}

export async function findPromptsByKeys(db: Executor<GeoDb>, workspaceId: string, projectId: string, keys: string[]) {
  const out: { id: string; prompt_key: string; created_at: unknown; updated_at: unknown }[] = [];
  for (let i = 0; i < keys.length; i += CHUNK) {
    out.push(
      ...(await db
        .selectFrom('measure_prompt')
        .select(['id', 'prompt_key', 'created_at', 'updated_at'])
        .where('workspace_id', '=', workspaceId)
        .where('project_id', '=', projectId)
        .where('prompt_key', 'in', keys.slice(i, i + CHUNK))
        .execute()),
    );
  }
  return out;
}

export async function pagePrompts(
  db: Executor<GeoDb>,
  q: { workspaceId: string; projectId: string; limit: number; afterId: string | undefined; activeOnly: boolean },
): Promise<PromptRow[]> {
  let query = db
    .selectFrom('measure_prompt')
    .selectAll()
    .where('workspace_id', '=', q.workspaceId)
    .where('project_id', '=', q.projectId);
  if (q.activeOnly) query = query.where('active', '=', 1);
  if (q.afterId !== undefined) query = query.where('id', '>', q.afterId);
  return query.orderBy('id').limit(q.limit).execute();
}

export async function activePromptIds(db: Executor<GeoDb>, workspaceId: string, projectId: string, max: number) {
  const rows = await db
    .selectFrom('measure_prompt')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('project_id', '=', projectId)
    .where('active', '=', 1)
    .orderBy('id')
    .limit(max)
    .execute();
  return rows.map((row) => row.id);
}

export async function promptsByIds(db: Executor<GeoDb>, workspaceId: string, ids: string[]): Promise<PromptRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('measure_prompt')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', ids)
    .execute();
}

export async function deactivatePrompt(db: Executor<GeoDb>, workspaceId: string, id: string, now: string) {
  const result = await db
    .updateTable('measure_prompt')
    .set({ active: 0, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertEngine(db: Executor<GeoDb>, row: Insertable<MeasureEngineTable>): Promise<void> {
  await db.insertInto('measure_engine').values(row).execute();
}

export async function listEngines(db: Executor<GeoDb>, workspaceId: string): Promise<EngineRow[]> {
  return db
    .selectFrom('measure_engine')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('active', '=', 1)
    .orderBy('id')
    .limit(100)
    .execute();
}

export async function enginesByIds(db: Executor<GeoDb>, workspaceId: string, ids: string[]): Promise<EngineRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('measure_engine')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', ids)
    .execute();
}

export async function deactivateEngine(db: Executor<GeoDb>, workspaceId: string, id: string) {
  const result = await db
    .updateTable('measure_engine')
    .set({ active: 0, name: `deleted-${id}` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('active', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertRun(db: Executor<GeoDb>, row: Insertable<MeasureRunTable>): Promise<void> {
  await db.insertInto('measure_run').values(row).execute();
}

export async function findRun(db: Executor<GeoDb>, workspaceId: string | undefined, id: string) {
  let query = db.selectFrom('measure_run').selectAll().where('id', '=', id);
  if (workspaceId !== undefined) query = query.where('workspace_id', '=', workspaceId);
  return query.executeTakeFirst();
}

export async function pageRuns(db: Executor<GeoDb>, workspaceId: string, limit: number, beforeId: string | undefined) {
  let query = db.selectFrom('measure_run').selectAll().where('workspace_id', '=', workspaceId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** The most recent completed run of a workspace and project before `beforeId`. */
export async function previousCompletedRun(
  db: Executor<GeoDb>,
  workspaceId: string,
  projectId: string,
  beforeId: string,
) {
  return db
    .selectFrom('measure_run')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('project_id', '=', projectId)
    .where('status', '=', 'completed')
    .where('simulation', 'is', null)
    .where('id', '<', beforeId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function updateRun(db: Executor<GeoDb>, id: string, set: Partial<Insertable<MeasureRunTable>>) {
  await db.updateTable('measure_run').set(set).where('id', '=', id).execute();
}

const ANSWER_COLUMNS = [
  'id',
  'run_id',
  'workspace_id',
  'prompt_id',
  'engine_id',
  'sample',
  'status',
  'text',
  'citations',
  'features',
  'input_tokens',
  'output_tokens',
  'cost_micros',
  'latency_ms',
  'error',
  'created_at',
] as const;

const answerStatements = new Map<string, string>();

/**
 * Up to five runs in creation order that a worker may claim: pending ones nobody holds (or whose claim is older than
 * `staleBefore`), and running ones whose claim is older than `staleBefore`.
 */
export async function claimableRuns(db: Executor<GeoDb>, staleBefore: string) {
  return db
    .selectFrom('measure_run')
    .select(['id', 'status', 'claimed_at', 'attempts'])
    .where((eb) =>
      eb.or([
        eb.and([
          eb('status', '=', 'pending'),
          eb.or([eb('claimed_at', 'is', null), eb('claimed_at', '<', staleBefore)]),
        ]),
        eb.and([eb('status', '=', 'running'), eb('claimed_at', '<', staleBefore)]),
      ]),
    )
    .orderBy('created_at')
    .limit(5)
    .execute();
}

/** Marks a run `failed` (completed at `at`) if its status is still `status`. */
export async function failClaimableRun(db: Executor<GeoDb>, id: string, status: string, at: string): Promise<void> {
  await db
    .updateTable('measure_run')
    .set({ status: 'failed', completed_at: at })
    .where('id', '=', id)
    .where('status', '=', status)
    .execute();
}

/**
 * Claims a named pending or running run for `workerId` if nobody holds it, its claim is older than `staleBefore`, or
 * the worker holds it already; with `refresh`, only renews the claim the worker holds. True when the worker holds it.
 */
export async function claimNamedRun(
  db: Executor<GeoDb>,
  q: { runId: string; workerId: string; at: string; staleBefore: string; refresh: boolean },
): Promise<boolean> {
  const result = await db
    .updateTable('measure_run')
    .set(q.refresh ? { claimed_at: q.at } : { claimed_by: q.workerId, claimed_at: q.at })
    .where('id', '=', q.runId)
    .where('status', 'in', ['pending', 'running'])
    .where((eb) =>
      q.refresh
        ? eb('claimed_by', '=', q.workerId)
        : eb.or([
            eb('claimed_at', 'is', null),
            eb('claimed_at', '<', q.staleBefore),
            eb('claimed_by', '=', q.workerId),
          ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Renews the claim `workerId` holds on a run (the worker's heartbeat). */
export async function refreshRunClaim(db: Executor<GeoDb>, runId: string, workerId: string, at: string): Promise<void> {
  await db
    .updateTable('measure_run')
    .set({ claimed_at: at })
    .where('id', '=', runId)
    .where('claimed_by', '=', workerId)
    .execute();
}

/**
 * Stores answers with one multi-row INSERT … ON CONFLICT DO NOTHING (a task that already has an answer keeps it), its
 * text compiled once per dialect and row count. Callers keep a call under the bound-parameter limit (16 columns a row).
 */
export async function insertAnswers(db: Executor<GeoDb>, rows: Insertable<MeasureAnswerTable>[]): Promise<void> {
  const key = `${dialectOf(db)}|${rows.length}`;
  let text = answerStatements.get(key);
  if (text === undefined) {
    const template = Object.fromEntries(ANSWER_COLUMNS.map((c) => [c, null]));
    text = (db as Executor<any>)
      .insertInto('measure_answer')
      .values(rows.map(() => template))
      .onConflict((oc) => oc.columns(['run_id', 'prompt_id', 'engine_id', 'sample']).doNothing())
      .compile().sql;
    answerStatements.set(key, text);
  }
  const parameters: unknown[] = [];
  for (const row of rows) for (const column of ANSWER_COLUMNS) parameters.push(row[column] ?? null);
  await db.executeQuery(CompiledQuery.raw(text, parameters));
}

/** (prompt, sample) pairs already answered by an engine in a run, for a slice of prompts. */
export async function answeredTasks(db: Executor<GeoDb>, runId: string, engineId: string, promptIds: string[]) {
  if (promptIds.length === 0) return [];
  return db
    .selectFrom('measure_answer')
    .select(['prompt_id', 'sample'])
    .where('run_id', '=', runId)
    .where('engine_id', '=', engineId)
    .where('prompt_id', 'in', promptIds)
    .execute();
}

export async function countAnswers(db: Executor<GeoDb>, runId: string): Promise<number> {
  const row = await db
    .selectFrom('measure_answer')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('run_id', '=', runId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Totals of a run's answers: counts by status, tokens and cost. */
export async function runTotals(db: Executor<GeoDb>, runId: string) {
  const rows = await db
    .selectFrom('measure_answer')
    .select((eb) => [
      'status',
      eb.fn.countAll<number>().as('n'),
      eb.fn.sum<number>('input_tokens').as('input_tokens'),
      eb.fn.sum<number>('output_tokens').as('output_tokens'),
      eb.fn.sum<number>('cost_micros').as('cost_micros'),
    ])
    .where('run_id', '=', runId)
    .groupBy('status')
    .execute();
  const totals = { answered: 0, failed: 0, inputTokens: 0, outputTokens: 0, costMicros: 0 };
  for (const row of rows) {
    if (row.status === 'ok') totals.answered += Number(row.n);
    else totals.failed += Number(row.n);
    totals.inputTokens += Number(row.input_tokens ?? 0);
    totals.outputTokens += Number(row.output_tokens ?? 0);
    totals.costMicros += Number(row.cost_micros ?? 0);
  }
  return totals;
}

/**
 * One page of a run's answers in task order (prompt, engine, sample) after the given task: the order metrics are
 * computed in, so recomputing gives the same bootstrap draws.
 */
export async function pageAnswersInTaskOrder(
  db: Executor<GeoDb>,
  runId: string,
  after: { promptId: string; engineId: string; sample: number } | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('measure_answer')
    .select(['id', 'prompt_id', 'engine_id', 'sample', 'status', 'features'])
    .where('run_id', '=', runId);
  if (after)
    query = query.where(
      sql<boolean>`(prompt_id, engine_id, sample) > (${after.promptId}, ${after.engineId}, ${after.sample})`,
    );
  return query.orderBy('prompt_id').orderBy('engine_id').orderBy('sample').limit(limit).execute();
}

export async function pageAnswers(
  db: Executor<GeoDb>,
  q: { workspaceId: string; runId: string; limit: number; afterId: string | undefined },
): Promise<AnswerRow[]> {
  let query = db
    .selectFrom('measure_answer')
    .selectAll()
    .where('workspace_id', '=', q.workspaceId)
    .where('run_id', '=', q.runId);
  if (q.afterId !== undefined) query = query.where('id', '>', q.afterId);
  return query.orderBy('id').limit(q.limit).execute();
}

export async function findAnswer(db: Executor<GeoDb>, workspaceId: string, id: string) {
  return db
    .selectFrom('measure_answer')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function insertSchedule(db: Executor<GeoDb>, row: Insertable<MeasureScheduleTable>): Promise<void> {
  await db.insertInto('measure_schedule').values(row).execute();
}

export async function listSchedules(db: Executor<GeoDb>, workspaceId: string) {
  return db
    .selectFrom('measure_schedule')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('active', '=', 1)
    .orderBy('id')
    .limit(100)
    .execute();
}

export async function deactivateSchedule(db: Executor<GeoDb>, workspaceId: string, id: string) {
  const result = await db
    .updateTable('measure_schedule')
    .set({ active: 0 })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('active', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function dueSchedules(db: Executor<GeoDb>, now: string) {
  return db
    .selectFrom('measure_schedule')
    .selectAll()
    .where('active', '=', 1)
    .where('next_run_at', '<=', now)
    .orderBy('next_run_at')
    .limit(10)
    .execute();
}

/** Moves a schedule's next run forward if nobody else did (compare-and-set on next_run_at). */
export async function advanceSchedule(
  db: Executor<GeoDb>,
  id: string,
  expectedNext: unknown,
  next: string,
  runId: string,
): Promise<boolean> {
  const result = await db
    .updateTable('measure_schedule')
    .set({ next_run_at: next, last_run_id: runId })
    .where('id', '=', id)
    .where('next_run_at', '=', expectedNext as string)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records the run a schedule started last. */
export async function setScheduleLastRun(db: Executor<GeoDb>, id: string, runId: string): Promise<void> {
  await db.updateTable('measure_schedule').set({ last_run_id: runId }).where('id', '=', id).execute();
}
