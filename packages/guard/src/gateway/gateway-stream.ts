import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { idForLog } from '@keel/core';
import type { UpstreamReply } from '@keel/models';
import type { DetectResponse } from '../detect-api/analyze-text.ts';
import type { ActiveConfig } from '../state/active-config.ts';
import { analyzePieces, forMeta } from './content-analysis.ts';
import { errorObject } from './gateway-errors.ts';
import { detectionDeadline, type GatewayCall } from './gateway-service.ts';
import type { SecurityEvents } from './security-events.ts';
import { createSseParser, type SseEvent } from './sse.ts';
import { createStreamGuard, StreamHalt } from './stream-guard.ts';

/** Largest single SSE event buffered from the upstream (a chunk is normally well under 1 KB). */
const MAX_EVENT_CHARS = 4 * 1024 * 1024;
/** stream-async keeps at most this much output per request for the check that follows the stream. */
const MAX_COLLECTED_CHARS = 8 * 1024 * 1024;
const DONE = 'data: [DONE]\n\n';

export interface StreamContext {
  call: GatewayCall;
  upstream: UpstreamReply;
  res: ServerResponse;
  /** Response headers already set on the reply (request id, security headers, X-GW-RID). */
  headers: Record<string, string | number | string[]>;
  /** Aborts the upstream request (halt, failure); the client's disconnect and the deadline abort it too. */
  abortUpstream: () => void;
  clientGone: () => boolean;
  timedOut: () => boolean;
  signal: AbortSignal;
  events: SecurityEvents;
  model: unknown;
  /** The compiled configuration, fetched before the response was taken over (a failure there is still a JSON error). */
  active: ActiveConfig;
}

export interface StreamOutcome {
  status: 'completed' | 'halted' | 'client_aborted' | 'timeout' | 'failed';
  output: DetectResponse[];
}

/** Collects stream-async output per choice (content and tool-call arguments) for the check after the stream. */
function createCollector() {
  const choices = new Map<number, { content: string; tools: Map<number, string> }>();
  let size = 0;
  let truncated = false;
  return {
    onEvent(event: SseEvent) {
      if (event.data === undefined || truncated) return;
      let chunk: { choices?: unknown };
      try {
        chunk = JSON.parse(event.data);
      } catch {
        return;
      }
      if (!chunk || !Array.isArray(chunk.choices)) return;
      for (const choice of chunk.choices as { index?: unknown; delta?: Record<string, unknown> }[]) {
        const delta = choice?.delta;
        if (!delta || typeof delta !== 'object') continue;
        const index = typeof choice.index === 'number' ? choice.index : 0;
        let state = choices.get(index);
        if (!state) {
          state = { content: '', tools: new Map() };
          choices.set(index, state);
        }
        if (typeof delta.content === 'string') {
          state.content += delta.content;
          size += delta.content.length;
        }
        for (const call of Array.isArray(delta.tool_calls) ? (delta.tool_calls as Record<string, unknown>[]) : []) {
          const args = (call?.function as { arguments?: unknown } | undefined)?.arguments;
          if (typeof args !== 'string') continue;
          const toolIndex = typeof call.index === 'number' ? call.index : 0;
          state.tools.set(toolIndex, (state.tools.get(toolIndex) ?? '') + args);
          size += args.length;
        }
      }
      if (size > MAX_COLLECTED_CHARS) truncated = true;
    },
    pieces() {
      return [...choices.entries()].map(([index, state]) => ({
        index,
        pieces: [state.content, ...[...state.tools.values()]],
      }));
    },
    get truncated() {
      return truncated;
    },
  };
}

/**
 * Serves a streaming answer as SSE. final-only and stream-async forward the upstream bytes unchanged
 * (stream-async also keeps the text and checks it afterwards, sending a security event with the rid);
 * stream-sync (and X-GW-Restore) rewrite the stream event by event through the stream guard. A halt, a
 * failed check or the deadline end the stream with `data: {"error":…}` and `data: [DONE]`; a client that
 * goes away aborts the upstream request.
 */
