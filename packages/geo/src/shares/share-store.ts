import type { Executor } from '@keel/core';
import type { Insertable } from 'kysely';
import type { DashboardShareTable, GeoDb } from '../db/schema.ts';

export async function insertShare(db: Executor<GeoDb>, row: Insertable<DashboardShareTable>): Promise<void> {
  await db.insertInto('dashboard_share').values(row).execute();
}

/** A dashboard's shares, newest first (ids are time-ordered), at most 100. */
export async function listDashboardShares(db: Executor<GeoDb>, workspaceId: string, dashboardId: string) {
  return db
    .selectFrom('dashboard_share')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('dashboard_id', '=', dashboardId)
    .orderBy('id', 'desc')
    .limit(100)
    .execute();
}

/** A share of this dashboard of this workspace (its id and revocation time), or undefined. */
export async function findDashboardShare(db: Executor<GeoDb>, workspaceId: string, dashboardId: string, id: string) {
  return db
    .selectFrom('dashboard_share')
    .select(['id', 'revoked_at'])
    .where('id', '=', id)
    .where('dashboard_id', '=', dashboardId)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
}

export async function findShareByTokenHash(db: Executor<GeoDb>, tokenHash: string) {
  return db.selectFrom('dashboard_share').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function revokeShareRow(db: Executor<GeoDb>, id: string, at: string): Promise<void> {
  await db.updateTable('dashboard_share').set({ revoked_at: at }).where('id', '=', id).execute();
}
