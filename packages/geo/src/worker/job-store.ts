import type { Executor } from '@keel/core';
import type { GeoDb } from '../db/schema.ts';

/** The tables whose rows the geo worker claims and runs. */
export type JobTable = 'privacy_request' | 'export_job';

/**
 * Up to five jobs of a table in creation order that a worker may claim: pending ones, and `processing` ones whose
 * claim is older than `staleBefore`.
 */
export async function claimableJobs(db: Executor<GeoDb>, table: JobTable, staleBefore: string) {
  return db
    .selectFrom(table)
    .select(['id', 'status', 'claimed_at', 'attempts'])
    .where((eb) =>
      eb.or([
        eb('status', '=', 'pending'),
        eb.and([eb('status', '=', 'processing'), eb('claimed_at', '<', staleBefore)]),
      ]),
    )
    .orderBy('created_at')
    .limit(5)
    .execute();
}

/** Marks a job `failed` if its status is still `status`. */
export async function failJob(db: Executor<GeoDb>, table: JobTable, id: string, status: string): Promise<void> {
  await db.updateTable(table).set({ status: 'failed' }).where('id', '=', id).where('status', '=', status).execute();
}
