import type { GuardContext } from '../context.ts';
import { analyzeText, type DetectResponse } from './analyze-text.ts';

export interface DetectRequest {
  text: string;
  rid?: string | undefined;
  expected_format?: string | undefined;
  guardrails?: string[] | undefined;
}

/** POST /detect: analyzes the text and writes the audit entry (request id, time, duration, counts only). */
export async function detect(ctx: GuardContext, request: DetectRequest): Promise<DetectResponse> {
  const started = performance.now();
  const timestamp = new Date().toISOString();
  const response = await analyzeText(ctx, request.text, {
    guardrails: request.guardrails,
    expectedFormat: request.expected_format,
    deadline: Date.now() + ctx.config.detection.timeoutMs,
  });
  ctx.audit.record({
    rid: request.rid ?? 'NO-RID',
    timestamp,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    total: response.detections.length,
    breakdown: response.breakdown,
    blocked: response.blocked,
  });
  return response;
}
