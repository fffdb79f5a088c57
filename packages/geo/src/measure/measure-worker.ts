import { randomBytes } from 'node:crypto';
import { createLoopHealth, type LoopHealth } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { compareAndSetClaim } from '../db/claim.ts';
import { claimableRuns, claimNamedRun, failClaimableRun, refreshRunClaim } from './measure-store.ts';
import { type ExecuteOptions, executeRun } from './run-service.ts';
import { startDueSchedules } from './schedule-service.ts';

/** A running run's claim is refreshed every 30 s; one not refreshed for 2 minutes belongs to a dead worker. */
const STALE_CLAIM_MS = 2 * 60 * 1000;
const MAX_ATTEMPTS = 5;

/**
 * Claims one run to execute: a pending run, or a running one whose claim went stale (its worker died; it resumes
 * where it stopped). Compare-and-set on (status, claimed_at): with several instances exactly one wins each run.
 */
export async function claimRun(ctx: GeoContext, workerId: string): Promise<string | undefined> {
  const now = ctx.now();
  const stale = new Date(now.getTime() - STALE_CLAIM_MS).toISOString();
  for (const candidate of await claimableRuns(ctx.db, stale)) {
    if (Number(candidate.attempts) >= MAX_ATTEMPTS) {
      await failClaimableRun(ctx.db, candidate.id, candidate.status, now.toISOString());
      continue;
    }
    const claim = { claimed_by: workerId, claimed_at: now.toISOString(), attempts: Number(candidate.attempts) + 1 };
    if (await compareAndSetClaim(ctx.db, 'measure_run', candidate, claim)) return candidate.id;
  }
  return undefined;
}

/**
 * Claims one named run for a worker (`keel geo run`): a pending run nobody holds, or one whose claim went stale.
 * With `refresh`, renews a claim this worker already holds (its heartbeat). True when the worker holds the run.
 */
export async function claimRunById(
  ctx: GeoContext,
  runId: string,
  workerId: string,
  refresh = false,
): Promise<boolean> {
  const now = ctx.now();
  const stale = new Date(now.getTime() - STALE_CLAIM_MS).toISOString();
  return claimNamedRun(ctx.db, { runId, workerId, at: now.toISOString(), staleBefore: stale, refresh });
}

/** One round: start due schedules, then execute every claimable run. */
export async function runMeasureWorkerOnce(ctx: GeoContext, workerId: string, options: ExecuteOptions = {}) {
  await startDueSchedules(ctx);
  let ran = 0;
  for (let id = await claimRun(ctx, workerId); id; id = await claimRun(ctx, workerId)) {
    const runId = id;
    try {
      await executeRun(ctx, runId, {
        ...options,
        onHeartbeat: () => refreshRunClaim(ctx.db, runId, workerId, ctx.now().toISOString()),
      });
    } catch {
      // Logged by executeRun; the run is pending again and resumes on a later round.
      break;
    }
    ran++;
  }
  return ran;
}

/**
 * The measurement worker: a round every `GEO_WORKER_INTERVAL_MS` (runs can take long, so apart from the export
 * worker); a failed round backs off and is logged once per streak (core's loop health), and `check` feeds readiness.
 */
export function startMeasureWorker(ctx: GeoContext): { stop(): Promise<void>; check: LoopHealth['check'] } {
  const workerId = `geo-measure-${process.pid}-${randomBytes(4).toString('hex')}`;
  const health = createLoopHealth('geo measurement worker', ctx.log, {
    baseMs: ctx.config.worker.intervalMs,
    maxMs: 30_000,
  });
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const round = () => {
    if (stopped) return;
    let delay = ctx.config.worker.intervalMs;
    current = runMeasureWorkerOnce(ctx, workerId)
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
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
