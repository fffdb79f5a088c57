import type { ChatCompletionsBody, UpstreamReply } from '@keel/models';
import type { GuardContext } from '../context.ts';
import type { DetectResponse } from '../detect-api/analyze-text.ts';
import { analyzePieces, forMeta, toClient } from './content-analysis.ts';
import { errorObject, type GatewayError, GatewayErrors, type GwMeta } from './gateway-errors.ts';
import type { GatewayOptions } from './gateway-headers.ts';
import type { RequestPlaceholders } from './placeholders.ts';

/** What one gateway call carries from the headers to the response. */
export interface GatewayCall {
  ctx: GuardContext;
  options: GatewayOptions;
  placeholders: RequestPlaceholders;
  meta: GwMeta;
  /** Raw results (with values) for audit counts; `meta` holds the value-free copies. */
  inputResults: DetectResponse[];
  outputResults: DetectResponse[];
  /** Epoch ms by which the whole call must end (GATEWAY_TIMEOUT_MS). */
  deadline: number;
}

/** The detection deadline: the detection timeout, never past the call's own deadline. */
export function detectionDeadline(call: GatewayCall): number {
  return Math.min(Date.now() + call.ctx.config.detection.timeoutMs, call.deadline);
}

/** A place in a message that holds text: string content or one text part of array content. */
interface TextSlot {
  get(): string;
  set(value: string): void;
}

type Part = Record<string, unknown> & { type?: unknown; text?: unknown };

function contentSlots(holder: Record<string, unknown>, key: string, strict: boolean): TextSlot[] {
  const content = holder[key];
  if (typeof content === 'string')
    return [
      {
        get: () => holder[key] as string,
        set: (v) => {
          holder[key] = v;
        },
      },
    ];
  if (Array.isArray(content)) {
    const slots: TextSlot[] = [];
    for (const part of content as Part[]) {
      if (part === null || typeof part !== 'object') {
        if (strict) throw GatewayErrors.invalidBody('Invalid request: every content part must be an object');
        continue;
      }
      if (part.type !== 'text') continue;
      if (typeof part.text !== 'string') {
        if (strict) throw GatewayErrors.invalidBody('Invalid request: a text content part needs a string `text`');
        continue;
      }
      slots.push({
        get: () => part.text as string,
        set: (v) => {
          part.text = v;
        },
      });
    }
    return slots;
  }
  if (strict) {
    throw GatewayErrors.invalidBody(
      'Invalid request: user message content must be a string or an array of content parts',
    );
  }
  return [];
}

/**
 * Input guardrails: every `user` message (string content and the text parts of array content) is analyzed
 * as one text with the request's guardrails, and its text is replaced by the redacted text. Other roles and
 * every other field are left as they are. Returns one DetectResponse per user message.
 */
export async function redactUserMessages(call: GatewayCall, body: ChatCompletionsBody): Promise<DetectResponse[]> {
  const messages = body.messages as Record<string, unknown>[];
  const results: DetectResponse[] = [];
  for (const message of messages) {
    if (message.role !== 'user') continue;
    const slots = contentSlots(message, 'content', true);
    const pieces = slots.map((slot) => slot.get());
    const { result, redacted, changed } = await analyzePieces(call.ctx, pieces.length > 0 ? pieces : [''], {
      guardrails: call.options.guardrails,
      placeholderFor: call.placeholders.placeholderFor,
      deadline: detectionDeadline(call),
    });
    if (changed)
      slots.forEach((slot, i) => {
        slot.set(redacted[i]!);
      });
    results.push(result);
  }
  return results;
}

/** The first blocking result's message, or undefined when nothing blocks. */
export function blockingMessage(results: readonly DetectResponse[]): string | undefined {
  return results.find((r) => r.blocked)?.message;
}

/** `{error, gw_meta}` for an answer the gateway writes itself. */
export function errorBodyWithMeta(error: GatewayError, meta: GwMeta) {
  return { error: errorObject(error.code, error.message), gw_meta: meta };
}

