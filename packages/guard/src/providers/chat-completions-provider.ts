import { Agent, request } from 'undici';
import { type CompletionRequest, type ModelProvider, UpstreamError } from './model-provider.ts';

export interface ChatCompletionsOptions {
  /** Base URL of a chat-completions API; `/chat/completions` is appended. */
  baseUrl: string;
  apiKey: string | undefined;
  defaultModel: string;
  /** Connections kept open to the upstream. */
  connections?: number;
}

/** Joins a base URL and the API path without doubling or losing the slash. */
export function chatCompletionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

interface ChatCompletionBody {
  choices?: { message?: { content?: unknown } }[];
}

/** A provider for any OpenAI-compatible chat-completions API, over a pooled keep-alive HTTP client. */
export function createChatCompletionsProvider(options: ChatCompletionsOptions): ModelProvider & { dispatcher: Agent } {
  const url = chatCompletionsUrl(options.baseUrl);
  const dispatcher = new Agent({
    connections: options.connections ?? 64,
    keepAliveTimeout: 30_000,
    pipelining: 1,
  });
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  return {
    kind: 'CHAT_COMPLETIONS_COMPATIBLE',
    dispatcher,
    async complete(req: CompletionRequest, { timeoutMs, signal }) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const body = JSON.stringify({
        model: req.model ?? options.defaultModel,
        messages: req.messages,
        ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
        ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
      });
      let response: Awaited<ReturnType<typeof request>>;
      try {
        response = await request(url, {
          method: 'POST',
          headers,
          body,
          dispatcher,
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
      } catch (error) {
        const reason = timeout.aborted ? `timed out after ${timeoutMs} ms` : (error as Error).name;
        throw new UpstreamError(`upstream request failed: ${reason}`);
      }
      if (response.statusCode < 200 || response.statusCode >= 300) {
        await response.body.dump();
        throw new UpstreamError(`upstream answered HTTP ${response.statusCode}`, response.statusCode);
      }
      let parsed: ChatCompletionBody;
      try {
        parsed = (await response.body.json()) as ChatCompletionBody;
      } catch {
        throw new UpstreamError('upstream answered with a body that is not JSON', response.statusCode);
      }
      const content = parsed.choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new UpstreamError('upstream answer has no message content');
      return content;
    },
    close: () => dispatcher.close(),
  };
}
