import type { ChatCompletionsBody, ChatMessage, ModelProvider } from './model-provider.ts';
import { UpstreamError } from './model-provider.ts';

/** A model call that failed; the message never carries the request, the answer body or an api key. */
export class ModelCallError extends Error {
  override name = 'ModelCallError';
  /** Worth another attempt: a timeout, a dropped connection, HTTP 429 or 5xx, an unreadable answer. */
  readonly retryable: boolean;
  readonly timedOut: boolean;
  constructor(message: string, retryable: boolean, timedOut = false) {
    super(message);
    this.retryable = retryable;
    this.timedOut = timedOut;
  }
}

/** One answered chat call with its usage: the upstream's token counts, or estimates when it sent none. */
export interface ChatCallResult {
  content: string;
  inputTokens: number;
  outputTokens: number;
  /** The model the upstream says answered, else the one asked for. */
  model: string;
}

export interface ChatCall {
  model: string | undefined;
  messages: ChatMessage[];
  /** Sampling parameters passed through when set. */
  temperature?: number | undefined;
  maxTokens?: number | undefined;
  topP?: number | undefined;
}

/** A chat answer larger than this is refused unless the caller sets another bound: bodies are never read unbounded. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** A conservative token estimate (about four characters per token), for budgets before a call. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

async function readCapped(body: AsyncIterable<Uint8Array>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) throw new ModelCallError(`the provider answer exceeds ${max} bytes`, false);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}

const tokenCount = (value: unknown, fallback: number) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : fallback;

/**
 * One non-streaming chat call through any provider with a deadline (`timeoutMs`, and `signal` for the caller's own
 * cancel): the assistant text with usage accounting. Every failure is a ModelCallError that says whether another
 * attempt may help (see `retryWithBackoff`).
 */
export async function callChat(
  provider: ModelProvider,
  call: ChatCall,
  options: { timeoutMs: number; signal: AbortSignal; maxAnswerBytes?: number },
): Promise<ChatCallResult> {
  const body: ChatCompletionsBody = {
    model: call.model,
    messages: call.messages,
    ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
    ...(call.maxTokens !== undefined ? { max_tokens: call.maxTokens } : {}),
    ...(call.topP !== undefined ? { top_p: call.topP } : {}),
  };
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const combined = AbortSignal.any([options.signal, deadline]);
  let text: string;
  try {
    const reply = await provider.chat(body, { signal: combined, timeoutMs: options.timeoutMs });
    if (reply.status < 200 || reply.status >= 300) {
      await reply.dump().catch(() => undefined);
      throw new ModelCallError(
        `the provider answered HTTP ${reply.status}`,
        reply.status === 429 || reply.status >= 500,
      );
    }
    text = await readCapped(reply.body, options.maxAnswerBytes ?? MAX_ANSWER_BYTES);
  } catch (error) {
    if (error instanceof ModelCallError) throw error;
    if (deadline.aborted) throw new ModelCallError(`no answer within ${options.timeoutMs} ms`, true, true);
    if (options.signal.aborted) throw new ModelCallError('the call was cancelled', false, true);
    const reason = error instanceof UpstreamError ? error.message : 'the connection failed';
    throw new ModelCallError(reason, true);
  }
  let parsed: {
    model?: unknown;
    choices?: { message?: { content?: unknown } }[];
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
  };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ModelCallError('the provider answer is not JSON', true);
  }
  const content = parsed?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new ModelCallError('the provider answer has no message content', true);
  return {
    content,
    inputTokens: tokenCount(
      parsed.usage?.prompt_tokens,
      estimateTokens(call.messages.map((m) => m.content).join('\n')),
    ),
    outputTokens: tokenCount(parsed.usage?.completion_tokens, estimateTokens(content)),
    model: typeof parsed.model === 'string' ? parsed.model : (call.model ?? ''),
  };
}

export interface RetryPolicy {
  /** Attempts after the first. */
  maxRetries: number;
  /** The wait before the first retry; each next one waits twice as long. */
  baseDelayMs: number;
  retryable: (error: unknown) => boolean;
  /** Time left before the caller's deadline: a retry whose wait would reach it is not made (the error stands). */
  remainingMs?: () => number;
  /** Runs before every attempt (to count it, or to throw and stop). */
  beforeAttempt?: (attempt: number) => void;
  /** A wait the failure itself asks for (an upstream's Retry-After), used instead of the back-off when given. */
  retryAfterMs?: (error: unknown) => number | undefined;
}

/** Runs `node`, retrying the failures `retryable` accepts with exponential back-off, within the policy's bounds. */
export async function retryWithBackoff<T>(node: (attempt: number) => Promise<T>, policy: RetryPolicy): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    policy.beforeAttempt?.(attempt);
    try {
      return await node(attempt);
    } catch (error) {
      if (attempt >= policy.maxRetries || !policy.retryable(error)) throw error;
      const delay = policy.retryAfterMs?.(error) ?? policy.baseDelayMs * 2 ** attempt;
      if (policy.remainingMs && delay >= policy.remainingMs()) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
