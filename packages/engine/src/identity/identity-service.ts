import { createHash, timingSafeEqual } from 'node:crypto';
import { checkOutboundUrl, fromJsonColumn, generateKey, sha256Hex, toIsoString } from '@keel/core';
import type { Kysely } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import { newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import {
  type AccessKeyRow,
  anyRealmExists,
  claimBootstrapMarker,
  countActiveKeys,
  countOwnedRealms,
  countOwners,
  deleteIdentity,
  deleteMembership,
  findAccessKey,
  findCredential,
  findIdentity,
  findIdentityByUsernameKey,
  findMemberIdentity,
  findRealm,
  type IdentityRow,
  insertAccessKey,
  insertIdentity,
  insertRealm,
  listAccessKeys,
  listMembers,
  listOwnedRealmIds,
  type RealmRow,
  revokeAccessKey,
  revokeRealmKeysOf,
  setRealmCreator,
  updateIdentity,
  updateRealmTheme,
  upsertMember,
} from './identity-store.ts';
import {
  allows,
  type Role,
  type RuntimePrincipal,
  requireGrantable,
  requirePermission,
  type UserType,
} from './roles.ts';

/** Key pairs one identity may hold at a time (not revoked). */
export const MAX_KEYS_PER_IDENTITY = 20;

export interface RealmView {
  id: string;
  name: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export interface IdentityView {
  id: string;
  username: string;
  user_type: string;
  display_name: string | null;
  status: string;
  realm_id: string | null;
  role?: string | undefined;
  member_since?: string | undefined;
  metadata: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
}

export interface CredentialsView {
  key_id: string;
  access_key: string;
  /** Shown once, never again. */
  secret_key: string;
  realm_id: string | null;
  name: string;
  created_at: string;
  expires_at: string | null;
}

export function toRealmView(row: RealmRow): RealmView {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
  };
}

export function toIdentityView(row: IdentityRow & { role?: string; member_since?: string | Date }): IdentityView {
  return {
    id: row.id,
    username: row.username,
    user_type: row.user_type,
    display_name: row.display_name,
    status: row.status,
    realm_id: row.realm_id,
    ...(row.role ? { role: row.role } : {}),
    ...(row.member_since ? { member_since: toIsoString(row.member_since) } : {}),
    metadata: row.metadata === null ? null : fromJsonColumn(row.metadata),
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
  };
}

function keyView(row: AccessKeyRow, now: number) {
  const expired = row.expires_at !== null && new Date(toIsoString(row.expires_at)).getTime() <= now;
  return {
    id: row.id,
    access_key: row.access_key,
    name: row.name,
    realm_id: row.realm_id,
    status: row.revoked_at !== null ? 'revoked' : expired ? 'expired' : 'active',
    created_at: toIsoString(row.created_at),
    expires_at: row.expires_at === null ? null : toIsoString(row.expires_at),
    revoked_at: row.revoked_at === null ? null : toIsoString(row.revoked_at),
    last_used_at: row.last_used_at === null ? null : toIsoString(row.last_used_at),
  };
}

/** Users share one namespace; agent and service identities are named per realm (names never leak across realms). */
export function usernameKey(userType: UserType, username: string, realmId: string | null): string {
  return userType === 'user' ? `u:${username.toLowerCase()}` : `r:${realmId}:${username.toLowerCase()}`;
}

/** Creates a credential pair: `eak_…` (public) and `esk_…` (secret, ~190 bits, stored as its SHA-256). */
export async function issueKeyPair(
  db: Kysely<EngineDb> | Parameters<typeof insertAccessKey>[0],
  input: { identityId: string; realmId: string | null; name: string; expiresAt: string | null; now: string },
): Promise<CredentialsView> {
  const accessKey = generateKey('eak', 24);
  const secretKey = generateKey('esk');
  const id = newId();
  await insertAccessKey(db, {
    id,
    identity_id: input.identityId,
    realm_id: input.realmId,
    access_key: accessKey,
    secret_hash: sha256Hex(secretKey),
    name: input.name,
    created_at: input.now,
    expires_at: input.expiresAt,
    revoked_at: null,
    last_used_at: null,
  });
  return {
    key_id: id,
    access_key: accessKey,
    secret_key: secretKey,
    realm_id: input.realmId,
    name: input.name,
    created_at: input.now,
    expires_at: input.expiresAt,
  };
}

/** A new identity (409 AUTH_USERNAME_TAKEN when its name is taken in its namespace). */
export async function createIdentity(
  db: Parameters<typeof insertIdentity>[0],
  input: {
    username: string;
    userType: UserType;
    realmId: string | null;
    displayName?: string | null | undefined;
    metadata?: Record<string, unknown> | null | undefined;
    now: string;
  },
): Promise<IdentityRow> {
  const key = usernameKey(input.userType, input.username, input.realmId);
  if (await findIdentityByUsernameKey(db, key)) throw RuntimeErrors.usernameTaken(input.username);
  const row: IdentityRow = {
    id: newId(),
    realm_id: input.realmId,
    username: input.username,
    username_key: key,
    user_type: input.userType,
    display_name: input.displayName ?? null,
    status: 'active',
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    created_at: input.now,
    updated_at: input.now,
  };
  await insertIdentity(db, row);
  return row;
}

async function createRealmRow(
  db: Parameters<typeof insertRealm>[0],
  name: string,
  createdBy: string | null,
  now: string,
): Promise<RealmRow> {
  const row: RealmRow = {
    id: newId(),
    name,
    status: 'active',
    theme: null,
    created_by: createdBy,
    created_at: now,
    updated_at: now,
  };
  await insertRealm(db, row);
  return row;
}

/**
 * Creates a realm with one owner service identity and its first key pair (`keel engine bootstrap`, and the
 * first start on an empty database).
 */
export async function bootstrapRealm(
  db: Kysely<EngineDb>,
  input: { realmName: string; username: string; now?: string },
): Promise<{ realmId: string; identityId: string; accessKey: string; secretKey: string }> {
  const now = input.now ?? new Date().toISOString();
  return db.transaction().execute(async (trx) => {
    const realm = await createRealmRow(trx, input.realmName, null, now);
    const identity = await createIdentity(trx, {
      username: input.username,
      userType: 'service',
      realmId: realm.id,
      displayName: 'Bootstrap service identity',
      now,
    });
    await upsertMember(trx, { realm_id: realm.id, identity_id: identity.id, role: 'owner', now });
    await setRealmCreator(trx, realm.id, identity.id);
    const credentials = await issueKeyPair(trx, {
      identityId: identity.id,
      realmId: realm.id,
      name: 'bootstrap',
      expiresAt: null,
      now,
    });
    return {
      realmId: realm.id,
      identityId: identity.id,
      accessKey: credentials.access_key,
      secretKey: credentials.secret_key,
    };
  });
}

/**
 * On the first start of an empty database: creates the first realm and its owner service identity exactly once
 * (a marker row decides, so concurrent instances and later starts create nothing). Undefined when nothing was created.
 */
export async function ensureFirstRealm(
  db: Kysely<EngineDb>,
): Promise<{ realmId: string; accessKey: string; secretKey: string } | undefined> {
  const now = new Date().toISOString();
  return db.transaction().execute(async (trx) => {
    if (!(await claimBootstrapMarker(trx, 'first_realm', now))) return undefined;
    if (await anyRealmExists(trx)) return undefined;
    const realm = await createRealmRow(trx, 'Default realm', null, now);
    const identity = await createIdentity(trx, {
      username: 'bootstrap-service',
      userType: 'service',
      realmId: realm.id,
      displayName: 'Bootstrap service identity',
      now,
    });
    await upsertMember(trx, { realm_id: realm.id, identity_id: identity.id, role: 'owner', now });
    const credentials = await issueKeyPair(trx, {
      identityId: identity.id,
      realmId: realm.id,
      name: 'first start',
      expiresAt: null,
      now,
    });
    return { realmId: realm.id, accessKey: credentials.access_key, secretKey: credentials.secret_key };
  });
}

/** Exchanges a key pair for a bearer token (401 for anything that is not an active pair of an active identity). */
export async function exchangeToken(rt: RuntimeContext, accessKey: string, secretKey: string) {
  const row = await findCredential(rt.db, accessKey);
  const now = rt.clock();
  // Compare digests in constant time even when the key is unknown, so timing does not tell the two apart. After a
  // rotation (integration clients) the previous secret also matches until its overlap window ends.
  const presented = createHash('sha256').update(secretKey).digest();
  const equal = (hex: string | null | undefined) => {
    const stored = Buffer.from(hex ?? '', 'hex');
    return stored.length === 32 && timingSafeEqual(presented, stored);
  };
  const current = equal(row?.secret_hash);
  const previous =
    equal(row?.previous_secret_hash) &&
    row?.previous_secret_expires_at != null &&
    new Date(toIsoString(row.previous_secret_expires_at)).getTime() > now;
  if (!row || !(current || previous)) throw RuntimeErrors.invalidCredentials();
  if (row.revoked_at !== null || row.identity_status !== 'active') throw RuntimeErrors.invalidCredentials();
  if (row.expires_at !== null && new Date(toIsoString(row.expires_at)).getTime() <= now)
    throw RuntimeErrors.invalidCredentials();
  if (row.realm_id !== null && (row.realm_status !== 'active' || !row.role)) throw RuntimeErrors.invalidCredentials();
  const issued = await rt.tokens.issue({
    identityId: row.identity_id,
    realmId: row.realm_id,
    userType: row.user_type,
    keyId: row.key_id,
  });
  return {
    access_token: issued.token,
    expires_in: issued.expiresIn,
    token_type: 'Bearer' as const,
    user_id: row.identity_id,
    realm_id: row.realm_id,
    user_type: row.user_type,
  };
}

/** Public sign-up (when enabled): an identity, an optional realm it owns, and its first key pair. */
export async function register(
  rt: RuntimeContext,
  input: { username: string; user_type?: 'user' | 'service' | undefined; realm_name?: string | undefined },
) {
  if (!rt.config.registrationEnabled) throw RuntimeErrors.registrationDisabled();
  const now = nowIso(rt);
  const userType = input.user_type ?? 'user';
  const result = await inTransaction(rt.engine, async (trx) => {
    const realm = input.realm_name ? await createRealmRow(trx, input.realm_name, null, now) : undefined;
    // A service identity is named in its realm's namespace; a realm-less service still gets a unique name.
    const identity = await createIdentity(trx, {
      username: input.username,
      userType,
      realmId: realm?.id ?? null,
      now,
    });
    if (realm) {
      await upsertMember(trx, { realm_id: realm.id, identity_id: identity.id, role: 'owner', now });
      await setRealmCreator(trx, realm.id, identity.id);
    }
    const credentials = await issueKeyPair(trx, {
      identityId: identity.id,
      realmId: realm?.id ?? null,
      name: 'registration',
      expiresAt: null,
      now,
    });
    return { identity, realm, credentials };
  });
  return {
    user: toIdentityView({ ...result.identity, ...(result.realm ? { role: 'owner' } : {}) }),
    realm: result.realm ? toRealmView(result.realm) : null,
    credentials: result.credentials,
  };
}

/** The caller's identity context (GET /auth/is-authenticated). */
export async function whoAmI(rt: RuntimeContext, principal: RuntimePrincipal) {
  const identity = await findIdentity(rt.db, principal.identityId);
  if (!identity) throw RuntimeErrors.tokenInvalid();
  return {
    authenticated: true as const,
    user_id: identity.id,
    username: identity.username,
    user_type: identity.user_type,
    display_name: identity.display_name,
    realm_id: principal.realmId,
    role: principal.role,
    key_id: principal.keyId,
    expires_at: new Date(principal.tokenExpiresAt).toISOString(),
  };
}

/** A new key pair for the caller, for its token's realm or another realm it is a member of. */
export async function createKeysForCaller(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: { name?: string | undefined; realm_id?: string | undefined; expires_at?: string | undefined },
): Promise<CredentialsView> {
  const realmId = input.realm_id?.toLowerCase() ?? principal.realmId;
  if (realmId !== null && realmId !== principal.realmId) {
    // Another realm: only one the caller is an active member of; anything else is unknown.
    const member = await findMemberIdentity(rt.db, realmId, principal.identityId);
    const realm = member ? await findRealm(rt.db, realmId) : undefined;
    if (!member || realm?.status !== 'active') throw RuntimeErrors.notFound('Realm', realmId);
  }
  let expiresAt: string | null = null;
  if (input.expires_at !== undefined) {
    const at = Date.parse(input.expires_at);
    if (!Number.isFinite(at) || at <= rt.clock()) throw RuntimeErrors.invalid('expires_at must be in the future');
    expiresAt = new Date(at).toISOString();
  }
  if ((await countActiveKeys(rt.db, principal.identityId)) >= MAX_KEYS_PER_IDENTITY)
    throw RuntimeErrors.limit(
      `An identity holds at most ${MAX_KEYS_PER_IDENTITY} key pairs that are not revoked: revoke one first`,
    );
  const now = nowIso(rt);
  return inTransaction(rt.engine, (trx) =>
    issueKeyPair(trx, { identityId: principal.identityId, realmId, name: input.name ?? 'key pair', expiresAt, now }),
  );
}

export async function listCallerKeys(rt: RuntimeContext, principal: RuntimePrincipal) {
  const rows = await listAccessKeys(rt.db, principal.identityId);
  const now = rt.clock();
  return { data: rows.map((row) => keyView(row, now)) };
}

export async function revokeCallerKey(rt: RuntimeContext, principal: RuntimePrincipal, keyId: string) {
  const key = await findAccessKey(rt.db, principal.identityId, keyId);
  if (!key) throw RuntimeErrors.notFound('Key', keyId);
  const now = nowIso(rt);
  await inTransaction(rt.engine, (trx) => revokeAccessKey(trx, principal.identityId, keyId, now));
  await rt.principals.invalidate();
  const after = await findAccessKey(rt.db, principal.identityId, keyId);
  return keyView(after!, rt.clock());
}

/** A new realm owned by the caller (any user or service identity; agents cannot create realms). */
export async function createRealm(rt: RuntimeContext, principal: RuntimePrincipal, input: { name: string }) {
  if (principal.userType === 'agent') throw RuntimeErrors.forbidden('agent', 'creating realms');
  if ((await countOwnedRealms(rt.db, principal.identityId)) >= 50)
    throw RuntimeErrors.limit('An identity owns at most 50 realms');
  const now = nowIso(rt);
  const realm = await inTransaction(rt.engine, async (trx) => {
    const row = await createRealmRow(trx, input.name, principal.identityId, now);
    await upsertMember(trx, { realm_id: row.id, identity_id: principal.identityId, role: 'owner', now });
    return row;
  });
  return { ...toRealmView(realm), role: 'owner' };
}

/** The path's realm id, which must be the token's realm: any other id behaves as unknown (404). */
export function requireOwnRealm(principal: RuntimePrincipal, realmId: string): string {
  if (principal.realmId === null || realmId.toLowerCase() !== principal.realmId)
    throw RuntimeErrors.notFound('Realm', realmId);
  return principal.realmId;
}

export async function getMembers(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  realmId: string,
  limit: number,
  cursor: string | undefined,
) {
  requireOwnRealm(principal, realmId);
  const realm = requirePermission(principal, 'config:read');
  const rows = await listMembers(rt.db, realm, limit, cursorAfterId('members', cursor));
  return idPage('members', rows, limit, (row) => toIdentityView(row));
}

/** Adds a member (a user by id or username, or an identity of the realm) or changes its role. */
export async function addMember(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  realmId: string,
  input: { identity_id?: string | undefined; username?: string | undefined; role: Role },
) {
  requireOwnRealm(principal, realmId);
  const realm = requirePermission(principal, 'realm:manage');
  requireGrantable(principal, input.role);
  if ((input.identity_id === undefined) === (input.username === undefined))
    throw RuntimeErrors.invalid('Send exactly one of identity_id and username');
  let identity: IdentityRow | undefined;
  if (input.identity_id !== undefined) {
    identity = await findIdentity(rt.db, input.identity_id.toLowerCase());
    // Agent and service identities of other realms are never visible.
    if (identity && identity.user_type !== 'user' && identity.realm_id !== realm) identity = undefined;
  } else {
    identity = await findIdentityByUsernameKey(rt.db, usernameKey('user', input.username!, null));
  }
  if (identity?.status !== 'active') throw RuntimeErrors.notFound('Identity', input.identity_id ?? input.username);
  const now = nowIso(rt);
  await inTransaction(rt.engine, async (trx) => {
    const current = await findMemberIdentity(trx, realm, identity.id);
    if (current) {
      // Changing an existing role: the caller must outrank or equal it, and the last owner stays.
      requireGrantable(principal, current.role as Role);
      if (current.role === 'owner' && input.role !== 'owner' && (await countOwners(trx, realm)) <= 1)
        throw RuntimeErrors.lastOwner();
    }
    await upsertMember(trx, { realm_id: realm, identity_id: identity.id, role: input.role, now });
  });
  await rt.principals.invalidate();
  const member = await findMemberIdentity(rt.db, realm, identity.id);
  return toIdentityView(member!);
}

/** An agent or service identity in the realm, optionally with its first key pair. */
export async function createRealmIdentity(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  realmId: string,
  userType: 'agent' | 'service',
  input: {
    username: string;
    display_name?: string | undefined;
    role?: Role | undefined;
    metadata?: Record<string, unknown> | null | undefined;
    issue_credentials?: boolean | undefined;
  },
) {
  requireOwnRealm(principal, realmId);
  const realm = requirePermission(principal, 'realm:manage');
  const role = input.role ?? 'operator';
  requireGrantable(principal, role);
  const now = nowIso(rt);
  const withCredentials = input.issue_credentials ?? userType === 'service';
  const created = await inTransaction(rt.engine, async (trx) => {
    const identity = await createIdentity(trx, {
      username: input.username,
      userType,
      realmId: realm,
      displayName: input.display_name,
      metadata: input.metadata,
      now,
    });
    await upsertMember(trx, { realm_id: realm, identity_id: identity.id, role, now });
    const credentials = withCredentials
      ? await issueKeyPair(trx, { identityId: identity.id, realmId: realm, name: 'initial', expiresAt: null, now })
      : null;
    return { identity, credentials };
  });
  await rt.realms.invalidate(realm);
  return {
    identity: toIdentityView({ ...created.identity, role, member_since: now }),
    credentials: created.credentials,
  };
}

/** An identity the caller may see: itself, or a member of the token's realm; anything else is unknown. */
async function visibleIdentity(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const identityId = id.toLowerCase();
  if (principal.realmId !== null) {
    const member = await findMemberIdentity(rt.db, principal.realmId, identityId);
    if (member) return member;
  }
  if (identityId === principal.identityId) {
    const self = await findIdentity(rt.db, identityId);
    if (self) return self;
  }
  throw RuntimeErrors.notFound('User', id);
}

export async function getUser(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const identity = await visibleIdentity(rt, principal, id);
  if (identity.id !== principal.identityId) requirePermission(principal, 'config:read');
  return toIdentityView(identity);
}

/**
 * Updates an identity: the caller itself (display name, metadata), or, with realm:manage, an identity of the
 * realm (also its status; the status of a user from another home realm is not the realm's to change).
 */
export async function updateUser(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: {
    display_name?: string | null | undefined;
    metadata?: Record<string, unknown> | null | undefined;
    status?: 'active' | 'disabled' | undefined;
  },
  replace: boolean,
) {
  const identity = await visibleIdentity(rt, principal, id);
  const self = identity.id === principal.identityId;
  if (!self) requirePermission(principal, 'realm:manage');
  if (input.status !== undefined && input.status !== identity.status) {
    if (self) throw RuntimeErrors.forbidden(principal.role ?? 'none', 'changing your own status');
    if (identity.realm_id !== principal.realmId)
      throw RuntimeErrors.forbidden(principal.role ?? 'none', "changing the status of another realm's identity");
    if ('role' in identity && identity.role === 'owner') requireGrantable(principal, 'owner');
  }
  const changes: Parameters<typeof updateIdentity>[2] = { updated_at: nowIso(rt) };
  if (replace || input.display_name !== undefined) changes.display_name = input.display_name ?? null;
  if (replace || input.metadata !== undefined)
    changes.metadata = input.metadata ? JSON.stringify(input.metadata) : null;
  if (input.status !== undefined) changes.status = input.status;
  await inTransaction(rt.engine, (trx) => updateIdentity(trx, identity.id, changes));
  if (input.status !== undefined) await rt.principals.invalidate();
  return getUser(rt, principal, identity.id);
}

/**
 * Deletes an identity. Agent and service identities of the realm (and users whose home realm it is) are
 * deleted with their keys; a user from elsewhere is removed from the realm and its keys for the realm are
 * revoked. The last owner of a realm stays.
 */
export async function deleteUser(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const identity = await visibleIdentity(rt, principal, id);
  const self = identity.id === principal.identityId;
  if (!self) requirePermission(principal, 'realm:manage');
  const role = 'role' in identity ? (identity.role as Role) : undefined;
  if (!self && role) requireGrantable(principal, role);
  const now = nowIso(rt);
  await inTransaction(rt.engine, async (trx) => {
    const whole = self || identity.realm_id === principal.realmId;
    const realmsLosingOwner = whole
      ? await listOwnedRealmIds(trx, identity.id)
      : role === 'owner'
        ? [principal.realmId!]
        : [];
    for (const realm of realmsLosingOwner) if ((await countOwners(trx, realm)) <= 1) throw RuntimeErrors.lastOwner();
    if (whole) await deleteIdentity(trx, identity.id);
    else {
      await deleteMembership(trx, principal.realmId!, identity.id);
      await revokeRealmKeysOf(trx, identity.id, principal.realmId!, now);
    }
  });
  await rt.principals.invalidate();
  if (principal.realmId) await rt.realms.invalidate(principal.realmId);
}

export const DEFAULT_THEME = {
  brand_name: null,
  logo_url: null,
  primary_color: '#1F6FEB',
  secondary_color: '#0B1F33',
  accent_color: '#F2994A',
  background_color: '#FFFFFF',
  text_color: '#111111',
  font_family: 'system-ui, sans-serif',
  border_radius_px: 8,
  mode: 'auto',
  welcome_message: null,
};

export async function getTheme(rt: RuntimeContext, principal: RuntimePrincipal, realmId: string) {
  requireOwnRealm(principal, realmId);
  const realm = await findRealm(rt.db, requirePermission(principal, 'config:read'));
  if (!realm) throw RuntimeErrors.notFound('Realm', realmId);
  const stored = realm.theme === null ? {} : fromJsonColumn<Record<string, unknown>>(realm.theme);
  return {
    realm_id: realm.id,
    theme: { ...DEFAULT_THEME, ...stored },
    updated_at: realm.theme === null ? null : toIsoString(realm.updated_at),
  };
}

/** Replaces the presentation configuration; logo and favicon URLs must be public https URLs. */
export async function putTheme(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  realmId: string,
  theme: Record<string, unknown>,
) {
  requireOwnRealm(principal, realmId);
  const realm = requirePermission(principal, 'realm:manage');
  for (const field of ['logo_url', 'favicon_url']) {
    const value = theme[field];
    if (typeof value === 'string') {
      try {
        checkOutboundUrl(value, { allowPrivate: false });
      } catch {
        throw RuntimeErrors.invalid(`${field} must be a public https URL`);
      }
    }
  }
  const now = nowIso(rt);
  await inTransaction(rt.engine, (trx) => updateRealmTheme(trx, realm, JSON.stringify(theme), now));
  return getTheme(rt, principal, realmId);
}

/** True when the principal's role in its realm grants a permission (for handlers that branch on it). */
export { allows };
