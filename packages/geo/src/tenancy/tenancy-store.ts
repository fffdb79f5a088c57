import type { Executor } from '@keel/core';
import type { Insertable } from 'kysely';
import type { GeoDb, OrganizationTable, SiteTokenTable, TenantTable, WorkspaceTable } from '../db/schema.ts';

export async function insertTenant(db: Executor<GeoDb>, row: Insertable<TenantTable>): Promise<void> {
  await db.insertInto('tenant').values(row).execute();
}

export async function insertOrganization(db: Executor<GeoDb>, row: Insertable<OrganizationTable>): Promise<void> {
  await db.insertInto('organization').values(row).execute();
}

export async function insertWorkspace(db: Executor<GeoDb>, row: Insertable<WorkspaceTable>): Promise<void> {
  await db.insertInto('workspace').values(row).execute();
}

export async function findTenant(db: Executor<GeoDb>, id: string) {
  return db.selectFrom('tenant').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function firstOrganization(db: Executor<GeoDb>, tenantId: string) {
  return db
    .selectFrom('organization')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
}

export async function findOrganization(db: Executor<GeoDb>, id: string) {
  return db.selectFrom('organization').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The tenant a workspace belongs to, or undefined when there is no such workspace. */
export async function findWorkspaceTenant(db: Executor<GeoDb>, workspaceId: string): Promise<string | undefined> {
  const row = await db.selectFrom('workspace').select('tenant_id').where('id', '=', workspaceId).executeTakeFirst();
  return row?.tenant_id;
}

export async function findWorkspace(db: Executor<GeoDb>, workspaceId: string) {
  return db.selectFrom('workspace').selectAll().where('id', '=', workspaceId).executeTakeFirst();
}

export async function listTenantWorkspaces(db: Executor<GeoDb>, tenantId: string, limit: number) {
  return db.selectFrom('workspace').selectAll().where('tenant_id', '=', tenantId).orderBy('id').limit(limit).execute();
}

export async function insertSiteToken(db: Executor<GeoDb>, row: Insertable<SiteTokenTable>): Promise<void> {
  await db.insertInto('site_token').values(row).execute();
}

export async function findSiteTokenByHash(db: Executor<GeoDb>, hash: string) {
  return db
    .selectFrom('site_token')
    .select(['id', 'workspace_id', 'tenant_id', 'revoked_at'])
    .where('token_hash', '=', hash)
    .executeTakeFirst();
}

/** A site token's id and owning tenant, or undefined. */
export async function findSiteToken(db: Executor<GeoDb>, id: string) {
  return db.selectFrom('site_token').select(['id', 'tenant_id']).where('id', '=', id).executeTakeFirst();
}

export async function revokeSiteTokenRow(db: Executor<GeoDb>, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('site_token')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
