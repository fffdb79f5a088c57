import { ApiError, TransportError } from './errors.ts';

export interface TransportOptions {
  baseUrl: string;
  /** Headers sent with every request (credentials). */
  headers: Record<string, string>;
  /** Per attempt. Default 10 s. */
  timeoutMs?: number;
  /** Retries after the first attempt for transient failures. Default 3. */
  maxRetries?: number;
  /** First backoff; doubles each retry, with full jitter, capped at 5 s. Default 200 ms. */
  retryBaseDelayMs?: number;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Whether repeating the request is harmless. GETs and requests with an Idempotency-Key are; other writes are
   * retried only when the service certainly did not act (429, 503).
   */
  idempotent: boolean;
}

/** HTTP statuses that may succeed when repeated. 401, 403, 404, 409 and 422 never are. */
const TRANSIENT = new Set([408, 425, 429, 500, 502, 503, 504]);
const SAFE_FOR_ANY_METHOD = new Set([429, 503]);
const MAX_DELAY_MS = 5_000;
const MAX_RETRY_AFTER_MS = 30_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.min(Math.max(0, date - Date.now()), MAX_RETRY_AFTER_MS) : undefined;
}

/**
 * A small JSON-over-HTTP transport shared by the clients: per-attempt timeout, retries with exponential backoff
 * and jitter for transient failures only (connection errors, timeouts, 408/425/429/5xx; Retry-After honoured),
 * never for authorization, validation, conflict or cyclic-graph errors.
 */
export class HttpTransport {
  readonly #options: Required<Omit<TransportOptions, 'fetch'>> & { fetch: typeof fetch };

  constructor(options: TransportOptions) {
    this.#options = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: options.headers,
      timeoutMs: options.timeoutMs ?? 10_000,
      maxRetries: options.maxRetries ?? 3,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 200,
      fetch: options.fetch ?? globalThis.fetch,
    };
  }

  url(path: string, query?: RequestOptions['query']): string {
    const url = new URL(this.#options.baseUrl + path);
    for (const [key, value] of Object.entries(query ?? {}))
      if (value !== undefined) url.searchParams.set(key, String(value));
    return url.toString();
  }

  /** Sends a request and returns the response once it is a success; throws ApiError or TransportError otherwise. */
  async send(request: RequestOptions): Promise<Response> {
    const { maxRetries, retryBaseDelayMs, timeoutMs } = this.#options;
    const url = this.url(request.path, request.query);
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.#options.headers,
      ...request.headers,
    };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    let lastError: unknown;
    let waitMs: number | undefined;
    let attempts = 0;
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      if (attempt > 0)
        await sleep(waitMs ?? Math.random() * Math.min(MAX_DELAY_MS, retryBaseDelayMs * 2 ** (attempt - 1)));
      waitMs = undefined;
      attempts++;
      let response: Response;
      try {
        response = await this.#options.fetch(url, {
          method: request.method,
          headers,
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        lastError = error;
        // The request may have reached the service: repeat it only when that is harmless.
        if (!request.idempotent) break;
        continue;
      }
      if (response.ok) return response;
      const retryable =
        TRANSIENT.has(response.status) && (request.idempotent || SAFE_FOR_ANY_METHOD.has(response.status));
      const text = await response.text().catch(() => '');
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      const error = new ApiError(response.status, parsed, retryable);
      if (!retryable || attempt === maxRetries) throw error;
      lastError = error;
      waitMs = retryAfterMs(response.headers.get('retry-after'));
    }
    throw new TransportError(
      `${request.method} ${request.path} failed after ${attempts} attempt(s): ${(lastError as Error)?.message ?? 'no answer'}`,
      attempts,
      lastError,
    );
  }

  /** Sends a request and parses the JSON answer (`undefined` for 204 No Content or an empty body). */
  async json<T>(request: RequestOptions): Promise<T> {
    const response = await this.send(request);
    const text = response.status === 204 ? '' : await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
}
