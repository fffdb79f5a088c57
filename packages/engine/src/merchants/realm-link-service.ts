import type { Executor } from '@keel/core';
import type { Kysely } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors } from '../errors.ts';
import { findRealm } from '../identity/identity-store.ts';
import { findMerchant, listStoresOf } from './merchant-store.ts';
import type { Principal } from './principal.ts';
import { deleteLink, findLinkByMerchant, findLinkByRealm, insertLink } from './realm-link-store.ts';

/** A realm's link to its catalog merchant, as the CLI prints it. */
export interface RealmLinkView {
  realmId: string;
  merchantId: string;
  createdBy: string;
  createdAt: string;
}

const view = (row: { realm_id: string; merchant_id: string; created_by: string; created_at: string | Date }) => ({
  realmId: row.realm_id,
  merchantId: row.merchant_id,
  createdBy: row.created_by,
  createdAt: new Date(row.created_at).toISOString(),
});

/**
 * Links a runtime realm to a catalog merchant (operator command `keel engine realms link`, and `keel engine
 * bootstrap`). One merchant per realm and one realm per merchant: linking either side again to something else is a
 * 409 `CATALOG_REALM_LINK_CONFLICT` (unlink first), the same link again answers the existing one. The realm and the
 * merchant must exist; a sub-merchant may be linked to its own realm.
 */
export async function linkRealm(
  db: Executor<EngineDb>,
  input: { realmId: string; merchantId: string; createdBy: string; now?: string },
): Promise<RealmLinkView> {
  if (!(await findRealm(db, input.realmId))) throw EngineErrors.invalidField(`realm ${input.realmId} does not exist`);
  if (!(await findMerchant(db, input.merchantId)))
    throw EngineErrors.invalidField(`merchant ${input.merchantId} does not exist`);
  const existing = (await findLinkByRealm(db, input.realmId)) ?? (await findLinkByMerchant(db, input.merchantId));
  if (existing) {
    if (existing.realm_id === input.realmId && existing.merchant_id === input.merchantId) return view(existing);
    throw EngineErrors.realmLinkConflict(
      existing.realm_id === input.realmId
        ? `realm ${input.realmId} is already linked to another merchant; unlink it first`
        : `merchant ${input.merchantId} is already linked to another realm; unlink that realm first`,
    );
  }
  const row = {
    realm_id: input.realmId,
    merchant_id: input.merchantId,
    created_by: input.createdBy,
    created_at: input.now ?? new Date().toISOString(),
  };
  await insertLink(db, row);
  return view(row);
}

/** Removes a realm's link; answers whether there was one. */
export function unlinkRealm(db: Executor<EngineDb>, realmId: string): Promise<boolean> {
  return deleteLink(db, realmId);
}

export async function realmLink(db: Executor<EngineDb>, realmId: string): Promise<RealmLinkView | undefined> {
  const row = await findLinkByRealm(db, realmId);
  return row ? view(row) : undefined;
}

/** The realm a merchant is linked to (where its catalog records anonymous events), if any. */
export async function realmOfMerchant(db: Executor<EngineDb>, merchantId: string): Promise<string | undefined> {
  return (await findLinkByMerchant(db, merchantId))?.realm_id;
}

/**
 * The catalog principal of a realm's flows and runtime: the linked merchant with scope `merchant` (its own stores,
 * never a sub-merchant's or another merchant's), or undefined when the realm is not linked or the merchant is not
 * active. Its `keyId` is `realm:<realm id>`, so idempotency keys of flows are scoped to the realm.
 */
export async function realmCatalogPrincipal(db: Kysely<EngineDb>, realmId: string): Promise<Principal | undefined> {
  const link = await findLinkByRealm(db, realmId);
  if (!link) return undefined;
  const merchant = await findMerchant(db, link.merchant_id);
  if (merchant?.status !== 'active') return undefined;
  const stores = new Map((await listStoresOf(db, [merchant.id])).map((store) => [store.id, store.merchant_id]));
  return { keyId: `realm:${realmId}`, merchantId: merchant.id, scope: 'merchant', stores };
}
