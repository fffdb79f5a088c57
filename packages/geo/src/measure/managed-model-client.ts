import { createBedrockProvider, UpstreamError } from '@keel/models';
import { type EngineClient, EngineError, parseChatCompletion, systemMessage } from './engine-client.ts';

export interface ManagedModelOptions {
  /** The AWS region the model is called in (e.g. `us-east-1`). */
  region: string;
  /** The Bedrock model id (or inference profile), e.g. `anthropic.claude-3-5-haiku-20241022-v1:0`. */
  model: string;
  timeoutMs: number;
  /** MANAGED_MODEL_ENDPOINT_OVERRIDE: the operator's endpoint instead of AWS (a VPC endpoint, a test double). */
  endpointOverride?: string | undefined;
}

/**
 * A managed-model engine: Amazon Bedrock (Converse API) through `@keel/models`, credentials from the service's
 * standard AWS chain (environment, shared files, SSO, instance or container role — never stored per engine).
 * The AWS SDK is loaded on the first ask, so a service without managed-model engines never loads it. The answer
 * comes back in chat-completions form, so its sources (URLs in the text) and token usage are read like any
 * other engine's; throttling and 5xx are retryable, other refusals are not.
 */
export function managedModelClient(options: ManagedModelOptions): EngineClient {
  const provider = createBedrockProvider({
    region: options.region,
    modelId: options.model,
    endpointOverride: options.endpointOverride,
  });
  return {
    async ask(question) {
      let reply: Awaited<ReturnType<typeof provider.chat>>;
      try {
        reply = await provider.chat(
          {
            model: options.model,
            messages: [
              { role: 'system', content: systemMessage(question) },
              { role: 'user', content: question.prompt },
            ],
          },
          { signal: AbortSignal.timeout(options.timeoutMs), timeoutMs: options.timeoutMs },
        );
      } catch (error) {
        const message = error instanceof UpstreamError ? error.message : 'the managed model could not be reached';
        throw new EngineError(message, true);
      }
      if (reply.status === 429 || reply.status >= 500) {
        await reply.dump();
        throw new EngineError(`the managed model answered HTTP ${reply.status}`, true);
      }
      if (reply.status !== 200) {
        await reply.dump();
        throw new EngineError(`the managed model answered HTTP ${reply.status}`, false);
      }
      return parseChatCompletion(await reply.text());
    },
    close: () => provider.close(),
  };
}
