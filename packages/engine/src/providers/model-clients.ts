import { checkOutboundUrlResolves, createSafeAgent, type SecretBox } from '@keel/core';
import {
  type ChatCallResult,
  callChat,
  createBedrockProvider,
  createChatCompletionsProvider,
  ModelCallError,
  type ModelProvider,
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

export interface ModelClients {
  /** One chat-completions call with a deadline; resolves to the assistant text and token usage. */
  complete(
    provider: ProviderRecord,
    messages: ChatTurn[],
    options: { timeoutMs: number; signal: AbortSignal; maxTokens?: number },
  ): Promise<ChatCallResult>;
  /** Forgets (and closes) the client of a provider that changed or was deleted. */
  drop(providerId: string): void;
  close(): Promise<void>;
}

const VETTED_FOR_MS = 60_000;
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
    async complete(record, messages, { timeoutMs, signal, maxTokens }) {
      if (record.baseUrl) await vet(record.baseUrl);
      const settings = record.settings;
      const numeric = (value: unknown) => (typeof value === 'number' ? value : undefined);
      return callChat(
        clientFor(record),
        {
          model: record.textModel ?? undefined,
          messages,
          temperature: numeric(settings.temperature),
          // A caller's cap (e.g. a sampling request's budget) lowers the provider's own setting, never raises it.
          maxTokens:
            maxTokens === undefined
              ? numeric(settings.max_tokens)
              : Math.min(maxTokens, numeric(settings.max_tokens) ?? maxTokens),
          topP: numeric(settings.top_p),
        },
        { timeoutMs, signal },
      );
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
