import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
// Types only: the AWS SDK itself is loaded with import() when a managed model is first called (never at start-up).
import type {
  BedrockRuntimeClient,
  ContentBlock,
  ConverseCommandOutput,
  ConverseRequest,
  Message,
  SystemContentBlock,
  Tool,
} from '@aws-sdk/client-bedrock-runtime';
import {
  bufferedReply,
  type ChatCallOptions,
  type ChatCompletionsBody,
  type CompletionRequest,
  type ModelProvider,
  UpstreamError,
  type UpstreamReply,
} from './model-provider.ts';

export interface BedrockOptions {
  region: string;
  /** The model `complete()` uses (AI scoring, AI validators); the gateway forwards the request's `model`. */
  modelId: string;
  endpointOverride?: string | undefined;
}

/** The chat-completions error body for a request the managed model cannot serve. */
export function openAiError(message: string, code: string, type = 'invalid_request_error') {
  return { error: { message, type, param: null, code } };
}

type OpenAiContent = string | { type?: unknown; text?: unknown }[] | null | undefined;

function textOf(content: OpenAiContent): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => part && part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');
}

function toolResultBlock(message: Record<string, unknown>): ContentBlock {
  return {
    toolResult: {
      toolUseId: String(message.tool_call_id ?? ''),
      content: [{ text: textOf(message.content as OpenAiContent) }],
    },
  };
}

/**
 * Maps a chat-completions body onto a Converse request: system messages become `system`, user/assistant
 * (and tool results) become alternating turns, assistant tool calls become `toolUse` blocks, function tools
 * become `toolConfig`, and max_tokens/temperature/top_p/stop become `inferenceConfig`.
 */
export function toConverseRequest(body: ChatCompletionsBody, modelId: string): ConverseRequest {
  const system: SystemContentBlock[] = [];
  const messages: Message[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlock[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last && last.role === role) last.content!.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const raw of Array.isArray(body.messages) ? body.messages : []) {
    const message = raw as Record<string, unknown>;
    const text = textOf(message.content as OpenAiContent);
    switch (message.role) {
      case 'system':
      case 'developer':
        if (text) system.push({ text });
        break;
      case 'assistant': {
        const blocks: ContentBlock[] = text ? [{ text }] : [];
        for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
          const fn = (call as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }).function;
          let input: unknown = {};
          try {
            input = JSON.parse(String(fn?.arguments ?? '{}'));
          } catch {
            input = {};
          }
          blocks.push({
            toolUse: {
              toolUseId: String((call as { id?: unknown }).id ?? ''),
              name: String(fn?.name ?? ''),
              input: input as never,
            },
          });
        }
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [toolResultBlock(message)]);
        break;
      default:
        push('user', text ? [{ text }] : []);
    }
  }
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  const stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : undefined;
  const inferenceConfig = {
    ...(typeof maxTokens === 'number' ? { maxTokens } : {}),
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
    ...(typeof body.top_p === 'number' ? { topP: body.top_p } : {}),
    ...(stop ? { stopSequences: stop.map(String) } : {}),
  };
  const tools: Tool[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    const fn = (tool as { function?: { name?: unknown; description?: unknown; parameters?: unknown } }).function;
    if (!fn || typeof fn.name !== 'string') continue;
    tools.push({
      toolSpec: {
        name: fn.name,
        ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
        inputSchema: { json: (fn.parameters ?? { type: 'object', properties: {} }) as never },
      },
    });
  }
  return {
    modelId,
    messages,
    ...(system.length > 0 ? { system } : {}),
    ...(Object.keys(inferenceConfig).length > 0 ? { inferenceConfig } : {}),
    ...(tools.length > 0 ? { toolConfig: { tools } } : {}),
  };
}

const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  content_filtered: 'content_filter',
  guardrail_intervened: 'content_filter',
};

/** Maps a Converse answer onto a chat-completions response (`chat.completion`, one choice, usage). */
export function fromConverseOutput(output: ConverseCommandOutput, model: string) {
  const blocks = output.output?.message?.content ?? [];
  const text = blocks
    .map((b) => b.text)
    .filter((t): t is string => typeof t === 'string')
    .join('');
  const toolCalls = blocks
    .filter((b) => b.toolUse)
    .map((b) => ({
      id: b.toolUse!.toolUseId ?? '',
      type: 'function',
      function: { name: b.toolUse!.name ?? '', arguments: JSON.stringify(b.toolUse!.input ?? {}) },
    }));
  const input = output.usage?.inputTokens ?? 0;
  const completion = output.usage?.outputTokens ?? 0;
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || (toolCalls.length > 0 ? null : ''),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: FINISH[output.stopReason ?? ''] ?? 'stop',
      },
    ],
    usage: { prompt_tokens: input, completion_tokens: completion, total_tokens: input + completion },
  };
}

