import { type Executor, toIsoString } from '@keel/core';
import type { GeoDb } from './schema.ts';

/** The tables whose rows workers claim (privacy requests and exports: the geo worker; runs: the measurement worker). */
export type ClaimTable = 'privacy_request' | 'export_job' | 'measure_run';

/**
 * Claims a row by compare-and-set on the (status, claimed_at) it was read with, so that when several workers race
 * for it exactly one update wins, on SQLite and PostgreSQL alike. `set` holds the claim (claimant, time, attempts,
 * and a new status where the table has one for claimed rows). True when this update won the row.
 */
export async function compareAndSetClaim(
  db: Executor<GeoDb>,
  table: ClaimTable,
  read: { id: string; status: string; claimed_at: string | Date | null },
  set: { status?: string; claimed_by: string; claimed_at: string; attempts: number },
): Promise<boolean> {
  let update = db.updateTable(table).set(set).where('id', '=', read.id).where('status', '=', read.status);
  update =
    read.claimed_at === null
      ? update.where('claimed_at', 'is', null)
      : update.where('claimed_at', '=', toIsoString(read.claimed_at) as never);
  return Number((await update.executeTakeFirst()).numUpdatedRows) === 1;
}
