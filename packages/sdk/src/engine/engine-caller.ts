import { ApiError } from '../http/errors.ts';
import { HttpTransport, type RequestOptions } from '../http/transport.ts';

export interface EngineClientOptions {
  /** The engine REST listener, e.g. `http://127.0.0.1:8083`. */
  baseUrl: string;
  accessKey: string;
  secretKey: string;
  /** Per attempt; default 60 s (a chat turn waits for the model). */
  timeoutMs?: number;
  /** Retries of transient failures (connection errors, 429, 5xx) for idempotent calls; default 2. */
  maxRetries?: number;
  /** First backoff; doubles each retry, with jitter, capped at 5 s. Default 200 ms. */
  retryBaseDelayMs?: number;
  /** Exchange a new token this many seconds before the current one expires; default 30. */
  refreshSkewSeconds?: number;
  fetch?: typeof fetch;
  /** For tests. */
  clock?: () => number;
}

/** The answer of POST /api/v1/auth/token. */
export interface TokenResponse {
  access_token: string;
  expires_in: number;
  token_type: 'Bearer';
  user_id: string;
  realm_id: string | null;
  user_type: string;
}

/** One engine call: the transport's request plus whether it goes without a bearer token. */
export interface EngineCall extends RequestOptions {
  /** Sends no bearer token (token exchange, registration, public endpoints). */
  anonymous?: boolean;
}

/** Encodes one path segment. */
export const seg = (value: string): string => encodeURIComponent(value);

/** The `X-Resume-Token` header when a resume token is given. */
export const resumeHeaders = (token: string | undefined): Record<string, string> | undefined =>
  token ? { 'x-resume-token': token } : undefined;

/**
 * Authenticated calls to the engine on the shared transport: exchanges the key pair for a bearer token on first
 * use, shares one exchange between concurrent calls, exchanges again shortly before expiry, and after a 401
 * exchanges once and repeats the call once.
 */
export class EngineCaller {
  readonly #http: HttpTransport;
  readonly #accessKey: string;
  readonly #secretKey: string;
  readonly #refreshSkewMs: number;
  readonly #clock: () => number;
  #token: { value: string; expiresAt: number } | undefined;
  #exchange: Promise<string> | undefined;

  constructor(options: EngineClientOptions) {
    this.#http = new HttpTransport({
      baseUrl: options.baseUrl,
      headers: {},
      timeoutMs: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 2,
      retryBaseDelayMs: options.retryBaseDelayMs,
      fetch: options.fetch,
    });
    this.#accessKey = options.accessKey;
    this.#secretKey = options.secretKey;
    this.#refreshSkewMs = (options.refreshSkewSeconds ?? 30) * 1000;
    this.#clock = options.clock ?? Date.now;
  }

  /** A valid bearer token (cached; exchanged when missing or about to expire). */
  async accessToken(): Promise<string> {
    if (this.#token && this.#token.expiresAt - this.#refreshSkewMs > this.#clock()) return this.#token.value;
    this.#exchange ??= this.exchangeToken()
      .then((reply) => {
        this.#token = { value: reply.access_token, expiresAt: this.#clock() + reply.expires_in * 1000 };
        return reply.access_token;
      })
      .finally(() => {
        this.#exchange = undefined;
      });
    return this.#exchange;
  }

  /** Forgets the cached token; the next call exchanges the key pair again. */
  invalidateToken(): void {
    this.#token = undefined;
  }

  /** POST /api/v1/auth/token with the configured key pair. */
  exchangeToken(): Promise<TokenResponse> {
    return this.#http.json<TokenResponse>({
      method: 'POST',
      path: '/api/v1/auth/token',
      body: { access_key: this.#accessKey, secret_key: this.#secretKey },
      idempotent: true,
    });
  }

  /** Sends a call with the current bearer token (none when `anonymous`), refreshing it once after a 401. */
  async call<T>(call: EngineCall): Promise<T> {
    const { anonymous, ...request } = call;
    if (anonymous) return this.#http.json<T>(request);
    const token = await this.accessToken();
    try {
      return await this.#http.json<T>(withToken(request, token));
    } catch (error) {
      // A 401 means the token expired or was revoked: exchange once and repeat the call once.
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      if (this.#token?.value === token) this.#token = undefined;
      return this.#http.json<T>(withToken(request, await this.accessToken()));
    }
  }
}

function withToken(request: RequestOptions, token: string): RequestOptions {
  return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
}
