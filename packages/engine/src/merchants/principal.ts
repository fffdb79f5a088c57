import { type Cache, sha256Hex, toIsoString } from '@keel/core';
import type { Kysely } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors } from '../errors.ts';
import {
  findKeyByHash,
  findMerchant,
  type KeyRow,
  listActiveChildren,
  listStoresByIds,
  listStoresOf,
  touchKey,
} from './merchant-store.ts';

export const KEY_SCOPES = ['merchant', 'store', 'merchant_network', 'custom'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** Who is calling: a merchant key and the stores it reaches (store id → owning merchant id). */
export interface Principal {
  keyId: string;
  merchantId: string;
  scope: KeyScope;
  stores: ReadonlyMap<string, string>;
}

/** The stores a key reaches, by scope; stores of inactive (sub-)merchants are never included. */
export async function storesForKey(db: Kysely<EngineDb>, key: KeyRow): Promise<Map<string, string>> {
  const network = new Set([key.merchant_id]);
  if (key.scope !== 'merchant')
    for (const child of await listActiveChildren(db, key.merchant_id)) network.add(child.id);
  const stores = new Map<string, string>();
  if (key.scope === 'merchant' || key.scope === 'merchant_network') {
    const merchants = key.scope === 'merchant' ? [key.merchant_id] : [...network];
    for (const store of await listStoresOf(db, merchants)) stores.set(store.id, store.merchant_id);
  } else {
    const ids = JSON.parse(key.store_ids) as string[];
    for (const store of await listStoresByIds(db, ids))
      if (network.has(store.merchant_id)) stores.set(store.id, store.merchant_id);
  }
  return stores;
}

/** Reads the presented merchant key: `Authorization: Bearer`, `x-api-key` (also `X-API-Key`) or `X-Catalog-API-Key`. */
export function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (match) return match[1];
  }
  for (const name of ['x-api-key', 'x-catalog-api-key']) {
    const value = headers[name];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}

interface Cached {
  principal: Principal;
  expiresAt: number;
  /** The key's own expiry, so a cached principal never outlives it. */
  keyExpiresAt: number;
}

const CHANNEL = 'merchant-keys-changed';
const TTL_MS = 5000;

/**
 * Resolves keys to principals with a short in-process cache. Every change to keys, merchants or stores
 * publishes an invalidation (through Redis when several instances run), so a revoked key stops working at once.
 */
export interface PrincipalCache {
  authenticate(presented: string | undefined): Promise<Principal>;
  /** The principal of a key already seen (no database access); for rate-limit bucketing. */
  peek(presented: string): Principal | undefined;
  invalidate(): Promise<void>;
}

export async function createPrincipalCache(db: Kysely<EngineDb>, cache: Cache): Promise<PrincipalCache> {
  const entries = new Map<string, Cached>();
  const touched = new Map<string, number>();
  await cache.subscribe(CHANNEL, () => entries.clear());

  return {
    peek(presented) {
      const entry = entries.get(sha256Hex(presented));
      return entry && entry.expiresAt > Date.now() ? entry.principal : undefined;
    },
    async authenticate(presented) {
      if (!presented || presented.length > 512) throw EngineErrors.unauthorized();
      const hash = sha256Hex(presented);
      const now = Date.now();
      const hit = entries.get(hash);
      if (hit && hit.expiresAt > now && hit.keyExpiresAt > now) return hit.principal;
      // Looked up by the SHA-256 of the key: the index lookup compares digests, never the secret itself.
      const key = await findKeyByHash(db, hash);
      if (!key || key.revoked_at !== null) throw EngineErrors.unauthorized();
      const keyExpiresAt =
        key.expires_at === null ? Number.POSITIVE_INFINITY : new Date(toIsoString(key.expires_at)).getTime();
      if (keyExpiresAt <= now) throw EngineErrors.unauthorized();
      const merchant = await findMerchant(db, key.merchant_id);
      if (merchant?.status !== 'active') throw EngineErrors.unauthorized();
      const principal: Principal = {
        keyId: key.id,
        merchantId: key.merchant_id,
        scope: key.scope as KeyScope,
        stores: await storesForKey(db, key),
      };
      if (entries.size > 10_000) entries.clear();
      entries.set(hash, { principal, expiresAt: now + TTL_MS, keyExpiresAt });
      if ((touched.get(key.id) ?? 0) < now - 60_000) {
        touched.set(key.id, now);
        await touchKey(db, key.id, new Date(now).toISOString()).catch(() => undefined);
      }
      return principal;
    },
    async invalidate() {
      entries.clear();
      await cache.publish(CHANNEL, String(Date.now()));
    },
  };
}

/** The store, when the key reaches it; 403 otherwise (and when the key reaches no store at all). */
export function requireStoreAccess(principal: Principal, storeId: string): string {
  if (principal.stores.size === 0) throw EngineErrors.noStoreAccess();
  const merchantId = principal.stores.get(storeId.toLowerCase());
  if (merchantId === undefined) throw EngineErrors.storeForbidden(storeId);
  return merchantId;
}

/** The stores a list operation covers: the one asked for (checked), or every store the key reaches. */
export function storesInScope(principal: Principal, storeId: string | undefined): string[] {
  if (principal.stores.size === 0) throw EngineErrors.noStoreAccess();
  if (storeId !== undefined) {
    requireStoreAccess(principal, storeId);
    return [storeId.toLowerCase()];
  }
  return [...principal.stores.keys()];
}

/** Key and destination management need a merchant-wide key. */
export function requireMerchantWide(principal: Principal): void {
  if (principal.scope !== 'merchant' && principal.scope !== 'merchant_network')
    throw EngineErrors.scopeForbidden('merchant or merchant_network');
}
