import type { GuardContext } from '../context.ts';
import type { Detection, PlaceholderFor } from '../detect/types.ts';
import { analyzeText, type DetectResponse } from '../detect-api/analyze-text.ts';
import type { RequestPlaceholders } from './placeholders.ts';

export interface AnalyzeOptions {
  guardrails: readonly string[];
  placeholderFor: PlaceholderFor;
  deadline: number;
}

export interface PiecesAnalysis {
  result: DetectResponse;
  /** Each piece with its reported detections replaced by placeholders. */
  redacted: string[];
  changed: boolean;
}

const SEPARATOR = '\n';

/**
 * Analyzes several texts that form one message (the text parts of a multimodal user message, an assistant's
 * content and its tool-call arguments) as one text joined by newlines, so one DetectResponse describes the
 * message, and maps the redaction back onto each piece. A detection that crosses a piece boundary is removed
 * from both pieces (its placeholder goes into the first).
 */
export async function analyzePieces(
  ctx: GuardContext,
  pieces: readonly string[],
  options: AnalyzeOptions,
): Promise<PiecesAnalysis> {
  const text = pieces.length === 1 ? pieces[0]! : pieces.join(SEPARATOR);
  const result = await analyzeText(ctx, text, {
    guardrails: options.guardrails,
    placeholderFor: options.placeholderFor,
    deadline: options.deadline,
  });
  if (result.detections.length === 0) return { result, redacted: [...pieces], changed: false };
  if (pieces.length === 1) return { result, redacted: [result.redacted_text ?? text], changed: true };
  const redacted: string[] = [];
  let offset = 0;
  for (const piece of pieces) {
    redacted.push(redactRange(piece, offset, result.detections));
    offset += piece.length + SEPARATOR.length;
  }
  return { result, redacted, changed: true };
}

/**
 * The output text that goes back to the client, for every path (non-streaming content parts and tool-call
 * arguments, streamed deltas): always built from the redacted pieces, never from the raw text, with the
 * user's own values put back when X-GW-Restore asks. A value the model produced itself keeps its placeholder:
 * placeholders made after the input are never restorable.
 */
export function toClient(redacted: readonly string[], placeholders: RequestPlaceholders, restore: boolean): string[] {
  return restore ? redacted.map((piece) => placeholders.restore(piece)) : [...redacted];
}

/**
 * `piece` (which starts at `offset` of the analyzed text) with the detections that touch it replaced. A
 * detection that began before the piece is cut out of it, with its placeholder when `placeholderOnCrossing`.
 */
export function redactRange(
  piece: string,
  offset: number,
  detections: readonly Detection[],
  placeholderOnCrossing = false,
): string {
  const end = offset + piece.length;
  let out = '';
  let cursor = offset;
  for (const d of detections) {
    if (d.end <= offset || d.start >= end) continue;
    const from = Math.max(d.start, offset);
    out += piece.slice(cursor - offset, from - offset);
    if (d.start >= offset || placeholderOnCrossing) out += d.placeholder;
    cursor = Math.min(d.end, end);
  }
  return out + piece.slice(cursor - offset);
}

/**
 * A DetectResponse as `gw_meta` shows it: never a detected value. `value` carries the placeholder that
 * replaced it, so the response says what was found and where, without repeating it.
 */
export function forMeta(result: DetectResponse): DetectResponse {
  if (result.detections.length === 0) return result;
  return { ...result, detections: result.detections.map((d) => ({ ...d, value: d.placeholder })) };
}

/** Counts per type over several results (audit and security events: counts, never values). */
export function mergeBreakdowns(results: readonly DetectResponse[]): {
  total: number;
  breakdown: Record<string, number>;
} {
  const breakdown: Record<string, number> = {};
  let total = 0;
  for (const r of results) {
    total += r.detections.length;
    for (const [type, n] of Object.entries(r.breakdown)) breakdown[type] = (breakdown[type] ?? 0) + n;
  }
  return { total, breakdown };
}
