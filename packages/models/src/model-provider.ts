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

/** A whole chat-completions request body, as a client sent it (after the gateway's redaction). */
export type ChatCompletionsBody = Record<string, unknown> & { model?: unknown; messages?: unknown; stream?: unknown };

export interface ChatCallOptions {
  /** Aborts the upstream request (client gone, overall deadline reached). */
  signal: AbortSignal;
  /** Longest wait for the upstream's headers and between two body chunks. */
  timeoutMs: number;
}

/**
 * The upstream's answer to a pass-through call, not yet read: the status, the headers worth passing on, and
 * the body as a byte stream (JSON or SSE). Exactly one of `body`, `text()` or `dump()` may be consumed.
 */
export interface UpstreamReply {
  status: number;
  contentType: string | undefined;
  /** Headers a client may rely on (retry-after, rate-limit and processing-time headers), lower-case names. */
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array>;
  /** Reads the whole body as UTF-8 text. */
  text(): Promise<string>;
  /** Discards the body and releases the connection. */
  dump(): Promise<void>;
}

/**
 * The one interface every upstream model sits behind: guard's AI scoring and AI validators call `complete`,
 * the gateway calls `chat` (a whole chat-completions body passed through, streaming or not). `complete`
 * resolves to the assistant's text or rejects; it never resolves with partial output.
 */
export interface ModelProvider {
  readonly kind: 'CHAT_COMPLETIONS_COMPATIBLE' | 'MANAGED_MODEL';
  /** False when the upstream cannot stream (`stream: true` is then a 400 `streaming_not_supported`). */
  readonly supportsStreaming: boolean;
  complete(request: CompletionRequest, options: { timeoutMs: number; signal?: AbortSignal }): Promise<string>;
  /**
   * Sends a chat-completions body upstream and returns the answer unread, whatever its status (an upstream
   * 4xx/5xx is a reply, not an exception). Rejects with UpstreamError only when no answer arrived
   * (connection refused, timeout, abort).
   */
  chat(body: ChatCompletionsBody, options: ChatCallOptions): Promise<UpstreamReply>;
  close(): Promise<void>;
}

/** An upstream call that failed; the message never contains the request or response body. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly status: number | undefined;
  /** True when the call ended because the caller's signal or a timeout aborted it. */
  readonly aborted: boolean;
  constructor(message: string, status?: number, aborted = false) {
    super(message);
    this.status = status;
    this.aborted = aborted;
  }
}

/** An UpstreamReply over a body that is already in memory (providers that do not stream). */
export function bufferedReply(status: number, payload: unknown, headers: Record<string, string> = {}): UpstreamReply {
  const text = JSON.stringify(payload);
  const bytes = Buffer.from(text, 'utf8');
  return {
    status,
    contentType: 'application/json',
    headers,
    body: (async function* () {
      yield bytes;
    })(),
    text: async () => text,
    dump: async () => {},
  };
}
