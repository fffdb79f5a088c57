import { checkOutboundUrl, createSafeAgent } from '@keel/core';
import { retryWithBackoff } from '@keel/models';
import { type Dispatcher, request } from 'undici';
import { type Citation, extractCitations } from './citations.ts';

/** One question to an engine. */
export interface EngineQuestion {
  prompt: string;
  locale: string;
  persona: string | null;
  /** Simulations only: modified content offered to the engine as a source. */
  source?: { url: string; text: string } | undefined;
}

/** An engine's answer with its sources and usage. */
export interface EngineReply {
  text: string;
  citations: Citation[];
  inputTokens: number;
  outputTokens: number;
}

/**
 * What a run needs from an engine: ask one question. Implementations: chat-completions over HTTP, the managed model
 * (managed-model-client.ts), test doubles.
 */
export interface EngineClient {
  ask(question: EngineQuestion): Promise<EngineReply>;
  /** Releases the client's connections once the run is done with it. */
  close?(): Promise<void>;
}

/** A failed ask; `retryable` for 429, 5xx and network failures. */
export class EngineError extends Error {
  override name = 'EngineError';
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryable: boolean, retryAfterMs?: number) {
    super(message);
    this.retryable = retryable;
    this.retryAfterMs = retryAfterMs;
  }
}

export interface ChatCompletionsOptions {
  baseUrl: string;
  model: string;
  apiKey: string | null;
  timeoutMs: number;
  /** KEEL_ALLOW_PRIVATE_URLS: loopback and plain http allowed (development and tests). */
  allowPrivate: boolean;
  /** The connection pool (SSRF-safe, shared per engine); created when absent. */
  dispatcher?: Dispatcher;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The system message: the locale and persona the tracked prompt asks in. */
export function systemMessage(question: EngineQuestion): string {
  const persona = question.persona ? ` The user is: ${question.persona}.` : '';
  const source = question.source
    ? `\n\nAmong your sources is this page (${question.source.url}):\n${question.source.text}`
    : '';
  return `Answer the user's question as you normally would, in the language of locale ${question.locale}.${persona} Cite your sources with URLs.${source}`;
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) =>
        part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
      )
      .join('');
  return '';
}

/**
 * A chat-completions client for any compatible API (OpenAI, Perplexity, OpenRouter, vLLM, …): POST
 * `{baseUrl}/chat/completions`, the answer's sources read from `citations`, `search_results`, `url_citation`
 * annotations and URLs in the text. The URL passes the SSRF policy and connections go only to vetted addresses
 * (core's safe agent); every ask has a deadline and the answer body is capped at 4 MiB.
 */
export function chatCompletionsClient(options: ChatCompletionsOptions): EngineClient {
  const endpoint = checkOutboundUrl(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
    allowPrivate: options.allowPrivate,
  });
  const dispatcher =
    options.dispatcher ??
    createSafeAgent({ allowPrivate: options.allowPrivate, connections: 16, connectTimeoutMs: 5000 });
  return {
    async ask(question) {
      let response: Dispatcher.ResponseData;
      try {
        response = await request(endpoint, {
          method: 'POST',
          dispatcher,
          headers: {
            'content-type': 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({
            model: options.model,
            messages: [
              { role: 'system', content: systemMessage(question) },
              { role: 'user', content: question.prompt },
            ],
          }),
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (error) {
        throw new EngineError(
          `the engine could not be reached (${(error as { code?: string }).code ?? 'network error'})`,
          true,
        );
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_BODY_BYTES) {
          response.body.destroy();
          throw new EngineError('the engine answered more than 4 MiB', false);
        }
        chunks.push(chunk as Buffer);
      }
      if (response.statusCode === 429 || response.statusCode >= 500) {
        const retryAfter = Number(response.headers['retry-after']);
        throw new EngineError(
          `the engine answered HTTP ${response.statusCode}`,
          true,
          Number.isFinite(retryAfter) ? Math.min(retryAfter, 60) * 1000 : undefined,
        );
      }
      if (response.statusCode !== 200) throw new EngineError(`the engine answered HTTP ${response.statusCode}`, false);
      return parseChatCompletion(Buffer.concat(chunks).toString('utf8'));
    },
  };
}

/** An engine reply from a chat-completions response body: the message text, its sources and the token usage. */
export function parseChatCompletion(bodyText: string): EngineReply {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(bodyText) as Record<string, unknown>;
  } catch {
    throw new EngineError('the engine answered something other than JSON', false);
  }
  if (!body || typeof body !== 'object') throw new EngineError('the engine answered an unexpected shape', false);
  const choice = Array.isArray(body.choices) ? (body.choices[0] as Record<string, unknown> | undefined) : undefined;
  const text = messageText((choice?.message as Record<string, unknown> | undefined)?.content);
  const usage = (body.usage ?? {}) as Record<string, unknown>;
  const count = (value: unknown) =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
  return {
    text,
    citations: extractCitations(body, text),
    inputTokens: count(usage.prompt_tokens ?? usage.input_tokens),
    outputTokens: count(usage.completion_tokens ?? usage.output_tokens),
  };
}

/**
 * Asks with retries: a retryable failure (429, 5xx, network) is tried again up to `attempts` times with
 * exponential backoff (or the engine's Retry-After, at most 60 s).
 */
export function askWithRetry(
  client: EngineClient,
  question: EngineQuestion,
  attempts = 3,
  baseDelayMs = 500,
): Promise<EngineReply> {
  return retryWithBackoff(() => client.ask(question), {
    maxRetries: attempts - 1,
    baseDelayMs,
    retryable: (error) => error instanceof EngineError && error.retryable,
    retryAfterMs: (error) => (error instanceof EngineError ? error.retryAfterMs : undefined),
  });
}

/**
 * A per-engine rate limit: at most `perMinute` asks start in any minute (a token bucket refilled continuously,
 * holding at most one second's worth so a run does not burst at start).
 */
export class RateLimiter {
  readonly #perMs: number;
  readonly #capacity: number;
  #tokens: number;
  #last = Date.now();
  #queue: Promise<void> = Promise.resolve();

  constructor(perMinute: number) {
    this.#perMs = perMinute / 60_000;
    this.#capacity = Math.max(1, perMinute / 60);
    this.#tokens = this.#capacity;
  }

  /** Resolves when the next ask may start. */
  take(): Promise<void> {
    const turn = this.#queue.then(async () => {
      for (;;) {
        const now = Date.now();
        this.#tokens = Math.min(this.#capacity, this.#tokens + (now - this.#last) * this.#perMs);
        this.#last = now;
        if (this.#tokens >= 1) {
          this.#tokens -= 1;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.ceil((1 - this.#tokens) / this.#perMs)));
      }
    });
    this.#queue = turn;
    return turn;
  }
}