export interface JsonAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * An upstream error passes through with its status; its body is kept when it is an OpenAI-style error
 * object (with `gw_meta` added) and replaced by one otherwise, so clients always get a typed error.
 */
export async function passUpstreamError(call: GatewayCall, upstream: UpstreamReply): Promise<JsonAnswer> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await upstream.text());
  } catch {
    parsed = undefined;
  }
  const status = upstream.status >= 400 && upstream.status <= 599 ? upstream.status : 502;
  const error = (parsed as { error?: unknown } | undefined)?.error;
  const body =
    error !== null && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string'
      ? { ...(parsed as object), gw_meta: call.meta }
      : { error: errorObject('upstream_error', `The upstream answered HTTP ${upstream.status}`), gw_meta: call.meta };
  return { status, headers: upstream.headers, body: JSON.stringify(body) };
}

type Choice = Record<string, unknown> & { message?: Record<string, unknown> };

function outputSlots(message: Record<string, unknown>): TextSlot[] {
  const slots = contentSlots(message, 'content', false);
  for (const call of Array.isArray(message.tool_calls) ? (message.tool_calls as Record<string, unknown>[]) : []) {
    const fn = call?.function as Record<string, unknown> | undefined;
    if (fn && typeof fn.arguments === 'string') {
      slots.push({
        get: () => fn.arguments as string,
        set: (v) => {
          fn.arguments = v;
        },
      });
    }
  }
  return slots;
}

/**
 * Output guardrails on a non-streaming answer: every choice's assistant content and tool-call arguments are
 * analyzed with the request's guardrails. BLOCK mode answers 400 `gw_content_blocked` when one blocks (the
 * raw answer is never sent); otherwise the answer goes out redacted (logprobs of redacted choices dropped,
 * since they repeat the raw tokens), placeholders restored when X-GW-Restore asks, with `gw_meta` added.
 */
export async function checkCompletion(call: GatewayCall, upstream: UpstreamReply): Promise<JsonAnswer> {
  let parsed: Record<string, unknown> & { choices?: unknown };
  try {
    parsed = JSON.parse(await upstream.text());
  } catch {
    throw GatewayErrors.upstreamInvalid();
  }
  if (parsed === null || typeof parsed !== 'object' || !Array.isArray(parsed.choices)) {
    throw GatewayErrors.upstreamInvalid();
  }
  const restore = call.options.restore && call.placeholders.restorable > 0;
  for (const choice of parsed.choices as Choice[]) {
    const message = choice?.message;
    if (message === null || typeof message !== 'object') continue;
    const slots = outputSlots(message);
    const pieces = slots.map((s) => s.get());
    const { result, redacted, changed } = await analyzePieces(call.ctx, pieces.length > 0 ? pieces : [''], {
      guardrails: call.options.guardrails,
      placeholderFor: call.placeholders.placeholderFor,
      deadline: detectionDeadline(call),
    });
    call.outputResults.push(result);
    call.meta.output.push(forMeta(result));
    const outgoing = toClient(redacted, call.placeholders, restore);
    slots.forEach((slot, i) => {
      if (outgoing[i] !== pieces[i]) slot.set(outgoing[i]!);
    });
    if (changed && 'logprobs' in choice) choice.logprobs = null;
  }
  const blocked = blockingMessage(call.outputResults);
  if (blocked !== undefined && call.ctx.config.gateway.blockMode === 'BLOCK') throw GatewayErrors.blocked(blocked);
  parsed.gw_meta = call.meta;
  return { status: 200, headers: upstream.headers, body: JSON.stringify(parsed) };
}

/** Types that blocked in MASK/WARN mode, for the X-GW-Warning header. */
export function warningFor(results: readonly DetectResponse[]): string | undefined {
  const types = new Set<string>();
  for (const r of results) {
    if (!r.blocked) continue;
    for (const d of r.detections) types.add(d.type);
    if (r.detections.length === 0) types.add('GUARDRAIL');
  }
  if (types.size === 0) return undefined;
  return `blocked content masked: ${[...types].join(', ')}`.replace(/[^\x20-\x7E]/g, '?').slice(0, 500);
}
