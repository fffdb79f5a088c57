import type { GuardConfig } from '../config.ts';
import { createBedrockProvider } from './bedrock-provider.ts';
import { createChatCompletionsProvider } from './chat-completions-provider.ts';
import type { ModelProvider } from './model-provider.ts';

/**
 * The upstream model configured by AI_PROVIDER, or undefined when none is configured (local scoring only; the
 * gateway then answers 503). MANAGED_MODEL is Amazon Bedrock; `complete()` uses MANAGED_MODEL_ID (else AI_MODEL).
 */
export function createModelProvider(ai: GuardConfig['ai']): ModelProvider | undefined {
  if (ai.provider === 'CHAT_COMPLETIONS_COMPATIBLE') {
    if (!ai.modelUrl) return undefined;
    return createChatCompletionsProvider({ baseUrl: ai.modelUrl, apiKey: ai.apiKey, defaultModel: ai.model });
  }
  const { region, modelId, endpointOverride } = ai.managedModel;
  if (!region) return undefined;
  return createBedrockProvider({ region, modelId: modelId ?? ai.model, endpointOverride });
}
