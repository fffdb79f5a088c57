import { bearerToken, sha256Hex, toIsoString } from '@keel/core';
import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { GeoContext } from '../context.ts';
import { GeoErrors } from '../errors.ts';
import { isUuid, normalizeUuid } from '../ids.ts';
import { findKeyByHash } from '../keys/key-store.ts';
import { findWorkspaceTenant } from '../tenancy/tenancy-store.ts';
import { type GeoPrincipal, holds, type KeyScope } from './permissions.ts';

declare module 'fastify' {
  interface FastifyRequest {
    geoPrincipal?: GeoPrincipal;
  }
}

/** The API key a request presents: `Authorization: Bearer <key>` or `x-api-key: <key>`. */
export function presentedApiKey(request: FastifyRequest): string | undefined {
  const bearer = bearerToken(
    typeof request.headers.authorization === 'string' ? request.headers.authorization : undefined,
  );
  if (bearer) return bearer;
  const header = request.headers['x-api-key'];
  return typeof header === 'string' && header.length > 0 && header.length <= 200 ? header.trim() : undefined;
}

/**
 * Identifies the caller's API key (only its SHA-256 is stored): 401 when missing, unknown or revoked, 403 when
 * expired (the spec's "expired authorization"), so a revoked key never learns it once existed.
 */
export async function authenticateApiKey(ctx: GeoContext, request: FastifyRequest): Promise<GeoPrincipal> {
  const key = presentedApiKey(request);
  if (!key || key.length > 200) throw withChallenge(GeoErrors.unauthorized());
  const hash = sha256Hex(key);
  const directory = keyDirectories.get(ctx) ?? createKeyDirectory(ctx);
  const row = await directory.lookup(hash);
  if (!row || row.revoked_at !== null) throw withChallenge(GeoErrors.unauthorized());
  if (row.expires_at !== null && new Date(toIsoString(row.expires_at)).getTime() <= ctx.now().getTime()) {
    throw GeoErrors.keyExpired();
  }
  const workspaceIds = JSON.parse(row.workspace_ids) as string[];
  const scope: KeyScope =
    row.scope_type === 'tenant'
      ? { type: 'tenant' }
      : { type: row.scope_type as 'workspace' | 'workspaces', workspaceIds };
  const principal: GeoPrincipal = {
    keyId: row.id,
    tenantId: row.tenant_id,
    permissions: new Set(JSON.parse(row.permissions) as string[]),
    scope,
  };
  request.geoPrincipal = principal;
  knownKeyHashes.set(hash, true);
  return principal;
}

/** Hashes of keys that authenticated recently (bounded): the rate limiter gives only these their own budget. */
const knownKeyHashes = new LRUCache<string, true>({ max: 10_000, ttl: 10 * 60_000 });

export function isKnownKeyHash(hash: string): boolean {
  return knownKeyHashes.has(hash);
}

type KeyRow = NonNullable<Awaited<ReturnType<typeof findKeyByHash>>>;

/**
 * Keys by hash, remembered for two seconds (bounded) so a busy client costs no lookup per request. A revocation
 * drops the cache on every instance at once (pub/sub), so revoked keys stop working on the next request; expiry
 * is checked against the clock on every request.
 */
function createKeyDirectory(ctx: GeoContext) {
  const cache = new LRUCache<string, KeyRow | false>({ max: 10_000, ttl: 2000 });
  void ctx.cache.subscribe('geo:key-revoked', () => cache.clear());
  const directory = {
    async lookup(hash: string): Promise<KeyRow | undefined> {
      const cached = cache.get(hash);
      if (cached !== undefined) return cached === false ? undefined : cached;
      const row = await findKeyByHash(ctx.db, hash);
      cache.set(hash, row ?? false);
      return row;
    },
  };
  keyDirectories.set(ctx, directory);
  return directory;
}
const keyDirectories = new WeakMap<GeoContext, { lookup(hash: string): Promise<KeyRow | undefined> }>();

function withChallenge<E extends Error>(error: E): E {
  return Object.assign(error, { headers: { 'www-authenticate': 'Bearer realm="keel-geo"' } });
}

/** Throws the 403 for a missing permission. */
export function requirePermission(principal: GeoPrincipal, permission: string): void {
  if (!holds(principal, permission)) throw GeoErrors.forbidden(permission);
}

/** Workspace id → tenant id never changes, so a lookup is remembered (bounded). */
const workspaceTenants = new LRUCache<string, string>({ max: 50_000 });

/**
 * Checks on the server that the workspace belongs to the key's tenant and lies in the key's scope. Another
 * tenant's workspace, one outside the scope and one that does not exist get the same 403.
 */
export async function requireWorkspace(ctx: GeoContext, principal: GeoPrincipal, workspaceId: string): Promise<string> {
  if (!isUuid(workspaceId)) throw GeoErrors.workspaceDenied();
  const id = normalizeUuid(workspaceId);
  if (principal.scope.type !== 'tenant' && !principal.scope.workspaceIds.includes(id))
    throw GeoErrors.workspaceDenied();
  let tenant = workspaceTenants.get(id);
  if (tenant === undefined) {
    tenant = await findWorkspaceTenant(ctx.db, id);
    if (tenant !== undefined) workspaceTenants.set(id, tenant);
  }
  if (tenant !== principal.tenantId) throw GeoErrors.workspaceDenied();
  return id;
}
