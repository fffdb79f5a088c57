// stream-sync: checks assistant output while it streams, per choice, releasing only text that can no longer
// grow into a detection. Also the restore-only rewriting of streams (X-GW-Restore without stream-sync).
import type { GuardContext } from '../context.ts';
import { type DetectResponse, scanText } from '../detect-api/analyze-text.ts';
import type { ActiveConfig } from '../state/active-config.ts';
import { analyzePieces, redactRange, toClient } from './content-analysis.ts';
import type { OnFail } from './gateway-headers.ts';
import { firstSpace, holdbackStart, pemEndIndex, placeholderHoldbackStart } from './holdback.ts';
import type { RequestPlaceholders } from './placeholders.ts';

/** A stream-sync stop: the caller sends `data: {"error":…}` then `data: [DONE]`. */
export class StreamHalt extends Error {
  override name = 'StreamHalt';
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export interface StreamGuardOptions {
  ctx: GuardContext;
  active: ActiveConfig;
  placeholders: RequestPlaceholders;
  /** true: stream-sync (detect and redact or halt); false: only put placeholders back (X-GW-Restore). */
  check: boolean;
  restore: boolean;
  onFail: OnFail;
  guardrails: readonly string[];
  holdbackMaxChars: number;
  toolArgumentsMaxChars: number;
  /** Epoch ms by which each detection must finish. */
  deadline: () => number;
  /** Called with every analysis of released output (audit, logs). */
  onResult: (choiceIndex: number, result: DetectResponse) => void;
}

/** Already released text kept as left context for scoring (context words such as "card:" or "password="). */
const CONTEXT_CHARS = 64;

interface TextGuard {
  push(text: string): Promise<string>;
  /** Releases everything still held (the choice finished or the stream ended). */
  flush(): Promise<string>;
}

function createTextGuard(options: StreamGuardOptions, choiceIndex: number): TextGuard {
  const { ctx, active, placeholders } = options;
  let held = '';
  let context = '';
  let full = '';
  let suppress: 'run' | 'pem' | undefined;
  let pemTail = '';

  const afterSuppressed = (text: string): string => {
    if (suppress === 'run') {
      const space = firstSpace(text);
      if (space < 0) return '';
      suppress = undefined;
      return text.slice(space);
    }
    if (suppress === 'pem') {
      pemTail += text;
      const end = pemEndIndex(pemTail);
      if (end < 0) {
        pemTail = pemTail.slice(-100);
        return '';
      }
      const rest = pemTail.slice(end);
      suppress = undefined;
      pemTail = '';
      return rest;
    }
    return text;
  };

  const checkRegion = async (region: string): Promise<string> => {
    const deadline = options.deadline();
    const offset = context.length;
    const candidates = await scanText(ctx, active, context + region, deadline);
    let out = region;
    if (candidates.some((c) => c.end > offset)) {
      const { result } = await analyzePieces(ctx, [context + region], {
        guardrails: [],
        placeholderFor: placeholders.placeholderFor,
        deadline,
      });
      const touching = result.detections.filter((d) => d.end > offset);
      if (touching.length > 0) {
        out = redactRange(region, offset, touching, true);
        options.onResult(choiceIndex, result);
        if (options.onFail === 'halt' && result.blocked) throw new StreamHalt('gw_content_blocked', result.message);
      }
    }
    context = (context + region).slice(-CONTEXT_CHARS);
    return out;
  };

  const release = async (final: boolean): Promise<string> => {
    if (!options.check) {
      const hold = final ? held.length : placeholderHoldbackStart(held, placeholders.maxLength);
      const out = held.slice(0, hold);
      held = held.slice(hold);
      return toClient([out], placeholders, options.restore)[0]!;
    }
    let hold = final ? held.length : holdbackStart(held);
    let overflow = false;
    if (!final && held.length - hold > options.holdbackMaxChars) {
      // Past the bound nothing is released unverified: halt, or withhold the whole span.
      if (options.onFail === 'halt') {
        throw new StreamHalt(
          'gw_content_blocked',
          `Blocked: a span longer than ${options.holdbackMaxChars} characters could not be verified`,
        );
      }
      overflow = true;
    } else if (!final && hold > 0) {
      // A detection that already reaches past the cut may still grow: hold it whole.
      const cut = context.length + hold;
      for (const c of await scanText(ctx, active, context + held, options.deadline())) {
        if (c.start < cut && c.end > cut) hold = Math.max(0, c.start - context.length);
      }
    }
    if (hold === 0 && !overflow) return '';
    const region = held.slice(0, hold);
    const tail = held.slice(hold);
    held = tail;
    let out = region.length > 0 ? await checkRegion(region) : '';
    if (overflow) {
      out += placeholders.withheld();
      suppress = tail.includes('-----BEGIN ') && pemEndIndex(tail) < 0 ? 'pem' : 'run';
      pemTail = suppress === 'pem' ? tail.slice(-100) : '';
      held = '';
    }
    return toClient([out], placeholders, options.restore)[0]!;
  };

  /** Guardrails judge the whole answer: they run over the full text before its last part goes out. */
  const runGuardrails = async () => {
    const { result } = await analyzePieces(ctx, [full], {
      guardrails: options.guardrails,
      placeholderFor: placeholders.placeholderFor,
      deadline: options.deadline(),
    });
    if (result.validator_results.some((v) => !v.passed)) {
      options.onResult(choiceIndex, { ...result, detections: [], breakdown: {} });
      if (options.onFail === 'halt' && result.blocked) throw new StreamHalt('gw_content_blocked', result.message);
    }
  };

  return {
    async push(text) {
      if (options.check && options.guardrails.length > 0) full += text;
      const rest = afterSuppressed(text);
      if (rest.length === 0) return '';
      held += rest;
      return release(false);
    },
    async flush() {
      if (options.check && options.guardrails.length > 0 && full.length > 0) {
        await runGuardrails();
        full = '';
      }
      return held.length === 0 ? '' : release(true);
    },
  };
}

interface ToolCallState {
  arguments: string;
}

interface ChoiceState {
  text: TextGuard;
  tools: Map<number, ToolCallState>;
}

type Chunk = Record<string, unknown> & { choices?: unknown };
type ChunkChoice = Record<string, unknown> & {
  index?: unknown;
  delta?: Record<string, unknown> & { content?: unknown; tool_calls?: unknown };
  finish_reason?: unknown;
};

const frame = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;

/** A chunk of our own for one choice, in the envelope (id, object, created, model…) of an upstream chunk. */
function syntheticChunk(chunk: Chunk, index: number, delta: Record<string, unknown>, withLogprobs: boolean): Chunk {
  const { choices: _choices, usage: _usage, obfuscation: _obfuscation, ...envelope } = chunk;
  return {
    ...envelope,
    choices: [{ index, delta, ...(withLogprobs ? { logprobs: null } : {}), finish_reason: null }],
  };
}

/**
 * Rewrites a chat-completions SSE stream event by event. Every upstream chunk is sent on with all its fields
 * (stream-sync only replaces `delta.content` by the part now safe to release, empties tool-call `arguments`
 * until the call is complete, and nulls `logprobs`, which would repeat the raw tokens); held text and
 * reassembled tool-call arguments go out in a chunk of the same envelope just before the choice's
 * `finish_reason` chunk. Throws StreamHalt when `halt` stops the stream.
 */
export function createStreamGuard(options: StreamGuardOptions) {
  const choices = new Map<number, ChoiceState>();
  let lastChunk: Chunk | undefined;
  const stateOf = (index: number) => {
    let state = choices.get(index);
    if (!state) {
      state = { text: createTextGuard(options, index), tools: new Map() };
      choices.set(index, state);
    }
    return state;
  };

  const finishChoice = async (index: number, state: ChoiceState, chunk: Chunk, withLogprobs: boolean) => {
    const text = await state.text.flush();
    const toolCalls: Record<string, unknown>[] = [];
    for (const [toolIndex, tool] of state.tools) {
      if (tool.arguments.length === 0) continue;
      let args = tool.arguments;
      if (options.check) {
        const { result, redacted } = await analyzePieces(options.ctx, [args], {
          guardrails: [],
          placeholderFor: options.placeholders.placeholderFor,
          deadline: options.deadline(),
        });
        if (result.detections.length > 0) options.onResult(index, result);
        if (options.onFail === 'halt' && result.blocked) throw new StreamHalt('gw_content_blocked', result.message);
        args = redacted[0]!;
      }
      args = toClient([args], options.placeholders, options.restore)[0]!;
      toolCalls.push({ index: toolIndex, function: { arguments: args } });
    }
    state.tools.clear();
    if (text.length === 0 && toolCalls.length === 0) return undefined;
    return syntheticChunk(
      chunk,
      index,
      { ...(text.length > 0 ? { content: text } : {}), ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
      withLogprobs,
    );
  };

  return {
    /** The frames to send for one upstream `data:` payload (not `[DONE]`). */
    async onData(data: string): Promise<string[]> {
      let chunk: Chunk;
      try {
        chunk = JSON.parse(data) as Chunk;
      } catch {
        // Text we cannot read is text we cannot check: it is not forwarded.
        return [];
      }
      if (chunk === null || typeof chunk !== 'object' || !Array.isArray(chunk.choices)) {
        return chunk !== null && typeof chunk === 'object' ? [`data: ${data}\n\n`] : [];
      }
      lastChunk = chunk;
      const before: string[] = [];
      for (const raw of chunk.choices as ChunkChoice[]) {
        if (raw === null || typeof raw !== 'object') continue;
        const index = typeof raw.index === 'number' ? raw.index : 0;
        const state = stateOf(index);
        const delta = raw.delta;
        if (delta && typeof delta === 'object') {
          if (typeof delta.content === 'string' && delta.content.length > 0) {
            delta.content = await state.text.push(delta.content);
          }
          if (Array.isArray(delta.tool_calls)) {
            for (const call of delta.tool_calls as Record<string, unknown>[]) {
              const fn = call?.function as Record<string, unknown> | undefined;
              if (!fn || typeof fn.arguments !== 'string') continue;
              const toolIndex = typeof call.index === 'number' ? call.index : 0;
              const tool = state.tools.get(toolIndex) ?? { arguments: '' };
              state.tools.set(toolIndex, tool);
              tool.arguments += fn.arguments;
              if (options.check && tool.arguments.length > options.toolArgumentsMaxChars) {
                throw new StreamHalt(
                  'gw_content_blocked',
                  `Blocked: tool-call arguments longer than ${options.toolArgumentsMaxChars} characters could not be verified`,
                );
              }
              fn.arguments = '';
            }
          }
        }
        const withLogprobs = 'logprobs' in raw;
        if (options.check && withLogprobs) raw.logprobs = null;
        if (raw.finish_reason !== null && raw.finish_reason !== undefined) {
          const extra = await finishChoice(index, state, chunk, withLogprobs);
          if (extra) before.push(frame(extra));
        }
      }
      before.push(frame(chunk));
      return before;
    },
    /** The upstream ended (with or without `[DONE]`): whatever is still held goes out, checked. */
    async onEnd(): Promise<string[]> {
      const frames: string[] = [];
      if (!lastChunk) return frames;
      for (const [index, state] of choices) {
        const extra = await finishChoice(index, state, lastChunk, false);
        if (extra) frames.push(frame(extra));
      }
      return frames;
    },
  };
}
