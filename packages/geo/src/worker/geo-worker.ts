import { randomBytes } from 'node:crypto';
import { createLoopHealth, pruneIdempotencyKeys } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { compareAndSetClaim } from '../db/claim.ts';
import { generateExport, pruneExpiredExports } from '../exports/export-service.ts';
import { findExport } from '../exports/export-store.ts';
import { processPrivacyRequest } from '../privacy/privacy-service.ts';
import { findPrivacyRequest, updatePrivacyRequest } from '../privacy/privacy-store.ts';
import { claimableJobs, failJob, type JobTable } from './job-store.ts';

const STALE_CLAIM_MS = 5 * 60 * 1000;
const MAX_ATTEMPTS = 3;

/** A job read right after this worker claimed it (it can only be missing if it was deleted in between). */
function claimed<T>(row: T | undefined, what: string, id: string): T {
  if (row === undefined) throw new Error(`${what} ${id} is gone after its claim`);
  return row;
}

/**
 * Claims one job of a table: a pending row, or a `processing` row whose claim is older than five minutes (its
 * worker died). The claim is a compare-and-set on (status, claimed_at), so when several instances run, exactly
 * one of them wins each row, on SQLite and PostgreSQL alike.
 */
export async function claimJob(ctx: GeoContext, table: JobTable, workerId: string): Promise<string | undefined> {
  const now = ctx.now();
  const stale = new Date(now.getTime() - STALE_CLAIM_MS).toISOString();
  for (const candidate of await claimableJobs(ctx.db, table, stale)) {
    if (Number(candidate.attempts) >= MAX_ATTEMPTS) {
      await failJob(ctx.db, table, candidate.id, candidate.status);
      continue;
    }
    const claim = {
      status: 'processing',
      claimed_by: workerId,
      claimed_at: now.toISOString(),
      attempts: Number(candidate.attempts) + 1,
    };
    if (await compareAndSetClaim(ctx.db, table, candidate, claim)) return candidate.id;
  }
  return undefined;
}

/** Runs one round: every claimable privacy request and export, then housekeeping. Returns how many jobs ran. */
export async function runWorkerOnce(ctx: GeoContext, workerId: string): Promise<number> {
  let ran = 0;
  for (
    let id = await claimJob(ctx, 'privacy_request', workerId);
    id;
    id = await claimJob(ctx, 'privacy_request', workerId)
  ) {
    const request = claimed(await findPrivacyRequest(ctx.db, id), 'privacy request', id);
    try {
      await processPrivacyRequest(ctx, request);
    } catch (error) {
      ctx.log.error({ err: error, privacyRequestId: id }, 'privacy request failed; it will be retried');
      await updatePrivacyRequest(ctx.db, id, { status: 'pending' });
      break;
    }
    ran++;
  }
  for (let id = await claimJob(ctx, 'export_job', workerId); id; id = await claimJob(ctx, 'export_job', workerId)) {
    const job = claimed(await findExport(ctx.db, id), 'export', id);
    await generateExport(ctx, job);
    ran++;
  }
  await pruneExpiredExports(ctx);
  await pruneIdempotencyKeys(ctx.db, ctx.now());
  return ran;
}

/**
 * The background worker: a round every `GEO_WORKER_INTERVAL_MS`; a failed round (the database is unreachable)
 * waits longer each time (up to 30 s) and the worker resumes on its own. stop() waits for the current round;
 * check() is its readiness (failing while its last round failed).
 */
export function startGeoWorker(ctx: GeoContext): {
  stop(): Promise<void>;
  kick(): void;
  check(): true | { reason: string };
} {
  const workerId = `geo-${process.pid}-${randomBytes(4).toString('hex')}`;
  const health = createLoopHealth('geo worker', ctx.log, { baseMs: ctx.config.worker.intervalMs, maxMs: 30_000 });
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const round = () => {
    if (stopped) return;
    let delay = ctx.config.worker.intervalMs;
    current = runWorkerOnce(ctx, workerId)
      .then(() => health.succeeded())
      .catch((error) => {
        delay = health.failed(error);
      })
      .finally(() => {
        if (!stopped) timer = setTimeout(round, delay);
      });
  };
  timer = setTimeout(round, ctx.config.worker.intervalMs);
  return {
    check: () => health.check(),
    kick() {
      if (stopped) return;
      clearTimeout(timer);
      timer = setTimeout(round, 0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
