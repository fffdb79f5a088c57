import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { dialectOf } from '../db/dialect.ts';
import { createLoopHealth, type LoopLogger } from '../health/loop-health.ts';
import { createSafeAgent, safePost } from '../net/safe-fetch.ts';
import { type SpanOrigin, withClientSpan } from '../telemetry/telemetry.ts';
import { OUTBOX_ATTEMPT_TABLE, OUTBOX_TABLE, type OutboxDb, type OutboxMessageTable } from './outbox-table.ts';
import { signWebhook } from './signature.ts';

export interface NewOutboxMessage {
  /** Defaults to a new time-ordered `msg_…` id. */
  id?: string;
  target: string;
  topic: string;
  /** JSON text sent as the body. */
  payload: string;
  /**
   * The work that queued it (`spanOrigin()`): every attempt's span continues that trace, in that tenant, and the
   * receiver's `traceparent` carries its trace id. Needs the columns of `addOutboxTraceColumns`.
   */
  origin?: SpanOrigin | undefined;
}

/** A time-ordered message id (`msg_` + 48-bit milliseconds + 80 random bits, hex). */
export function newMessageId(now = Date.now()): string {
  return `msg_${now.toString(16).padStart(12, '0')}${randomBytes(10).toString('hex')}`;
}

/**
 * Writes messages into the outbox. Call it inside the transaction that makes the state change, so the change
 * and its notifications commit (or vanish) together; then call the worker's `notify()` after the commit.
 */
export async function enqueueOutbox(
  db: Kysely<any> | Transaction<any>,
  messages: readonly NewOutboxMessage[],
  now = new Date(),
): Promise<string[]> {
  if (messages.length === 0) return [];
  const at = now.toISOString();
  // The trace columns are written only when a message has an origin (a service without them never sends one).
  const traced = messages.some((message) => message.origin !== undefined);
  const rows: OutboxMessageTable[] = messages.map((message) => ({
    id: message.id ?? newMessageId(now.getTime()),
    target: message.target,
    topic: message.topic,
    payload: message.payload,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    locked_until: null,
    last_status_code: null,
    last_error: null,
    created_at: at,
    delivered_at: null,
    ...(traced
      ? { traceparent: message.origin?.traceparent ?? null, trace_tenant: message.origin?.tenant ?? null }
      : {}),
  }));
  const odb = db as unknown as Kysely<OutboxDb>;
  // Bounded statements: SQLite allows at most 32,766 bound parameters.
  for (let i = 0; i < rows.length; i += 500)
    await odb
      .insertInto(OUTBOX_TABLE)
      .values(rows.slice(i, i + 500))
      .execute();
  return rows.map((row) => row.id);
}

/** Where and how one message is delivered, decided by the service at delivery time. */
export interface DeliveryTarget {
  url: string;
  /** Extra headers (e.g. `x-webhook-secret`). */
  headers?: Record<string, string>;
  /** When set, the delivery carries Standard Webhooks `webhook-signature`. */
  signingSecret?: string;
}

export type OutboxLogger = LoopLogger;

export interface OutboxWorkerOptions {
  db: Kysely<any>;
  /** The delivery target of a message; `undefined` cancels it (its destination is gone or disabled). */
  resolveTarget(message: { id: string; target: string; topic: string }): Promise<DeliveryTarget | undefined>;
  /** KEEL_ALLOW_PRIVATE_URLS: lets deliveries go to loopback and private addresses (development and tests). */
  allowPrivate: boolean;
  /** Receiver deadline per attempt. Default 10 s. */
  timeoutMs?: number;
  /** Delay before each retry, in ms; attempts = retries + 1. Default: 10 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h. */
  retryScheduleMs?: readonly number[];
  /** Deliveries in flight at once. Default 64. */
  concurrency?: number;
  /** How often idle workers look for due messages (other instances' writes, retries). Default 1 s. */
  pollIntervalMs?: number;
  /** Delivered and failed messages and their attempts are deleted after this long. Default 30 days. */
  retentionMs?: number;
  userAgent?: string;
  logger?: OutboxLogger;
}

export interface OutboxWorker {
  /** Starts claiming and delivering. */
  start(): void;
  /** Says new messages were committed: look now instead of at the next poll. */
  notify(): void;
  /** Stops claiming, waits for deliveries in flight and records their outcome. */
  stop(): Promise<void>;
  /** Resolves once nothing is due, in flight or unrecorded (tests and benchmarks). */
  idle(): Promise<void>;
  /** Readiness: up unless the last claim or record of outcomes failed (e.g. the database is unreachable). */
  check(): true | { reason: string };
}

export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  10, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 43_200,
].map((s) => s * 1000);

interface Outcome {
  message: OutboxMessageTable;
  attemptedAt: string;
  durationMs: number;
  statusCode: number | null;
  success: boolean;
  cancelled: boolean;
  error: string | null;
}

