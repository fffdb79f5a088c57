import { decodeCursor, type Executor, generateKey, keysetPage, sha256Hex, toIsoString } from '@keel/core';
import type { Kysely } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors, invalidCursor } from '../errors.ts';
import { newId } from '../ids.ts';
import { inTransaction, type WriteContext } from '../write.ts';
import {
  deleteRevokedKeys,
  findChildMerchant,
  findKey,
  findKeys,
  findMerchant,
  findStore,
  insertKey,
  insertMerchant,
  insertStore,
  type KeyRow,
  listActiveChildren,
  listKeys,
  listStoresByIds,
  revokeKeys,
  type StoreRow,
  setMerchantStatus,
} from './merchant-store.ts';
import { type KeyScope, type Principal, type PrincipalCache, requireMerchantWide } from './principal.ts';

export interface MerchantView {
  id: string;
  name: string;
  parentId: string | null;
  status: string;
  createdAt: string;
}

export interface StoreView {
  id: string;
  merchantId: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

export interface KeyView {
  id: string;
  merchantId: string;
  name: string;
  scope: KeyScope;
  storeIds: string[];
  /** The first characters of the key, to recognise it; the key is shown only once, at creation. */
  prefix: string;
  status: 'active' | 'expired' | 'revoked';
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export function toStoreView(row: StoreRow): StoreView {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    name: row.name,
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}

export function toKeyView(row: KeyRow, now = Date.now()): KeyView {
  const expiresAt = row.expires_at === null ? null : toIsoString(row.expires_at);
  return {
    id: row.id,
    merchantId: row.merchant_id,
    name: row.name,
    scope: row.scope as KeyScope,
    storeIds: JSON.parse(row.store_ids) as string[],
    prefix: row.key_prefix,
    status:
      row.revoked_at !== null
        ? 'revoked'
        : expiresAt !== null && new Date(expiresAt).getTime() <= now
          ? 'expired'
          : 'active',
    createdAt: toIsoString(row.created_at),
    expiresAt,
    revokedAt: row.revoked_at === null ? null : toIsoString(row.revoked_at),
    lastUsedAt: row.last_used_at === null ? null : toIsoString(row.last_used_at),
  };
}

/** Creates a merchant; with `parentId`, a direct sub-merchant of that (top-level) merchant. */
export async function createMerchant(
  db: Kysely<EngineDb>,
  input: { name: string; parentId?: string },
): Promise<MerchantView> {
  const now = new Date().toISOString();
  if (input.parentId !== undefined) {
    const parent = await findMerchant(db, input.parentId);
    if (!parent) throw EngineErrors.invalidField(`parent merchant ${input.parentId} does not exist`);
    if (parent.parent_id !== null)
      throw EngineErrors.invalidField('a sub-merchant cannot have sub-merchants (networks are one level deep)');
  }
  const id = newId();
  await insertMerchant(db, {
    id,
    name: input.name,
    parent_id: input.parentId ?? null,
    status: 'active',
    created_at: now,
    updated_at: now,
  });
  return { id, name: input.name, parentId: input.parentId ?? null, status: 'active', createdAt: now };
}

/** Activates or deactivates a merchant; keys of an inactive merchant are refused with 401 from the next request on. */
export async function setMerchantActive(
  db: Kysely<EngineDb>,
  principals: PrincipalCache,
  merchantId: string,
  active: boolean,
): Promise<void> {
  if (!(await setMerchantStatus(db, merchantId, active ? 'active' : 'inactive', new Date().toISOString()))) {
    throw EngineErrors.invalidField(`merchant ${merchantId} does not exist`);
  }
  await principals.invalidate();
}

export async function createStore(
  db: Kysely<EngineDb>,
  principals: PrincipalCache,
  input: { merchantId: string; name: string },
): Promise<StoreView> {
  if (!(await findMerchant(db, input.merchantId)))
    throw EngineErrors.invalidField(`merchant ${input.merchantId} does not exist`);
  const row = newStoreRow(input.merchantId, input.name);
  await insertStore(db, row);
  await principals.invalidate();
  return toStoreView(row);
}

function newStoreRow(merchantId: string, name: string): StoreRow {
  const now = new Date().toISOString();
  return { id: newId(), merchant_id: merchantId, name, created_at: now, updated_at: now };
}

/** The stores the key reaches, oldest first. */
export async function listReachableStores(db: Kysely<EngineDb>, principal: Principal): Promise<StoreView[]> {
  const rows = await listStoresByIds(db, [...principal.stores.keys()]);
  rows.sort((a, b) => String(a.created_at).localeCompare(String(b.created_at)) || a.id.localeCompare(b.id));
  return rows.map(toStoreView);
}

/**
 * Creates a store for the calling key's merchant, or (`merchantId`) for a direct sub-merchant when the key is
 * `merchant_network`; 403 otherwise.
 */
export async function createStoreFor(
  ctx: WriteContext,
  principals: PrincipalCache,
  principal: Principal,
  input: { name: string; merchantId?: string | undefined },
): Promise<StoreView> {
  requireMerchantWide(principal);
  const merchantId = input.merchantId?.toLowerCase() ?? principal.merchantId;
  if (merchantId !== principal.merchantId) {
    const child = await findChildMerchant(ctx.db, principal.merchantId, merchantId);
    if (principal.scope !== 'merchant_network' || !child)
      throw EngineErrors.scopeForbidden('merchant_network over that sub-merchant');
  }
  const row = newStoreRow(merchantId, input.name);
  await inTransaction(ctx, (trx) => insertStore(trx, row));
  await principals.invalidate();
  return toStoreView(row);
}

export interface NewKeyInput {
  merchantId: string;
  name: string;
  scope: KeyScope;
  storeIds?: string[];
  expiresAt?: string | null;
}

/**
 * Issues a key: returns its record and the key itself, which is shown this once and stored only as a SHA-256.
 * With `issuer` (the calling key; absent only for the operator's CLI) the new key may never reach a store or hold a
 * permission that the issuer lacks: 403 otherwise, whatever the scope asked for.
 */
export async function issueKey(
  db: Executor<EngineDb>,
  input: NewKeyInput,
  issuer?: Principal,
): Promise<{ key: KeyView; secret: string }> {
  if (issuer !== undefined) requirePermissionsOf(issuer, input.scope);
  const storeIds = [...new Set((input.storeIds ?? []).map((id) => id.toLowerCase()))];
  if (input.scope === 'store' && storeIds.length !== 1)
    throw EngineErrors.invalidField('a store key names exactly one store in storeIds');
  if (input.scope === 'custom' && (storeIds.length < 1 || storeIds.length > 100)) {
    throw EngineErrors.invalidField('a custom key names 1 to 100 stores in storeIds');
  }
  if ((input.scope === 'merchant' || input.scope === 'merchant_network') && storeIds.length > 0) {
    throw EngineErrors.invalidField(`a ${input.scope} key reaches its stores by scope; storeIds must be empty`);
  }
  if (issuer !== undefined) {
    for (const storeId of storeIds) if (!issuer.stores.has(storeId)) throw EngineErrors.storeForbidden(storeId);
  }
  if (storeIds.length > 0) {
    const network = new Set([input.merchantId, ...(await listActiveChildren(db, input.merchantId)).map((m) => m.id)]);
    for (const storeId of storeIds) {
      const store = await findStore(db, storeId);
      if (!store || !network.has(store.merchant_id)) throw EngineErrors.storeForbidden(storeId);
    }
  }
  let expiresAt: string | null = null;
  if (input.expiresAt) {
    const parsed = new Date(input.expiresAt);
    if (Number.isNaN(parsed.getTime())) throw EngineErrors.invalidField('expiresAt must be an ISO 8601 timestamp');
    expiresAt = parsed.toISOString();
  }
  const secret = generateKey('mk');
  const row: KeyRow = {
    id: newId(),
    merchant_id: input.merchantId,
    name: input.name,
    scope: input.scope,
    store_ids: JSON.stringify(storeIds),
    key_prefix: secret.slice(0, 11),
    key_hash: sha256Hex(secret),
    created_at: new Date().toISOString(),
    expires_at: expiresAt,
    revoked_at: null,
    last_used_at: null,
  };
  await insertKey(db, row);
  return { key: toKeyView(row), secret };
}

/**
 * The permissions a scope carries, checked against the issuer's: key management needs a merchant-wide key, and only a
 * `merchant_network` key reaches the sub-merchants' stores by scope. (Store lists are checked store by store.)
 */
function requirePermissionsOf(issuer: Principal, scope: KeyScope): void {
  requireMerchantWide(issuer);
  if (scope === 'merchant_network' && issuer.scope !== 'merchant_network') {
    throw EngineErrors.scopeForbidden('merchant_network (a key cannot grant more than it holds)');
  }
}

export async function getKeys(
  db: Kysely<EngineDb>,
  merchantId: string,
  limit: number,
  cursor?: string,
): Promise<{ data: KeyView[]; nextCursor: string | null }> {
  const position = decodeCursor('keys', cursor, ['string', 'string'], invalidCursor);
  const after = position && { createdAt: position[0], id: position[1] };
  const rows = await listKeys(db, merchantId, limit + 1, after);
  const page = keysetPage('keys', rows, limit, (last) => [toIsoString(last.created_at), last.id]);
  return { data: page.rows.map((row) => toKeyView(row)), nextCursor: page.next };
}

export async function getKey(db: Kysely<EngineDb>, merchantId: string, keyId: string): Promise<KeyView> {
  const row = await findKey(db, merchantId, keyId);
  if (!row) throw EngineErrors.keyNotFound(keyId);
  return toKeyView(row);
}

/** Revokes one key (idempotent: revoking a revoked key changes nothing). */
export async function revokeKey(
  ctx: WriteContext,
  principals: PrincipalCache,
  merchantId: string,
  keyId: string,
): Promise<KeyView> {
  const row = await findKey(ctx.db, merchantId, keyId);
  if (!row) throw EngineErrors.keyNotFound(keyId);
  const now = new Date().toISOString();
  await inTransaction(ctx, (trx) => revokeKeys(trx, merchantId, [keyId], now));
  await principals.invalidate();
  return toKeyView((await findKey(ctx.db, merchantId, keyId))!);
}

/** Deletes a key; only a revoked one (an active or merely expired key is a 409). */
export async function deleteKey(
  ctx: WriteContext,
  principals: PrincipalCache,
  merchantId: string,
  keyId: string,
): Promise<void> {
  const row = await findKey(ctx.db, merchantId, keyId);
  if (!row) throw EngineErrors.keyNotFound(keyId);
  if (row.revoked_at === null)
    throw EngineErrors.keyNotRevoked(`Key ${keyId} must be revoked before it can be deleted`);
  await inTransaction(ctx, (trx) => deleteRevokedKeys(trx, merchantId, [keyId]));
  await principals.invalidate();
}

/** Revokes every listed key that is not revoked yet; already revoked ones are left as they are. */
export async function bulkRevokeKeys(
  ctx: WriteContext,
  principals: PrincipalCache,
  merchantId: string,
  ids: string[],
): Promise<{ revoked: string[]; alreadyRevoked: string[] }> {
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  const outcome = await inTransaction(ctx, async (trx) => {
    const rows = await findKeys(trx, merchantId, unique);
    const missing = unique.filter((id) => !rows.some((row) => row.id === id));
    if (missing.length > 0) throw EngineErrors.keyNotFound(missing.join(', '));
    const toRevoke = rows.filter((row) => row.revoked_at === null).map((row) => row.id);
    await revokeKeys(trx, merchantId, toRevoke, new Date().toISOString());
    return { revoked: toRevoke, alreadyRevoked: rows.filter((row) => row.revoked_at !== null).map((row) => row.id) };
  });
  await principals.invalidate();
  return outcome;
}

/** Deletes the listed keys only when every one of them is revoked; otherwise nothing is deleted (409 naming the others). */
export async function bulkDeleteKeys(
  ctx: WriteContext,
  principals: PrincipalCache,
  merchantId: string,
  ids: string[],
): Promise<{ deleted: string[] }> {
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  await inTransaction(ctx, async (trx) => {
    const rows = await findKeys(trx, merchantId, unique);
    const missing = unique.filter((id) => !rows.some((row) => row.id === id));
    if (missing.length > 0) throw EngineErrors.keyNotFound(missing.join(', '));
    const active = rows.filter((row) => row.revoked_at === null).map((row) => row.id);
    if (active.length > 0) {
      throw EngineErrors.keyNotRevoked(`Bulk delete accepts only revoked keys; not revoked: ${active.join(', ')}`);
    }
    await deleteRevokedKeys(trx, merchantId, unique);
  });
  await principals.invalidate();
  return { deleted: unique };
}
