/** An HTTP answer that is not a success, with the service's error body. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly code: string;
  readonly traceId: string | undefined;
  readonly details: { path?: string; message: string }[] | undefined;
  /** Whether the client treats this failure as transient (and retried it). */
  readonly retryable: boolean;
  /** The parsed response body (e.g. a JSON-RPC error object from a tool endpoint). */
  readonly body: unknown;

  constructor(status: number, body: unknown, retryable: boolean) {
    const error = (
      body as { error?: { code?: unknown; message?: unknown; traceId?: unknown; details?: unknown } } | null
    )?.error;
    const message = typeof error?.message === 'string' ? error.message : `HTTP ${status}`;
    super(message);
    this.status = status;
    this.code = typeof error?.code === 'string' ? error.code : `HTTP_${status}`;
    this.traceId = typeof error?.traceId === 'string' ? error.traceId : undefined;
    this.details = Array.isArray(error?.details) ? (error.details as { path?: string; message: string }[]) : undefined;
    this.retryable = retryable;
    this.body = body;
  }
}

/** The request never got an HTTP answer (connection failure or timeout) after every attempt. */
export class TransportError extends Error {
  override name = 'TransportError';
  readonly attempts: number;
  constructor(message: string, attempts: number, cause: unknown) {
    super(message, { cause });
    this.attempts = attempts;
  }
}

/** A JSON-RPC error object from a tool endpoint (the HTTP status is kept too: clients inspect both layers). */
export class ToolCallError extends Error {
  override name = 'ToolCallError';
  readonly rpcCode: number;
  readonly status: number;
  readonly data: unknown;
  constructor(rpcCode: number, message: string, status: number, data: unknown) {
    super(message);
    this.rpcCode = rpcCode;
    this.status = status;
    this.data = data;
  }
}
