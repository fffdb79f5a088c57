import type { GuardApi } from '@keel/guard';
import { HttpTransport } from '../http/transport.ts';

export interface GuardClientOptions {
  /** e.g. `http://127.0.0.1:8081` */
  baseUrl: string;
  /** A guard token name (when `AUTH_ENABLED` is true); sent as `Authorization: Bearer …`. */
  token?: string;
  /** Per attempt; default 10 s. */
  timeoutMs?: number;
  /** Retries of transient failures; default 3. */
  maxRetries?: number;
  retryBaseDelayMs?: number;
  fetch?: typeof fetch;
}

/** Which value list: trusted values (`allowlist`) or forbidden ones (`blacklist`). */
export type GuardList = 'allowlist' | 'blacklist';

/**
 * Server-side client of guard: detection (`detect`), and the management of patterns, value lists and
 * validators. Reads and detection are retried on transient failures; creations only after 429/503 (when guard
 * certainly did not act). For the chat-completions gateway use any OpenAI-compatible client with
 * `baseURL: <guard>/v1`.
 */
export class GuardClient {
  readonly #http: HttpTransport;

  constructor(options: GuardClientOptions) {
    this.#http = new HttpTransport({
      baseUrl: options.baseUrl,
      headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      timeoutMs: options.timeoutMs,
      maxRetries: options.maxRetries,
      retryBaseDelayMs: options.retryBaseDelayMs,
      fetch: options.fetch,
    });
  }

  /** Detects PII and secrets in a text and decides (mask or block); runs the named guardrails too. */
  detect(input: GuardApi.DetectRequest): Promise<GuardApi.DetectResponse> {
    return this.#http.json({ method: 'POST', path: '/detect', body: input, idempotent: true });
  }

  listPatterns(): Promise<GuardApi.Pattern[]> {
    return this.#http.json({ method: 'GET', path: '/patterns', idempotent: true });
  }

  /** Adds a pattern (a Go/RE2 regex); a name that exists is an ApiError 409. */
  createPattern(input: GuardApi.PatternInput): Promise<GuardApi.Pattern> {
    return this.#http.json({ method: 'POST', path: '/patterns', body: input, idempotent: false });
  }

  deletePattern(id: number): Promise<void> {
    return this.#http.json({ method: 'DELETE', path: `/patterns/${id}`, idempotent: true });
  }

  listItems(list: GuardList): Promise<GuardApi.ListItem[]> {
    return this.#http.json({ method: 'GET', path: `/${list}`, idempotent: true });
  }

  /** Adds a value to a list; a value already there (ignoring case) is an ApiError 409. */
  addItem(list: GuardList, input: GuardApi.ListItemInput): Promise<GuardApi.ListItem> {
    return this.#http.json({ method: 'POST', path: `/${list}`, body: input, idempotent: false });
  }

  removeItem(list: GuardList, id: number): Promise<void> {
    return this.#http.json({ method: 'DELETE', path: `/${list}/${id}`, idempotent: true });
  }

  listValidators(): Promise<GuardApi.Validator[]> {
    return this.#http.json({ method: 'GET', path: '/validators', idempotent: true });
  }

  /** Stores a validator (checked before it is stored); a name that exists is an ApiError 409. */
  createValidator(input: GuardApi.ValidatorInput): Promise<GuardApi.Validator> {
    return this.#http.json({ method: 'POST', path: '/validators', body: input, idempotent: false });
  }

  deleteValidator(id: number): Promise<void> {
    return this.#http.json({ method: 'DELETE', path: `/validators/${id}`, idempotent: true });
  }
}
