import type { Executor } from '@keel/core';
import type { Insertable } from 'kysely';
import type { ApiKeyTable, GeoDb } from '../db/schema.ts';

export async function insertKey(db: Executor<GeoDb>, row: Insertable<ApiKeyTable>): Promise<void> {
  await db.insertInto('api_key').values(row).execute();
}

export async function findKeyByHash(db: Executor<GeoDb>, hash: string) {
  return db.selectFrom('api_key').selectAll().where('key_hash', '=', hash).executeTakeFirst();
}

export async function findTenantKey(db: Executor<GeoDb>, tenantId: string, id: string) {
  return db.selectFrom('api_key').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** One page of a tenant's keys, newest first (ids are time-ordered). */
export async function listTenantKeys(db: Executor<GeoDb>, tenantId: string, limit: number, before: string | undefined) {
  let query = db.selectFrom('api_key').selectAll().where('tenant_id', '=', tenantId);
  if (before) query = query.where('id', '<', before);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

export async function revokeKeyRow(db: Executor<GeoDb>, tenantId: string, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('api_key')
    .set({ revoked_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
