import type { GuardConfig } from '../config.ts';
import { createChatCompletionsProvider } from './chat-completions-provider.ts';
import type { ModelProvider } from './model-provider.ts';

/** The upstream model configured by AI_PROVIDER, or undefined when none is configured (local scoring only). */
export function createModelProvider(ai: GuardConfig['ai']): ModelProvider | undefined {
  if (ai.provider === 'CHAT_COMPLETIONS_COMPATIBLE') {
    if (!ai.modelUrl) return undefined;
    return createChatCompletionsProvider({ baseUrl: ai.modelUrl, apiKey: ai.apiKey, defaultModel: ai.model });
  }
  return undefined;
}
