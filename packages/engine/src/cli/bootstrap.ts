import type { Kysely } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import { bootstrapRealm } from '../identity/identity-service.ts';
import { createMerchant, createStore, issueKey } from '../merchants/merchant-service.ts';
import type { PrincipalCache } from '../merchants/principal.ts';
import { linkRealm } from '../merchants/realm-link-service.ts';

/** What `keel engine bootstrap --json` prints: the catalog's merchant, stores and keys, and a runtime realm with its key pair. */
export interface BootstrapResult {
  merchantId: string;
  subMerchantId: string;
  /** Stores of the merchant (three). */
  storeIds: string[];
  subMerchantStoreId: string;
  keys: {
    /** Scope `merchant`: every store of the merchant. */
    merchant: string;
    /** Scope `store`: storeIds[0] only. */
    store: string;
    /** Scope `merchant_network`: the merchant's and the sub-merchant's stores. */
    network: string;
    /** Scope `custom`: storeIds[1] and the sub-merchant's store. */
    custom: string;
  };
  /**
   * A new runtime realm with an owner service identity and its key pair (shown once), linked to the merchant: its
   * flows call the merchant's catalog tools and the merchant's catalog records anonymous events in it.
   */
  realmId: string;
  accessKey: string;
  secretKey: string;
  [extra: string]: unknown;
}

/** Creates a new merchant with a direct sub-merchant, their stores and one key of each scope (a new merchant every run). */
export async function bootstrapMerchant(
  db: Kysely<EngineDb>,
  principals: PrincipalCache,
  label = new Date().toISOString(),
): Promise<BootstrapResult> {
  const merchant = await createMerchant(db, { name: `Merchant ${label}` });
  const sub = await createMerchant(db, { name: `Sub-merchant ${label}`, parentId: merchant.id });
  const storeIds: string[] = [];
  for (const name of ['Main store', 'Second store', 'Third store']) {
    storeIds.push((await createStore(db, principals, { merchantId: merchant.id, name })).id);
  }
  const subStore = await createStore(db, principals, { merchantId: sub.id, name: 'Sub-merchant store' });
  const key = async (scope: 'merchant' | 'store' | 'merchant_network' | 'custom', ids?: string[]) =>
    (
      await issueKey(db, {
        merchantId: merchant.id,
        name: `bootstrap ${scope}`,
        scope,
        ...(ids ? { storeIds: ids } : {}),
      })
    ).secret;
  const realm = await bootstrapRealm(db, { realmName: `Realm ${label}`, username: 'bootstrap-service' });
  await linkRealm(db, { realmId: realm.realmId, merchantId: merchant.id, createdBy: 'keel engine bootstrap' });
  return {
    merchantId: merchant.id,
    subMerchantId: sub.id,
    storeIds,
    subMerchantStoreId: subStore.id,
    keys: {
      merchant: await key('merchant'),
      store: await key('store', [storeIds[0]!]),
      network: await key('merchant_network'),
      custom: await key('custom', [storeIds[1]!, subStore.id]),
    },
    realmId: realm.realmId,
    accessKey: realm.accessKey,
    secretKey: realm.secretKey,
  };
}
