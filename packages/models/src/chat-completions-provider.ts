import { withClientSpan } from '@keel/core';
import { Agent, request } from 'undici';
import { callChat } from './chat-call.ts';
import {
  type ChatCallOptions,
  type ChatCompletionsBody,
  type CompletionRequest,
  type ModelProvider,
  UpstreamError,
  type UpstreamReply,
} from './model-provider.ts';

export interface ChatCompletionsOptions {
  /** Base URL of a chat-completions API; `/chat/completions` is appended. */
  baseUrl: string;
  apiKey: string | undefined;
  defaultModel: string;
  /** Connections kept open to the upstream. */
  connections?: number;
  /**
   * The HTTP agent to use instead of a plain pooled one — e.g. core's `createSafeAgent`, which connects only to
   * vetted public addresses for user-supplied base URLs. The provider closes it on `close()`.
   */
  dispatcher?: Agent;
}

/** Joins a base URL and the API path without doubling or losing the slash. */
export function chatCompletionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

/** A signal that never aborts, for calls whose caller brings none (the deadline still applies). */
const NEVER = new AbortController().signal;

/** Upstream headers a client of the gateway may rely on (retries, rate limits, timing). */
const FORWARDED_HEADER =
  /^(?:retry-after(?:-ms)?|x-ratelimit-[a-z-]+|openai-processing-ms|openai-version|x-should-retry)$/;

export function forwardedHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' && FORWARDED_HEADER.test(name)) kept[name] = value;
  }
  return kept;
}

/** A provider for any OpenAI-compatible chat-completions API, over a pooled keep-alive HTTP client. */
export function createChatCompletionsProvider(options: ChatCompletionsOptions): ModelProvider & { dispatcher: Agent } {
  const url = chatCompletionsUrl(options.baseUrl);
  const dispatcher =
    options.dispatcher ??
    new Agent({
      connections: options.connections ?? 256,
      keepAliveTimeout: 30_000,
      pipelining: 1,
    });
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const streamHeaders: Record<string, string> = { ...headers, accept: 'text/event-stream' };

  const provider: ModelProvider & { dispatcher: Agent } = {
    kind: 'CHAT_COMPLETIONS_COMPATIBLE',
    supportsStreaming: true,
    dispatcher,
    async complete(req: CompletionRequest, { timeoutMs, signal }) {
      // The same call, parse and failure rules as every other caller of a chat model (callChat).
      const answer = await callChat(
        provider,
        {
          model: req.model ?? options.defaultModel,
          messages: req.messages,
          temperature: req.temperature,
          maxTokens: req.maxTokens,
        },
        { timeoutMs, signal: signal ?? NEVER },
      );
      return answer.content;
    },
    async chat(body: ChatCompletionsBody, { signal, timeoutMs }: ChatCallOptions): Promise<UpstreamReply> {
      let response: Awaited<ReturnType<typeof request>>;
      try {
        // A CLIENT span until the upstream's headers arrive; its W3C traceparent goes to the provider.
        const model = typeof body.model === 'string' ? body.model : '';
        response = await withClientSpan(
          `chat ${model}`.trim(),
          'provider',
          { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model },
          (traceparent) =>
            request(url, {
              method: 'POST',
              headers: { ...(body.stream === true ? streamHeaders : headers), traceparent },
              body: JSON.stringify(body),
              dispatcher,
              signal,
              headersTimeout: timeoutMs,
              bodyTimeout: timeoutMs,
            }),
        );
      } catch (error) {
        if (signal.aborted) throw new UpstreamError('upstream request aborted', undefined, true);
        const name = (error as { code?: string }).code ?? (error as Error).name;
        throw new UpstreamError(`upstream request failed: ${name}`);
      }
      const contentType = response.headers['content-type'];
      return {
        status: response.statusCode,
        contentType: typeof contentType === 'string' ? contentType : undefined,
        headers: forwardedHeaders(response.headers),
        body: response.body,
        text: () => response.body.text(),
        dump: () => response.body.dump().then(() => undefined),
      };
    },
    close: () => dispatcher.close(),
  };
  return provider;
}
