import { createLoopHealth, idForLog, isDatabaseUnavailable } from '@keel/core';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { GuardDb } from '../db/schema.ts';
import { deleteAuditRowsBefore, insertAuditRows, type NewAuditRow } from './audit-store.ts';

export interface AuditEntry {
  rid: string;
  timestamp: string;
  durationMs: number;
  total: number;
  breakdown: Record<string, number>;
  blocked: boolean;
}

export interface AuditRecorder {
  /** Logs the entry now and stores it with the next batch. Never holds a detected value. */
  record(entry: AuditEntry): void;
  /** Writes whatever is waiting. */
  flush(): Promise<void>;
  /** Readiness: failing while the last write failed. */
  check(): true | { reason: string };
  close(): Promise<void>;
}

/** Entries kept for a later write while the database is unreachable; beyond it a batch is dropped (and logged). */
const MAX_WAITING = 10_000;
/** Log levels at which the per-entry `detect audit` info line is written. */
const INFO_ON = new Set(['trace', 'debug', 'info']);

export interface AuditRecorderOptions {
  flushIntervalMs?: number;
  maxBatch?: number;
  retentionDays: number;
}

/**
 * Audit entries are logged at once and written to the database in batches (one insert every
 * `flushIntervalMs` or `maxBatch` entries), so /detect never waits on a disk write. Entries older than the
 * retention period are pruned hourly.
 */
export function createAuditRecorder(
  db: Kysely<GuardDb>,
  log: FastifyBaseLogger,
  options: AuditRecorderOptions,
): AuditRecorder {
  const flushIntervalMs = options.flushIntervalMs ?? 200;
  const maxBatch = options.maxBatch ?? 500;
  let pending: NewAuditRow[] = [];
  let writing: Promise<void> = Promise.resolve();
  const health = createLoopHealth('audit writer', log, { baseMs: flushIntervalMs, maxMs: 30_000 });
  let retryAt = 0;

  const write = async (batch: NewAuditRow[]) => {
    try {
      await insertAuditRows(db, batch);
      health.succeeded();
    } catch (error) {
      retryAt = Date.now() + health.failed(error);
      // While the database is away, entries wait (bounded) and are written when it returns.
      if (isDatabaseUnavailable(error) && pending.length + batch.length <= MAX_WAITING)
        pending = [...batch, ...pending];
      else log.error({ lost: batch.length }, 'audit entries could not be stored');
    }
  };
  const flush = (): Promise<void> => {
    if (pending.length === 0) return writing;
    const batch = pending;
    pending = [];
    writing = writing.then(() => write(batch));
    return writing;
  };
  const timer = setInterval(() => {
    if (Date.now() >= retryAt) void flush();
  }, flushIntervalMs);
  timer.unref();

  const prune = () => {
    const cutoff = new Date(Date.now() - options.retentionDays * 86_400_000).toISOString();
    deleteAuditRowsBefore(db, cutoff).catch((error: unknown) => log.warn({ err: error }, 'audit pruning failed'));
  };
  const pruneTimer = setInterval(prune, 3_600_000);
  pruneTimer.unref();

  return {
    record(entry) {
      // The rid is chosen by the client (it may hold anything): logs carry its hash, the audit table the rid.
      // The line (and the rid's hash) is only built when it is written: LOG_LEVEL info or lower.
      if (INFO_ON.has(log.level)) log.info({ audit: { ...entry, rid: idForLog(entry.rid) } }, 'detect audit');
      pending.push({
        rid: entry.rid,
        created_at: entry.timestamp,
        duration_ms: entry.durationMs,
        total: entry.total,
        breakdown: JSON.stringify(entry.breakdown),
        blocked: entry.blocked,
      });
      if (pending.length >= maxBatch && Date.now() >= retryAt) void flush();
    },
    flush,
    check: () => health.check(),
    async close() {
      clearInterval(timer);
      clearInterval(pruneTimer);
      await flush();
    },
  };
}
