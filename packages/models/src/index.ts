// @keel/models: the upstream model clients guard and the engine share (chat-completions and Amazon Bedrock).
// The AWS SDK is loaded only when a managed model is first called.
export { type BedrockOptions, createBedrockProvider } from './bedrock-provider.ts';
export {
  type ChatCall,
  type ChatCallResult,
  callChat,
  estimateTokens,
  MAX_ANSWER_BYTES,
  ModelCallError,
  type RetryPolicy,
  retryWithBackoff,
} from './chat-call.ts';
export { type ChatCompletionsOptions, createChatCompletionsProvider } from './chat-completions-provider.ts';
export { createModelProvider, type ModelProviderConfig } from './create-provider.ts';
export {
  type ChatCallOptions,
  type ChatCompletionsBody,
  type ChatMessage,
  type CompletionRequest,
  type ModelProvider,
  UpstreamError,
  type UpstreamReply,
} from './model-provider.ts';