export async function serveStream(sc: StreamContext): Promise<StreamOutcome> {
  const { call, upstream, res } = sc;
  const { options } = call;
  const outputs = new Map<number, DetectResponse[]>();
  const restore = options.restore && call.placeholders.restorable > 0;
  const rewrite = options.mode === 'stream-sync' || restore;
  const collector = options.mode === 'stream-async' ? createCollector() : undefined;
  const parser = rewrite || collector ? createSseParser(MAX_EVENT_CHARS) : undefined;
  const decoder = new TextDecoder();
  const guard = rewrite
    ? createStreamGuard({
        ctx: call.ctx,
        active: sc.active,
        placeholders: call.placeholders,
        check: options.mode === 'stream-sync',
        restore,
        onFail: options.onFail,
        guardrails: options.guardrails,
        holdbackMaxChars: call.ctx.config.gateway.holdbackMaxChars,
        toolArgumentsMaxChars: call.ctx.config.gateway.toolArgumentsMaxChars,
        deadline: () => detectionDeadline(call),
        onResult: (index, result) => {
          const list = outputs.get(index) ?? [];
          list.push(result);
          outputs.set(index, list);
        },
      })
    : undefined;

  res.writeHead(200, {
    ...sc.headers,
    ...upstream.headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();

  const write = async (data: string | Uint8Array) => {
    if (res.destroyed) throw new Error('client gone');
    if (!res.write(data)) await once(res, 'drain', { signal: sc.signal });
  };
  const writeAll = async (frames: string[]) => {
    if (frames.length === 1) await write(frames[0]!);
    else if (frames.length > 1) await write(frames.join(''));
  };
  let doneSent = false;
  const handleEvent = async (event: SseEvent) => {
    if (!guard) return;
    if (event.data === undefined) {
      await write(`${event.raw}\n\n`);
    } else if (event.data.trim() === '[DONE]') {
      await writeAll(await guard.onEnd());
      await write(DONE);
      doneSent = true;
    } else if (!doneSent) {
      await writeAll(await guard.onData(event.data));
    }
  };

  let status: StreamOutcome['status'] = 'completed';
  try {
    for await (const bytes of upstream.body) {
      if (!rewrite) await write(bytes);
      if (parser) {
        const events = parser.push(decoder.decode(bytes, { stream: true }));
        for (const event of events) {
          if (collector) collector.onEvent(event);
          await handleEvent(event);
        }
      }
    }
    if (parser) {
      for (const event of parser.push(decoder.decode())) {
        collector?.onEvent(event);
        await handleEvent(event);
      }
      for (const event of parser.end()) {
        collector?.onEvent(event);
        await handleEvent(event);
      }
    }
    if (guard && !doneSent) await writeAll(await guard.onEnd());
  } catch (error) {
    sc.abortUpstream();
    if (sc.clientGone()) status = 'client_aborted';
    else {
      let code = 'gw_detection_failed';
      let message = 'Output could not be checked, so the stream was stopped (fail closed)';
      if (error instanceof StreamHalt) {
        status = 'halted';
        code = error.code;
        message = error.message;
      } else if (sc.timedOut()) {
        status = 'timeout';
        code = 'gateway_timeout';
        message = `The call did not finish within ${call.ctx.config.gateway.timeoutMs} ms`;
      } else {
        status = 'failed';
        call.ctx.log.warn({ rid: idForLog(options.rid), reason: (error as Error).name }, 'gateway stream stopped');
      }
      if (!res.destroyed) {
        res.write(`data: ${JSON.stringify({ error: errorObject(code, message) })}\n\n`);
        res.write(DONE);
      }
    }
  } finally {
    if (!res.destroyed) res.end();
  }

  const output: DetectResponse[] = [];
  for (const list of outputs.values()) output.push(...list);
  if (collector) output.push(...(await checkAfterStream(sc, collector, status)));
  return { status, output };
}

/** stream-async: the whole output is checked after the stream and a security event carries the outcome. */
async function checkAfterStream(
  sc: StreamContext,
  collector: ReturnType<typeof createCollector>,
  status: StreamOutcome['status'],
): Promise<DetectResponse[]> {
  const { call } = sc;
  const results: DetectResponse[] = [];
  const choices: Record<string, unknown>[] = [];
  let outcome: 'clean' | 'flagged' | 'blocked' | 'error' = 'clean';
  try {
    for (const { index, pieces } of collector.pieces()) {
      const { result } = await analyzePieces(call.ctx, pieces, {
        guardrails: call.options.guardrails,
        placeholderFor: call.placeholders.placeholderFor,
        deadline: Date.now() + call.ctx.config.detection.timeoutMs,
      });
      results.push(result);
      if (result.blocked) outcome = 'blocked';
      else if (result.detections.length > 0 && outcome === 'clean') outcome = 'flagged';
      const meta = forMeta(result);
      choices.push({
        index,
        blocked: meta.blocked,
        message: meta.message,
        breakdown: meta.breakdown,
        overall_confidence: meta.overall_confidence,
        detections: meta.detections.map((d) => ({
          type: d.type,
          placeholder: d.placeholder,
          start: d.start,
          end: d.end,
          confidence_score: d.confidence_score,
        })),
        validator_results: meta.validator_results,
      });
    }
  } catch (error) {
    outcome = 'error';
    call.ctx.log.warn(
      { rid: idForLog(call.options.rid), reason: (error as Error).name },
      'stream-async output check failed',
    );
  }
  sc.events.emit({
    type: 'gateway.stream_async.output_check',
    rid: call.options.rid,
    timestamp: new Date().toISOString(),
    service: 'guard',
    model: typeof sc.model === 'string' ? sc.model.slice(0, 200) : null,
    stream_status: status,
    outcome,
    truncated: collector.truncated,
    guardrails: call.options.guardrails,
    choices,
  });
  return results;
}
