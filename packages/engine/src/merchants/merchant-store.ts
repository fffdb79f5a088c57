import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { EngineDb, MerchantKeyTable, MerchantTable, StoreTable } from '../db/schema.ts';

export type MerchantRow = Selectable<MerchantTable>;
export type StoreRow = Selectable<StoreTable>;
export type KeyRow = Selectable<MerchantKeyTable>;

export function insertMerchant(db: Executor<EngineDb>, row: Insertable<MerchantTable>): Promise<void> {
  return db
    .insertInto('merchant')
    .values(row)
    .execute()
    .then(() => undefined);
}

/** The merchant `id` when it is a direct sub-merchant of `parentId`. */
export function findChildMerchant(db: Executor<EngineDb>, parentId: string, id: string) {
  return db
    .selectFrom('merchant')
    .select('id')
    .where('id', '=', id)
    .where('parent_id', '=', parentId)
    .executeTakeFirst();
}

export function findMerchant(db: Executor<EngineDb>, id: string): Promise<MerchantRow | undefined> {
  return db.selectFrom('merchant').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function setMerchantStatus(
  db: Executor<EngineDb>,
  id: string,
  status: string,
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('merchant')
    .set({ status, updated_at: now })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Active direct sub-merchants of a merchant. */
export function listActiveChildren(db: Executor<EngineDb>, parentId: string): Promise<MerchantRow[]> {
  return db
    .selectFrom('merchant')
    .selectAll()
    .where('parent_id', '=', parentId)
    .where('status', '=', 'active')
    .execute();
}

export function insertStore(db: Executor<EngineDb>, row: Insertable<StoreTable>): Promise<void> {
  return db
    .insertInto('store')
    .values(row)
    .execute()
    .then(() => undefined);
}

export function findStore(db: Executor<EngineDb>, id: string): Promise<StoreRow | undefined> {
  return db.selectFrom('store').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Stores of the given merchants, oldest first (bounded: a merchant network holds at most a few thousand). */
export function listStoresOf(db: Executor<EngineDb>, merchantIds: readonly string[]): Promise<StoreRow[]> {
  if (merchantIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('store')
    .selectAll()
    .where('merchant_id', 'in', merchantIds)
    .orderBy('created_at')
    .orderBy('id')
    .limit(10_000)
    .execute();
}

export function listStoresByIds(db: Executor<EngineDb>, ids: readonly string[]): Promise<StoreRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('store').selectAll().where('id', 'in', ids).execute();
}

export function insertKey(db: Executor<EngineDb>, row: Insertable<MerchantKeyTable>): Promise<void> {
  return db
    .insertInto('merchant_key')
    .values(row)
    .execute()
    .then(() => undefined);
}

export function findKeyByHash(db: Executor<EngineDb>, hash: string): Promise<KeyRow | undefined> {
  return db.selectFrom('merchant_key').selectAll().where('key_hash', '=', hash).executeTakeFirst();
}

export function findKey(db: Executor<EngineDb>, merchantId: string, id: string): Promise<KeyRow | undefined> {
  return db
    .selectFrom('merchant_key')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function listKeys(
  db: Executor<EngineDb>,
  merchantId: string,
  limit: number,
  after?: { createdAt: string; id: string },
): Promise<KeyRow[]> {
  let query = db.selectFrom('merchant_key').selectAll().where('merchant_id', '=', merchantId);
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)]),
      ]),
    );
  }
  return query.orderBy('created_at').orderBy('id').limit(limit).execute();
}

export function findKeys(db: Executor<EngineDb>, merchantId: string, ids: readonly string[]): Promise<KeyRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('merchant_key')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', 'in', ids)
    .execute();
}

/** Revokes the listed keys that are not revoked yet; returns how many changed. */
export async function revokeKeys(
  db: Executor<EngineDb>,
  merchantId: string,
  ids: readonly string[],
  now: string,
): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .updateTable('merchant_key')
    .set({ revoked_at: now })
    .where('merchant_id', '=', merchantId)
    .where('id', 'in', ids)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Deletes the listed keys, but only revoked ones (the condition is part of the statement). */
export async function deleteRevokedKeys(
  db: Executor<EngineDb>,
  merchantId: string,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .deleteFrom('merchant_key')
    .where('merchant_id', '=', merchantId)
    .where('id', 'in', ids)
    .where('revoked_at', 'is not', null)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function touchKey(db: Executor<EngineDb>, id: string, now: string): Promise<void> {
  await db.updateTable('merchant_key').set({ last_used_at: now }).where('id', '=', id).execute();
}
