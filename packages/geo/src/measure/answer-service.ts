import { fromJsonColumn, toIsoString } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import { MeasureErrors } from './measure-errors.ts';
import { type AnswerRow, findAnswer, findRun, pageAnswers } from './measure-store.ts';

/** An answer as the API shows it: the engine's text with its citations, as evidence for metrics. */
export function mapAnswer(row: AnswerRow) {
  return {
    id: row.id,
    runId: row.run_id,
    promptId: row.prompt_id,
    engineId: row.engine_id,
    sample: Number(row.sample),
    status: row.status,
    text: row.text,
    citations: fromJsonColumn<{ url: string; title: string | null; source: string }[]>(row.citations),
    features: fromJsonColumn<Record<string, unknown>>(row.features),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    latencyMs: Number(row.latency_ms),
    error: row.error,
    createdAt: toIsoString(row.created_at),
  };
}

/** One page of a run's answers in id order; a run outside the workspace is GEO_RUN_NOT_FOUND. */
export async function listRunAnswers(
  ctx: GeoContext,
  workspaceId: string,
  runId: string,
  limit: number,
  cursor: string | undefined,
) {
  if (!(await findRun(ctx.db, workspaceId, runId))) throw MeasureErrors.runNotFound(runId);
  const rows = await pageAnswers(ctx.db, {
    workspaceId,
    runId,
    limit: limit + 1,
    afterId: decodeCursor('ans', cursor),
  });
  const { rows: page, next } = pageOf('ans', rows, limit);
  return {
    items: page.map(mapAnswer),
    nextCursor: next,
  };
}

/** One answer of the workspace; any other is GEO_ANSWER_NOT_FOUND. */
export async function getAnswer(ctx: GeoContext, workspaceId: string, answerId: string) {
  const row = await findAnswer(ctx.db, workspaceId, answerId);
  if (!row) throw MeasureErrors.answerNotFound(answerId);
  return mapAnswer(row);
}