/** Short, secret-free text for the delivery log. */
function describeFailure(error: unknown): string {
  const e = error as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  if (
    e?.name === 'TimeoutError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'ABORT_ERR'
  ) {
    return 'timeout: the receiver did not answer in time';
  }
  if (code === 'OUTBOUND_URL_REJECTED') return `url rejected: ${e.message ?? ''}`.slice(0, 300);
  if (code === 'EADDRNOTPUBLIC') return 'url rejected: the host resolves to a private, loopback or reserved address';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns: the host name does not resolve';
  if (
    typeof code === 'string' &&
    (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('UNABLE_TO') || code === 'EPROTO')
  ) {
    return `tls: ${code}`;
  }
  if (typeof code === 'string') return `network: ${code}`;
  return `network: ${(e?.message ?? 'error').slice(0, 200)}`;
}

/**
 * The delivery worker: claims due messages (leased, `FOR UPDATE SKIP LOCKED` on PostgreSQL so any number of
 * instances cooperate), POSTs each through the SSRF-safe connector with a deadline, and records every attempt.
 * A 2xx is success; anything else is retried on the schedule until the attempts run out (`failed`).
 * Delivery is at least once: a worker that dies mid-delivery leaves its lease to expire and the message is sent again.
 */
export function createOutboxWorker(options: OutboxWorkerOptions): OutboxWorker {
  const db = options.db as unknown as Kysely<OutboxDb>;
  const postgres = dialectOf(db) === 'postgres';
  const timeoutMs = options.timeoutMs ?? 10_000;
  const schedule = options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
  const concurrency = options.concurrency ?? 64;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const retentionMs = options.retentionMs ?? 30 * 24 * 3600 * 1000;
  const leaseMs = timeoutMs + 5000;
  const agent = createSafeAgent({
    allowPrivate: options.allowPrivate,
    connections: concurrency,
    connectTimeoutMs: Math.min(timeoutMs, 5000),
  });

  let running = false;
  let stopped = false;
  let loopDone: Promise<void> = Promise.resolve();
  let wake: (() => void) | undefined;
  let pendingWake = true;
  const inFlight = new Set<Promise<void>>();
  const outcomes: Outcome[] = [];
  let flushing: Promise<void> = Promise.resolve();
  let flushTimer: NodeJS.Timeout | undefined;
  let lastPrune = 0;
  let idleWaiters: (() => void)[] = [];
  let lastClaimEmpty = false;
  let recording = false;
  const health = createLoopHealth('outbox worker', options.logger, { baseMs: pollIntervalMs, maxMs: 30_000 });
  let backoffMs = 0;

  const signal = () => {
    pendingWake = true;
    wake?.();
  };

  async function claim(limit: number): Promise<OutboxMessageTable[]> {
    const now = new Date().toISOString();
    let due = db
      .selectFrom(OUTBOX_TABLE)
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .orderBy('next_attempt_at')
      .limit(limit);
    if (postgres) due = due.forUpdate().skipLocked();
    return db
      .updateTable(OUTBOX_TABLE)
      .set({ locked_until: new Date(Date.now() + leaseMs).toISOString() })
      .where('id', 'in', due)
      .returningAll()
      .execute();
  }

  async function deliver(message: OutboxMessageTable): Promise<Outcome> {
    const started = Date.now();
    const attemptedAt = new Date(started).toISOString();
    let target: DeliveryTarget | undefined;
    try {
      target = await options.resolveTarget(message);
    } catch (error) {
      options.logger?.error({ err: error, messageId: message.id }, 'outbox: resolving the target failed');
      return {
        message,
        attemptedAt,
        durationMs: 0,
        statusCode: null,
        success: false,
        cancelled: false,
        error: 'internal: target lookup failed',
      };
    }
    if (!target)
      return {
        message,
        attemptedAt,
        durationMs: 0,
        statusCode: null,
        success: false,
        cancelled: true,
        error: 'cancelled: the destination no longer exists or is disabled',
      };
    const timestamp = Math.floor(started / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': options.userAgent ?? 'Keel-Webhooks/1.0',
      'webhook-id': message.id,
      'webhook-timestamp': String(timestamp),
      ...(target.signingSecret
        ? { 'webhook-signature': signWebhook(target.signingSecret, message.id, timestamp, message.payload) }
        : {}),
      ...(target.headers ?? {}),
    };
    try {
      // A CLIENT span per attempt, a child of the span that queued the message when it was recorded (otherwise a new
      // trace); the receiver gets its W3C traceparent, so it continues the originating trace.
      const result = await withClientSpan(
        `webhook ${message.topic}`.slice(0, 120),
        'webhook',
        {},
        (traceparent) =>
          safePost(
            agent,
            target.url,
            message.payload,
            { ...headers, traceparent },
            {
              allowPrivate: options.allowPrivate,
              timeoutMs,
            },
          ),
        { parent: message.traceparent, tenant: message.trace_tenant, statusOf: (answer) => answer.statusCode },
      );
      const success = result.statusCode >= 200 && result.statusCode < 300;
      return {
        message,
        attemptedAt,
        durationMs: Date.now() - started,
        statusCode: result.statusCode,
        success,
        cancelled: false,
        error: success ? null : `http: the receiver answered ${result.statusCode}`,
      };
    } catch (error) {
      return {
        message,
        attemptedAt,
        durationMs: Date.now() - started,
        statusCode: null,
        success: false,
        cancelled: false,
        error: describeFailure(error),
      };
    }
  }

  async function record(batch: Outcome[]): Promise<void> {
    await db.transaction().execute(async (trx) => {
      for (const outcome of batch) {
        const attempt = outcome.message.attempts + 1;
        if (!outcome.cancelled) {
          await trx
            .insertInto(OUTBOX_ATTEMPT_TABLE)
            .values({
              message_id: outcome.message.id,
              target: outcome.message.target,
              topic: outcome.message.topic,
              attempt,
              attempted_at: outcome.attemptedAt,
              duration_ms: outcome.durationMs,
              status_code: outcome.statusCode,
              success: outcome.success,
              error: outcome.error,
            })
            .execute();
        }
        const exhausted = attempt > schedule.length;
        const delay = schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 0;
        const jittered = Math.round(delay * (0.8 + Math.random() * 0.4));
        await trx
          .updateTable(OUTBOX_TABLE)
          .set(
            outcome.success
              ? {
                  status: 'delivered',
                  attempts: attempt,
                  locked_until: null,
                  delivered_at: outcome.attemptedAt,
                  last_status_code: outcome.statusCode,
                  last_error: null,
                }
              : outcome.cancelled
                ? { status: 'cancelled', locked_until: null, last_error: outcome.error }
                : {
                    status: exhausted ? 'failed' : 'pending',
                    attempts: attempt,
                    locked_until: null,
                    next_attempt_at: new Date(Date.now() + jittered).toISOString(),
                    last_status_code: outcome.statusCode,
                    last_error: outcome.error,
                  },
          )
          .where('id', '=', outcome.message.id)
          .execute();
      }
    });
  }

  function scheduleFlush(): void {
    if (flushTimer) return;
    flushTimer = setTimeout(() => {
      flushTimer = undefined;
      flushing = flushing.then(flush);
    }, 10);
  }

  async function flush(): Promise<void> {
    recording = true;
    while (outcomes.length > 0) {
      const batch = outcomes.splice(0, 500);
      try {
        await record(batch);
        health.succeeded();
      } catch (error) {
        // The leases run out and the messages are delivered again: at least once, never lost.
        backoffMs = health.failed(error);
      }
    }
    recording = false;
    checkIdle();
  }

  function checkIdle(): void {
    if (
      inFlight.size === 0 &&
      outcomes.length === 0 &&
      !flushTimer &&
      !recording &&
      lastClaimEmpty &&
      idleWaiters.length > 0
    ) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  async function prune(): Promise<void> {
    const cutoff = new Date(Date.now() - retentionMs).toISOString();
    const old = db
      .selectFrom(OUTBOX_TABLE)
      .select('id')
      .where('status', 'in', ['delivered', 'failed', 'cancelled'])
      .where('created_at', '<', cutoff);
    await db.deleteFrom(OUTBOX_ATTEMPT_TABLE).where('message_id', 'in', old).execute();
    await db
      .deleteFrom(OUTBOX_TABLE)
      .where('status', 'in', ['delivered', 'failed', 'cancelled'])
      .where('created_at', '<', cutoff)
      .execute();
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      const free = concurrency - inFlight.size;
      if (pendingWake && free > 0) {
        pendingWake = false;
        let claimed: OutboxMessageTable[] = [];
        try {
          claimed = await claim(Math.min(free, 200));
          health.succeeded();
          backoffMs = 0;
        } catch (error) {
          // The database is unreachable (or failing): wait longer each time, then resume on its own.
          backoffMs = health.failed(error);
        }
        lastClaimEmpty = claimed.length === 0;
        // A full claim means more may be waiting: claim again as soon as a slot frees up.
        if (claimed.length === Math.min(free, 200)) pendingWake = true;
        for (const message of claimed) {
          const task = deliver(message).then((outcome) => {
            outcomes.push(outcome);
            inFlight.delete(task);
            scheduleFlush();
            if (pendingWake) wake?.();
          });
          inFlight.add(task);
        }
        if (lastClaimEmpty) checkIdle();
        if (claimed.length > 0 && pendingWake && inFlight.size < concurrency) continue;
      }
      if (Date.now() - lastPrune > 3600_000) {
        lastPrune = Date.now();
        prune().catch((error) => options.logger?.warn({ err: error }, 'outbox: pruning old messages failed'));
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(
          () => {
            pendingWake = true;
            resolve();
          },
          Math.max(pollIntervalMs, backoffMs),
        );
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
      });
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loopDone = loop();
    },
    notify: signal,
    async stop() {
      stopped = true;
      wake?.();
      await loopDone;
      await Promise.allSettled([...inFlight]);
      if (flushTimer) {
        clearTimeout(flushTimer);
        flushTimer = undefined;
      }
      await flushing;
      await flush();
      await agent.close();
    },
    check: () => health.check(),
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        lastClaimEmpty = false;
        signal();
      });
    },
  };
}
