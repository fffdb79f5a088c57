// Rule timeouts and retries for tool calls, fallback along a route's order, and the aggregation of parallel calls.
//
// A write (a tool that is not read-only) is never called twice unless the call carries an idempotency key: no
// retry and no fallback to another server, because a failed or timed-out write may still have happened. Time
// (sleep) and jitter (random) are injected so tests are deterministic.

import { setTimeout as delay } from 'node:timers/promises';
import type { ServerObservation } from './server-stats.ts';

/** Bounds and defaults of a rule's timeout and retry settings. */
export const RETRY_LIMITS = Object.freeze({
  timeoutMs: { min: 100, max: 120_000, default: 30_000 },
  maxRetries: { min: 0, max: 5, default: 2 },
  backoffBaseMs: { min: 0, max: 10_000, default: 100 },
  backoffMaxMs: { min: 0, max: 60_000, default: 5_000 },
});

/** A rule's effective timeout and retry settings. */
export interface RetryPolicy {
  timeout_ms: number;
  max_retries: number;
  backoff_base_ms: number;
  backoff_max_ms: number;
}

export interface RetrySettings {
  timeout_ms?: number;
  max_retries?: number;
  backoff_base_ms?: number;
  backoff_max_ms?: number;
}

function clampInt(value: number | undefined, bounds: { min: number; max: number; default: number }): number {
  if (value === undefined || !Number.isFinite(value)) return bounds.default;
  return Math.min(bounds.max, Math.max(bounds.min, Math.floor(value)));
}

/** The effective policy of a rule's settings: missing values take the defaults, others are clamped to the bounds. */
export function retryPolicy(settings: RetrySettings = {}): RetryPolicy {
  const base = clampInt(settings.backoff_base_ms, RETRY_LIMITS.backoffBaseMs);
  return {
    timeout_ms: clampInt(settings.timeout_ms, RETRY_LIMITS.timeoutMs),
    max_retries: clampInt(settings.max_retries, RETRY_LIMITS.maxRetries),
    backoff_base_ms: base,
    backoff_max_ms: Math.max(base, clampInt(settings.backoff_max_ms, RETRY_LIMITS.backoffMaxMs)),
  };
}

/**
 * The wait before retry number `retry` (0 for the first retry): `base × 2^retry`, capped, then jittered into
 * [50 %, 100 %] of that with `random()` in [0, 1).
 */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.backoff_max_ms, policy.backoff_base_ms * 2 ** Math.min(retry, 30));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(ceiling * (0.5 + 0.5 * r));
}

/** Whether a call may be made a second time: read-only tools always, writes only with an idempotency key. */
export function mayRepeat(call: { readOnly: boolean; idempotencyKey?: string }): boolean {
  return call.readOnly || (typeof call.idempotencyKey === 'string' && call.idempotencyKey.length > 0);
}

/** A tool call failure as the transport layer reports it. `retryable`: timeouts, connection errors, 5xx, 429. */
export class ToolCallError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly authFailure: boolean;
  constructor(code: string, message: string, options: { retryable?: boolean; authFailure?: boolean } = {}) {
    super(message);
    this.name = 'ToolCallError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.authFailure = options.authFailure ?? false;
  }
}

/** One attempt, for the decision trace and the caller. */
export interface AttemptRecord {
  server_id: string;
  attempt: number;
  ok: boolean;
  code?: string;
  duration_ms: number;
  /** Wait before this attempt (ms), when it was a retry of the same server. */
  backoff_ms?: number;
}

/** Bounded, secret-free failure metadata. */
export interface FailureInfo {
  code: string;
  message: string;
  retryable: boolean;
}

export type CallOutcome<T> =
  | { ok: true; server_id: string; value: T; attempts: AttemptRecord[] }
  | { ok: false; server_id: string | null; error: FailureInfo; attempts: AttemptRecord[] };

export interface ExecuteOptions {
  policy: RetryPolicy;
  readOnly: boolean;
  idempotencyKey?: string;
  /** Clock (ms) for durations; default `performance.now`. */
  now?: () => number;
  /** Waits `ms` (backoff and per-attempt timeouts); rejects when `signal` aborts. Default: a real timer. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Jitter source in [0, 1); default `Math.random`. */
  random?: () => number;
  /** The caller's cancellation. */
  signal?: AbortSignal;
  /** Receives one observation per attempt (feed `ServerStats.record`). */
  observe?: (observation: ServerObservation) => void;
}

const defaultSleep = (ms: number, signal: AbortSignal) => delay(ms, undefined, { signal });

const TIMED_OUT = Symbol('timeout');
/** The reason an injected sleep's signal is aborted with when its attempt settled first (no error is built). */
const SETTLED = Symbol('settled');