interface ServiceFailure {
  name?: string;
  $metadata?: { httpStatusCode?: number };
  $fault?: string;
}

/** Loads the AWS SDK modules (once per process; Node caches the import). */
async function loadSdk() {
  const [sdk, handler] = await Promise.all([
    import('@aws-sdk/client-bedrock-runtime'),
    import('@smithy/node-http-handler'),
  ]);
  return { sdk, handler };
}

type SendConverse = (
  client: BedrockRuntimeClient,
  request: ConverseRequest,
  signal: AbortSignal,
) => Promise<ConverseCommandOutput>;

/**
 * Amazon Bedrock through the official AWS SDK (Converse API), credentials from the standard chain
 * (environment, shared files, SSO, container/instance roles). Non-streaming only.
 */
export function createBedrockProvider(options: BedrockOptions): ModelProvider {
  let client: Promise<{ client: BedrockRuntimeClient; send: SendConverse }> | undefined;
  let closed = false;
  // The SDK is loaded (and the client built) on the first call, so a process that never calls a managed model
  // never loads it.
  const ready = () => {
    client ??= loadSdk().then(({ sdk, handler }) => ({
      client: new sdk.BedrockRuntimeClient({
        region: options.region,
        ...(options.endpointOverride ? { endpoint: options.endpointOverride } : {}),
        maxAttempts: 1,
        // Converse is a plain request/response call: HTTP/1.1 keep-alive (the client's default HTTP/2 handler is
        // only needed for bidirectional streams, which the gateway does not use with MANAGED_MODEL).
        requestHandler: new handler.NodeHttpHandler({
          httpAgent: new http.Agent({ keepAlive: true, maxSockets: 256 }),
          httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 256 }),
        }),
      }),
      send: (c, request, signal) => c.send(new sdk.ConverseCommand(request), { abortSignal: signal }),
    }));
    return client;
  };

  const converse = async (request: ConverseRequest, signal: AbortSignal) => {
    if (closed) throw new UpstreamError('managed model provider is closed');
    try {
      const { client: c, send } = await ready();
      return { output: await send(c, request, signal) };
    } catch (error) {
      if (signal.aborted) throw new UpstreamError('managed model request aborted', undefined, true);
      const failure = error as ServiceFailure;
      const status = failure.$metadata?.httpStatusCode;
      if (status === undefined) throw new UpstreamError(`managed model request failed: ${failure.name ?? 'Error'}`);
      return { status, name: failure.name ?? 'ServiceException' };
    }
  };

  return {
    kind: 'MANAGED_MODEL',
    supportsStreaming: false,
    async complete(req: CompletionRequest, { timeoutMs, signal }) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const result = await converse(
        toConverseRequest(
          {
            messages: req.messages,
            ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
            ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
          },
          options.modelId,
        ),
        signal ? AbortSignal.any([signal, timeout]) : timeout,
      ).catch((error: unknown) => {
        if (timeout.aborted) throw new UpstreamError(`managed model timed out after ${timeoutMs} ms`);
        throw error;
      });
      if (!('output' in result) || !result.output) {
        throw new UpstreamError(`managed model answered HTTP ${result.status}`, result.status);
      }
      const text = (result.output.output?.message?.content ?? []).map((b) => b.text ?? '').join('');
      return text;
    },
    async chat(body: ChatCompletionsBody, { signal, timeoutMs }: ChatCallOptions): Promise<UpstreamReply> {
      if (body.stream === true) {
        return bufferedReply(
          400,
          openAiError('Streaming is not supported by the managed model provider', 'streaming_not_supported'),
        );
      }
      const model = typeof body.model === 'string' && body.model ? body.model : options.modelId;
      const timeout = AbortSignal.timeout(timeoutMs);
      const result = await converse(toConverseRequest(body, model), AbortSignal.any([signal, timeout])).catch(
        (error: unknown) => {
          if (timeout.aborted && !signal.aborted)
            throw new UpstreamError(`managed model timed out after ${timeoutMs} ms`);
          throw error;
        },
      );
      if ('output' in result && result.output) return bufferedReply(200, fromConverseOutput(result.output, model));
      const status = 'status' in result ? result.status : 502;
      const name = 'name' in result ? result.name : 'ServiceException';
      // Only the error's type is passed on: a provider's message could quote the request.
      return bufferedReply(
        status,
        openAiError(
          `The managed model answered HTTP ${status} (${name})`,
          name,
          status >= 500 ? 'server_error' : 'invalid_request_error',
        ),
      );
    },
    close: async () => {
      closed = true;
      if (client) (await client).client.destroy();
    },
  };
}
