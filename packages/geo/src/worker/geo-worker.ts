import { randomBytes } from 'node:crypto';
import { createLoopHealth, pruneIdempotencyKeys, toIsoString } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { generateExport, pruneExpiredExports } from '../exports/export-service.ts';
import { processPrivacyRequest } from '../privacy/privacy-service.ts';

const STALE_CLAIM_MS = 5 * 60 * 1000;
const MAX_ATTEMPTS = 3;

type JobTable = 'privacy_request' | 'export_job';

/**
 * Claims one job of a table: a pending row, or a `processing` row whose claim is older than five minutes (its
 * worker died). The claim is a compare-and-set on (status, claimed_at), so when several instances run, exactly
 * one of them wins each row, on SQLite and PostgreSQL alike.
 */
export async function claimJob(ctx: GeoContext, table: JobTable, workerId: string): Promise<string | undefined> {
  const db = ctx.db;
  const now = ctx.now();
  const stale = new Date(now.getTime() - STALE_CLAIM_MS).toISOString();
  const candidates = await db
    .selectFrom(table)
    .select(['id', 'status', 'claimed_at', 'attempts'])
    .where((eb) =>
      eb.or([eb('status', '=', 'pending'), eb.and([eb('status', '=', 'processing'), eb('claimed_at', '<', stale)])]),
    )
    .orderBy('created_at')
    .limit(5)
    .execute();
  for (const candidate of candidates) {
    if (Number(candidate.attempts) >= MAX_ATTEMPTS) {
      await db
        .updateTable(table)
        .set({ status: 'failed' })
        .where('id', '=', candidate.id)
        .where('status', '=', candidate.status)
        .execute();
      continue;
    }
    let update = db
      .updateTable(table)
      .set({
        status: 'processing',
        claimed_by: workerId,
        claimed_at: now.toISOString(),
        attempts: Number(candidate.attempts) + 1,
      })
      .where('id', '=', candidate.id)
      .where('status', '=', candidate.status);
    update =
      candidate.claimed_at === null
        ? update.where('claimed_at', 'is', null)
        : update.where('claimed_at', '=', toIsoString(candidate.claimed_at) as never);
    const result = await update.executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) return candidate.id;
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
    const request = await ctx.db
      .selectFrom('privacy_request')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    try {
      await processPrivacyRequest(ctx, request);
    } catch (error) {
      ctx.log.error({ err: error, privacyRequestId: id }, 'privacy request failed; it will be retried');
      await ctx.db.updateTable('privacy_request').set({ status: 'pending' }).where('id', '=', id).execute();
      break;
    }
    ran++;
  }
  for (let id = await claimJob(ctx, 'export_job', workerId); id; id = await claimJob(ctx, 'export_job', workerId)) {
    const job = await ctx.db.selectFrom('export_job').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
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
