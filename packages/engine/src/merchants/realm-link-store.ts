import type { Executor } from '@keel/core';
import type { Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';

// Migration 2026_11_26_0050: a runtime realm linked to one catalog merchant (both sides unique).
export interface RealmMerchantLinkTable {
  realm_id: string;
  merchant_id: string;
  created_by: string;
  created_at: string | Date;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    realm_merchant_link: RealmMerchantLinkTable;
  }
}

export type RealmMerchantLinkRow = Selectable<RealmMerchantLinkTable>;

export function findLinkByRealm(db: Executor<EngineDb>, realmId: string) {
  return db.selectFrom('realm_merchant_link').selectAll().where('realm_id', '=', realmId).executeTakeFirst();
}

export function findLinkByMerchant(db: Executor<EngineDb>, merchantId: string) {
  return db.selectFrom('realm_merchant_link').selectAll().where('merchant_id', '=', merchantId).executeTakeFirst();
}

export async function insertLink(db: Executor<EngineDb>, row: RealmMerchantLinkRow): Promise<void> {
  await db.insertInto('realm_merchant_link').values(row).execute();
}

export async function deleteLink(db: Executor<EngineDb>, realmId: string): Promise<boolean> {
  const result = await db.deleteFrom('realm_merchant_link').where('realm_id', '=', realmId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
