import { toIsoString } from '@keel/core';
import { type GeoPrincipal, holdsAll, type KeyScope } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import type { ApiKeyTable } from '../db/schema.ts';
import { GeoErrors } from '../errors.ts';
import { isUuid, normalizeUuid } from '../ids.ts';
import { issueApiKey, issueSiteToken } from '../tenancy/tenancy-service.ts';
import { findSiteToken, revokeSiteTokenRow } from '../tenancy/tenancy-store.ts';
import { findTenantKey, listTenantKeys, revokeKeyRow } from './key-store.ts';

/** Key management needs a tenant-scoped key that holds every permission (the "admin" key of bootstrap). */
export function requireKeyAdmin(principal: GeoPrincipal): void {
  if (principal.scope.type !== 'tenant' || !holdsAll(principal)) throw GeoErrors.tenantScopeRequired();
}

export function keySummary(row: ApiKeyTable, now: Date) {
  const expiresAt = row.expires_at === null ? null : toIsoString(row.expires_at);
  const status: 'active' | 'expired' | 'revoked' =
    row.revoked_at !== null ? 'revoked' : expiresAt !== null && new Date(expiresAt) <= now ? 'expired' : 'active';
  return {
    id: row.id,
    name: row.name,
    prefix: row.display_prefix,
    permissions: JSON.parse(row.permissions) as string[],
    scope: { type: row.scope_type, workspaceIds: JSON.parse(row.workspace_ids) as string[] },
    status,
    expiresAt,
    revokedAt: row.revoked_at === null ? null : toIsoString(row.revoked_at),
    createdAt: toIsoString(row.created_at),
  };
}

export async function listKeys(ctx: GeoContext, principal: GeoPrincipal, limit: number, cursor: string | undefined) {
  requireKeyAdmin(principal);
  const rows = await listTenantKeys(ctx.db, principal.tenantId, limit + 1, decodeCursor('key', cursor));
  const { rows: page, next } = pageOf('key', rows, limit);
  const now = ctx.now();
  return {
    items: page.map((row) => keySummary(row, now)),
    nextCursor: next,
  };
}

export interface CreateKeyInput {
  name: string;
  permissions: string[];
  scope: { type: 'tenant' | 'workspace' | 'workspaces'; workspaceIds?: string[] };
  expiresAt?: string | undefined;
}

export async function createKey(ctx: GeoContext, principal: GeoPrincipal, input: CreateKeyInput) {
  requireKeyAdmin(principal);
  const now = ctx.now();
  let expiresAt: Date | null = null;
  if (input.expiresAt !== undefined) {
    expiresAt = new Date(input.expiresAt);
    if (Number.isNaN(expiresAt.getTime()) || expiresAt <= now)
      throw GeoErrors.invalidScope('expiresAt must be a future ISO 8601 time');
  }
  for (const permission of input.permissions) {
    if (!principal.permissions.has(permission)) throw GeoErrors.keyEscalation(permission);
  }
  const ids = (input.scope.workspaceIds ?? []).map((id) => {
    if (!isUuid(id)) throw GeoErrors.invalidScope('scope.workspaceIds holds UUIDs');
    return normalizeUuid(id);
  });
  if (input.scope.type === 'tenant' && ids.length > 0)
    throw GeoErrors.invalidScope('A tenant scope names no workspaces');
  const scope: KeyScope =
    input.scope.type === 'tenant' ? { type: 'tenant' } : { type: input.scope.type, workspaceIds: ids };
  const { key, row } = await issueApiKey(
    ctx.db,
    { tenantId: principal.tenantId, name: input.name, permissions: input.permissions, scope, expiresAt },
    now,
  );
  return { ...keySummary(row, now), key };
}

export async function revokeKey(ctx: GeoContext, principal: GeoPrincipal, keyId: string): Promise<void> {
  requireKeyAdmin(principal);
  const id = isUuid(keyId) ? normalizeUuid(keyId) : undefined;
  const row = id ? await findTenantKey(ctx.db, principal.tenantId, id) : undefined;
  if (!row) throw GeoErrors.keyNotFound(keyId.slice(0, 40));
  await revokeKeyRow(ctx.db, principal.tenantId, row.id, ctx.now().toISOString());
  await ctx.cache.publish('geo:key-revoked', row.id);
}

export async function createSiteToken(
  ctx: GeoContext,
  principal: GeoPrincipal,
  input: { workspaceId: string; name: string },
) {
  requireKeyAdmin(principal);
  const { id, token } = await issueSiteToken(
    ctx.db,
    { tenantId: principal.tenantId, workspaceId: normalizeUuid(input.workspaceId), name: input.name },
    ctx.now(),
  );
  return { id, workspaceId: normalizeUuid(input.workspaceId), name: input.name, token };
}

export async function revokeSiteToken(ctx: GeoContext, principal: GeoPrincipal, tokenId: string): Promise<void> {
  requireKeyAdmin(principal);
  const row = isUuid(tokenId) ? await findSiteToken(ctx.db, normalizeUuid(tokenId)) : undefined;
  if (!row || row.tenant_id !== principal.tenantId) throw GeoErrors.keyNotFound(tokenId.slice(0, 40));
  await revokeSiteTokenRow(ctx.db, row.id, ctx.now().toISOString());
  await ctx.cache.publish('geo:site-token-revoked', row.id);
}
