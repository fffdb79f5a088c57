/** A chat message as the chat-completions API sees it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface CompletionRequest {
  model?: string;
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
}

/**
 * The one interface every upstream model sits behind (guard's AI scoring, AI validators and, later, the
 * gateway). `complete` resolves to the assistant's text or rejects; it never resolves with partial output.
 */
export interface ModelProvider {
  readonly kind: 'CHAT_COMPLETIONS_COMPATIBLE' | 'MANAGED_MODEL';
  complete(request: CompletionRequest, options: { timeoutMs: number; signal?: AbortSignal }): Promise<string>;
  close(): Promise<void>;
}

/** An upstream call that failed; the message never contains the request or response body. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}
