import { checkOutboundUrlResolves, createSafeAgent, type SecretBox } from '@keel/core';
import {
  type ChatCompletionsBody,
  createBedrockProvider,
  createChatCompletionsProvider,
  type ModelProvider,
  UpstreamError,
} from '@keel/models';

/** A provider as the runtime uses it (from its row; the api key stays sealed until a client is built). */
export interface ProviderRecord {
  id: string;
  realmId: string;
  type: string;
  name: string;
  baseUrl: string | null;
  apiKeySealed: string | null;
  supportsText: boolean;
  supportsImage: boolean;
  textModel: string | null;
  imageModel: string | null;
  prices: { input: string; output: string; image: string };
  currency: string;
  isDefault: boolean;
  isActive: boolean;
  settings: Record<string, unknown>;
  updatedAt: string;
}

export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ModelCallResult {
  content: string;
  inputTokens: number;
  outputTokens: number;
  model: string;
}

/** A model call that failed; the message never carries the request, the answer body or the api key. */
export class ModelCallError extends Error {
  override name = 'ModelCallError';
  readonly retryable: boolean;
  readonly timedOut: boolean;
  constructor(message: string, retryable: boolean, timedOut = false) {
    super(message);
    this.retryable = retryable;
    this.timedOut = timedOut;
  }
}

export interface ModelClients {
  /** One chat-completions call with a deadline; resolves to the assistant text and token usage. */
  complete(
    provider: ProviderRecord,
    messages: ChatTurn[],
    options: { timeoutMs: number; signal: AbortSignal },
  ): Promise<ModelCallResult>;
  /** Forgets (and closes) the client of a provider that changed or was deleted. */
  drop(providerId: string): void;
  close(): Promise<void>;
}

const VETTED_FOR_MS = 60_000;
/** A chat answer larger than this is refused (the runtime never buffers unbounded upstream bodies). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

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
const MAX_CLIENTS = 256;

/**
 * Model clients built on @keel/models (the pooled chat-completions client and the Bedrock Converse
 * client), one per provider version. Base URLs are checked against the SSRF rules when saved and again before
 * use: the host is resolved and every address must be public (re-checked at least every minute), unless
 * KEEL_ALLOW_PRIVATE_URLS is on.
 */
export function createModelClients(options: { secrets: SecretBox; allowPrivateUrls: boolean }): ModelClients {
  const clients = new Map<string, { version: string; provider: ModelProvider }>();
  const vetted = new Map<string, number>();

  const vet = async (url: string) => {
    const now = Date.now();
    if ((vetted.get(url) ?? 0) > now) return;
    try {
      await checkOutboundUrlResolves(url, { allowPrivate: options.allowPrivateUrls });
    } catch {
      throw new ModelCallError('the provider base URL is not allowed (SSRF rules)', false);
    }
    if (vetted.size > 1000) vetted.clear();
    vetted.set(url, now + VETTED_FOR_MS);
  };

  const clientFor = (record: ProviderRecord): ModelProvider => {
    const cached = clients.get(record.id);
    if (cached && cached.version === record.updatedAt) return cached.provider;
    if (cached) void cached.provider.close().catch(() => undefined);
    let provider: ModelProvider;
    if (record.type === 'bedrock') {
      provider = createBedrockProvider({
        region: String(record.settings.region ?? ''),
        modelId: record.textModel ?? '',
        endpointOverride: record.baseUrl ?? undefined,
      });
    } else {
      provider = createChatCompletionsProvider({
        baseUrl: record.baseUrl ?? '',
        apiKey: record.apiKeySealed ? options.secrets.decrypt(record.apiKeySealed) : undefined,
        defaultModel: record.textModel ?? '',
        // Connect only to vetted addresses: the name is resolved and checked inside the connector, so a DNS
        // answer that changes after the save-time check cannot point the call at a private address.
        dispatcher: createSafeAgent({ allowPrivate: options.allowPrivateUrls, connections: 64 }),
      });
    }
    if (clients.size >= MAX_CLIENTS) {
      const [oldest] = clients.keys();
      void clients
        .get(oldest!)
        ?.provider.close()
        .catch(() => undefined);
      clients.delete(oldest!);
    }
    clients.set(record.id, { version: record.updatedAt, provider });
    return provider;
  };

  return {
    async complete(record, messages, { timeoutMs, signal }) {
      if (record.baseUrl) await vet(record.baseUrl);
      const provider = clientFor(record);
      const settings = record.settings;
      const body: ChatCompletionsBody = {
        model: record.textModel ?? undefined,
        messages,
        ...(typeof settings.temperature === 'number' ? { temperature: settings.temperature } : {}),
        ...(typeof settings.max_tokens === 'number' ? { max_tokens: settings.max_tokens } : {}),
        ...(typeof settings.top_p === 'number' ? { top_p: settings.top_p } : {}),
      };
      const deadline = AbortSignal.timeout(timeoutMs);
      const combined = AbortSignal.any([signal, deadline]);
      let text: string;
      let status: number;
      try {
        const reply = await provider.chat(body, { signal: combined, timeoutMs });
        status = reply.status;
        if (status < 200 || status >= 300) {
          await reply.dump().catch(() => undefined);
          throw new ModelCallError(`the provider answered HTTP ${status}`, status === 429 || status >= 500);
        }
        text = await readCapped(reply.body, MAX_ANSWER_BYTES);
      } catch (error) {
        if (error instanceof ModelCallError) throw error;
        if (deadline.aborted) throw new ModelCallError(`no answer within ${timeoutMs} ms`, true, true);
        if (signal.aborted) throw new ModelCallError('the call was cancelled', false, true);
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
      const count = (value: unknown, fallback: number) =>
        typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : fallback;
      return {
        content,
        inputTokens: count(parsed.usage?.prompt_tokens, estimateTokens(messages.map((m) => m.content).join('\n'))),
        outputTokens: count(parsed.usage?.completion_tokens, estimateTokens(content)),
        model: typeof parsed.model === 'string' ? parsed.model : (record.textModel ?? ''),
      };
    },
    drop(providerId) {
      const cached = clients.get(providerId);
      if (cached) void cached.provider.close().catch(() => undefined);
      clients.delete(providerId);
    },
    async close() {
      await Promise.allSettled([...clients.values()].map((c) => c.provider.close()));
      clients.clear();
    },
  };
}

/** A conservative token estimate (about four characters per token) for budgets before a call. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