/**
 * One attempt's timeout: resolves TIMED_OUT after `ms` unless cancelled first. Without an injected sleep it is a
 * plain timer (cancelling clears it: no abort, no error object per call on the hot path).
 */
function attemptDeadline(
  ms: number,
  sleep: ExecuteOptions['sleep'],
): { fired: Promise<typeof TIMED_OUT>; cancel(): void } {
  if (sleep) {
    const timer = new AbortController();
    return {
      fired: sleep(ms, timer.signal).then(
        (): typeof TIMED_OUT => TIMED_OUT,
        () => new Promise<never>(() => {}),
      ),
      cancel: () => timer.abort(SETTLED),
    };
  }
  let handle: NodeJS.Timeout | undefined;
  const fired = new Promise<typeof TIMED_OUT>((resolve) => {
    handle = setTimeout(resolve, ms, TIMED_OUT);
  });
  return { fired, cancel: () => clearTimeout(handle) };
}

/** The longest failure message kept, after secrets are removed. */
export const MAX_FAILURE_MESSAGE = 200;

/**
 * Makes a failure message safe to store and return: credentials, tokens, URL user info and query strings, long
 * opaque strings and e-mail addresses are replaced, control characters dropped, and the length bounded.
 */
export function safeFailureMessage(raw: unknown): string {
  let text = typeof raw === 'string' ? raw : raw instanceof Error ? raw.message : 'tool call failed';
  text = text.slice(0, 2000);
  text = text
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\b(bearer|basic)\s+[^\s,;]+/gi, '$1 [redacted]')
    .replace(
      /\b(api[_-]?key|access[_-]?key|secret[_-]?key|secret|token|password|passwd|authorization|credential|client[_-]?secret)(["']?\s*[=:]\s*)[^\s,;&]+/gi,
      '$1$2[redacted]',
    )
    .replace(/(\w+:\/\/)[^/\s@]*@/g, '$1[redacted]@')
    .replace(/(\w+:\/\/[^\s?#]*)\?[^\s#]*/g, '$1?[redacted]')
    .replace(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, '[redacted-email]')
    .replace(/[A-Za-z0-9+/_=-]{32,}/g, '[redacted]')
    .trim();
  if (text.length === 0) text = 'tool call failed';
  return text.length > MAX_FAILURE_MESSAGE ? `${text.slice(0, MAX_FAILURE_MESSAGE - 1)}…` : text;
}

/** A failure code kept as is when it looks like one (`UPPER_SNAKE`, ≤ 64), else `TOOL_ERROR`. */
export function safeFailureCode(code: unknown): string {
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : 'TOOL_ERROR';
}

function failureOf(error: unknown): FailureInfo & { authFailure: boolean } {
  if (error instanceof ToolCallError) {
    return {
      code: safeFailureCode(error.code),
      message: safeFailureMessage(error.message),
      retryable: error.retryable,
      authFailure: error.authFailure,
    };
  }
  // Anything else (a bug, a thrown non-error) is not retried: only classified transport failures are.
  return { code: 'TOOL_ERROR', message: safeFailureMessage(error), retryable: false, authFailure: false };
}

/**
 * Calls a tool along a route: the first server, then — on a retryable failure, while retries remain, and only
 * when the call may be repeated — a read moves to the next server of the order (or the last one again after a
 * backoff) and a write with an idempotency key retries the same server after a backoff. Each attempt is bounded
 * by the policy's timeout (its signal aborts). Returns the first success or the last failure.
 */
export async function executeWithRetry<T>(
  servers: readonly string[],
  call: (serverId: string, signal: AbortSignal) => Promise<T>,
  options: ExecuteOptions,
): Promise<CallOutcome<T>> {
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const attempts: AttemptRecord[] = [];
  if (servers.length === 0) {
    return {
      ok: false,
      server_id: null,
      error: { code: 'ROUTE_NO_ELIGIBLE_SERVER', message: 'no server to call', retryable: false },
      attempts,
    };
  }
  const repeatable = mayRepeat(options);
  const maxAttempts = repeatable ? 1 + options.policy.max_retries : 1;
  let index = 0;
  let sameServerRetries = 0;
  let last: FailureInfo = { code: 'TOOL_ERROR', message: 'tool call failed', retryable: false };
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const serverId = servers[index] as string;
    let backoff: number | undefined;
    if (attempt > 1 && servers[index] === attempts[attempts.length - 1]?.server_id) {
      backoff = backoffDelay(sameServerRetries, options.policy, random);
      sameServerRetries += 1;
      try {
        await sleep(backoff, options.signal ?? new AbortController().signal);
      } catch {
        return cancelled(serverId, attempts);
      }
    }
    if (options.signal?.aborted) return cancelled(serverId, attempts);

    const controller = new AbortController();
    const onAbort = () => controller.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = attemptDeadline(options.policy.timeout_ms, options.sleep);
    const started = now();
    let outcome: { value: T } | { error: unknown } | typeof TIMED_OUT;
    try {
      outcome = await Promise.race([
        call(serverId, controller.signal).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        ),
        deadline.fired,
      ]);
    } finally {
      deadline.cancel();
      options.signal?.removeEventListener('abort', onAbort);
    }
    const duration = Math.max(0, now() - started);
    const record: AttemptRecord = { server_id: serverId, attempt, ok: false, duration_ms: Math.round(duration) };
    if (backoff !== undefined) record.backoff_ms = backoff;

    if (outcome !== TIMED_OUT && 'value' in outcome) {
      record.ok = true;
      attempts.push(record);
      options.observe?.({ server_id: serverId, kind: 'call', ok: true, latency_ms: duration });
      return { ok: true, server_id: serverId, value: outcome.value, attempts };
    }
    if (options.signal?.aborted) {
      attempts.push({ ...record, code: 'CANCELLED' });
      return cancelled(serverId, attempts);
    }
    let failure: FailureInfo & { authFailure: boolean };
    if (outcome === TIMED_OUT) {
      controller.abort();
      failure = {
        code: 'TOOL_TIMEOUT',
        message: `no answer within ${options.policy.timeout_ms} ms`,
        retryable: true,
        authFailure: false,
      };
    } else {
      failure = failureOf(outcome.error);
    }
    record.code = failure.code;
    attempts.push(record);
    options.observe?.({
      server_id: serverId,
      kind: 'call',
      ok: false,
      latency_ms: duration,
      auth_failure: failure.authFailure,
    });
    last = { code: failure.code, message: failure.message, retryable: failure.retryable };
    if (!failure.retryable) break;
    // Reads move on to the next server of the order; a write retries where its idempotency key is known.
    if (options.readOnly && index < servers.length - 1) index += 1;
  }
  const lastServer = attempts[attempts.length - 1]?.server_id ?? null;
  return { ok: false, server_id: lastServer, error: last, attempts };
}

function cancelled<T>(serverId: string, attempts: AttemptRecord[]): CallOutcome<T> {
  return {
    ok: false,
    server_id: serverId,
    error: { code: 'CANCELLED', message: 'the call was cancelled', retryable: false },
    attempts,
  };
}

/** The most failures an aggregate lists (the rest are counted in `failures_omitted`). */
export const MAX_AGGREGATE_FAILURES = 16;

/** Parallel results: each successful server's result, and bounded failure metadata for the others. */
export interface ParallelAggregate<T> {
  results: { server_id: string; result: T }[];
  failures: ({ server_id: string } & FailureInfo)[];
  succeeded: number;
  failed: number;
  failures_omitted: number;
}

/** Aggregates the outcomes of a parallel call, in the order given (the route's order). */
export function aggregateParallel<T>(
  outcomes: readonly CallOutcome<T>[],
  servers: readonly string[],
): ParallelAggregate<T> {
  const aggregate: ParallelAggregate<T> = { results: [], failures: [], succeeded: 0, failed: 0, failures_omitted: 0 };
  outcomes.forEach((outcome, i) => {
    const serverId = servers[i] ?? outcome.server_id ?? 'unknown';
    if (outcome.ok) {
      aggregate.succeeded += 1;
      aggregate.results.push({ server_id: serverId, result: outcome.value });
      return;
    }
    aggregate.failed += 1;
    if (aggregate.failures.length >= MAX_AGGREGATE_FAILURES) {
      aggregate.failures_omitted += 1;
      return;
    }
    aggregate.failures.push({
      server_id: serverId,
      code: safeFailureCode(outcome.error.code),
      message: safeFailureMessage(outcome.error.message),
      retryable: outcome.error.retryable,
    });
  });
  return aggregate;
}

/**
 * Calls every server of a parallel route at once, each with its own timeout and retries (on itself only), and
 * aggregates the outcomes. At most `maxConcurrency` calls are in flight (default: all).
 */
export async function executeParallel<T>(
  servers: readonly string[],
  call: (serverId: string, signal: AbortSignal) => Promise<T>,
  options: ExecuteOptions & { maxConcurrency?: number },
): Promise<ParallelAggregate<T>> {
  const outcomes: CallOutcome<T>[] = new Array(servers.length);
  const limit = Math.max(1, Math.min(servers.length, Math.floor(options.maxConcurrency ?? servers.length)));
  let next = 0;
  const worker = async () => {
    while (next < servers.length) {
      const i = next++;
      outcomes[i] = await executeWithRetry([servers[i] as string], call, options);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return aggregateParallel(outcomes, servers);
}
