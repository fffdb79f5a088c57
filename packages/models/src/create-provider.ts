import { createBedrockProvider } from './bedrock-provider.ts';
import { createChatCompletionsProvider } from './chat-completions-provider.ts';
import type { ModelProvider } from './model-provider.ts';

/** Which upstream model to use, as a service's configuration states it (guard: AI_PROVIDER and its settings). */
export interface ModelProviderConfig {
  provider: 'CHAT_COMPLETIONS_COMPATIBLE' | 'MANAGED_MODEL';
  modelUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  managedModel: { region: string | undefined; modelId: string | undefined; endpointOverride: string | undefined };
}

/**
 * The configured upstream model, or undefined when none is configured (guard: local scoring only; the gateway
 * then answers 503). MANAGED_MODEL is Amazon Bedrock; `complete()` uses `managedModel.modelId` (else `model`).
 */
export function createModelProvider(ai: ModelProviderConfig): ModelProvider | undefined {
  if (ai.provider === 'CHAT_COMPLETIONS_COMPATIBLE') {
    if (!ai.modelUrl) return undefined;
    return createChatCompletionsProvider({ baseUrl: ai.modelUrl, apiKey: ai.apiKey, defaultModel: ai.model });
  }
  const { region, modelId, endpointOverride } = ai.managedModel;
  if (!region) return undefined;
  return createBedrockProvider({ region, modelId: modelId ?? ai.model, endpointOverride });
}
