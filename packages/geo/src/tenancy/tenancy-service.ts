import { randomBytes } from 'node:crypto';
import { type Executor, generateKey, type SecretBox, sha256Hex, withTransaction } from '@keel/core';
import type { Kysely } from 'kysely';
import { GEO_PERMISSIONS, type KeyScope } from '../auth/permissions.ts';
import type { GeoDb } from '../db/schema.ts';
import { GeoErrors } from '../errors.ts';
import { uuidv7 } from '../ids.ts';
import { insertKey } from '../keys/key-store.ts';
import {
  findOrganization,
  findWorkspace,
  firstOrganization,
  insertOrganization,
  insertSiteToken,
  insertTenant,
  insertWorkspace,
} from './tenancy-store.ts';

export const API_KEY_PREFIX = 'geo';
export const SITE_TOKEN_PREFIX = 'geosite';

/** Creates a tenant and its first organization. */
export async function createTenant(
  db: Executor<GeoDb>,
  input: { name: string; organizationName?: string },
  now = new Date(),
) {
  const tenantId = uuidv7();
  const organizationId = uuidv7();
  const at = now.toISOString();
  await insertTenant(db, { id: tenantId, name: input.name, created_at: at });
  await insertOrganization(db, {
    id: organizationId,
    tenant_id: tenantId,
    name: input.organizationName ?? input.name,
    created_at: at,
  });
  return { tenantId, organizationId };
}

/** Creates a workspace in an organization of the tenant (the tenant's first one when none is named). */
export async function createWorkspace(
  db: Executor<GeoDb>,
  input: { tenantId: string; organizationId?: string; name: string; timezone?: string },
  secrets: SecretBox,
  now = new Date(),
) {
  const organization = input.organizationId
    ? await findOrganization(db, input.organizationId)
    : await firstOrganization(db, input.tenantId);
  if (!organization || organization.tenant_id !== input.tenantId)
    throw GeoErrors.invalidScope('The organization does not belong to the tenant');
  const timezone = input.timezone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw GeoErrors.invalidScope(`Unknown time zone ${JSON.stringify(timezone)}`);
  }
  const workspaceId = uuidv7();
  await insertWorkspace(db, {
    id: workspaceId,
    tenant_id: input.tenantId,
    organization_id: organization.id,
    name: input.name,
    timezone,
    subject_secret: secrets.encrypt(randomBytes(32).toString('hex')),
    created_at: now.toISOString(),
  });
  return { workspaceId, organizationId: organization.id };
}

export interface NewKeyInput {
  tenantId: string;
  name: string;
  permissions: readonly string[];
  scope: KeyScope;
  expiresAt: Date | null;
}

/** Checks a key's scope against the tenant's workspaces: every named workspace must be the tenant's. */
export async function checkScope(db: Executor<GeoDb>, tenantId: string, scope: KeyScope): Promise<void> {
  if (scope.type === 'tenant') return;
  if (scope.type === 'workspace' && scope.workspaceIds.length !== 1)
    throw GeoErrors.invalidScope('A workspace scope names exactly one workspace');
  if (scope.workspaceIds.length === 0) throw GeoErrors.invalidScope('A custom scope names at least one workspace');
  for (const id of scope.workspaceIds) {
    const workspace = await findWorkspace(db, id);
    if (!workspace || workspace.tenant_id !== tenantId) throw GeoErrors.workspaceDenied();
  }
}

/** Issues an API key: the secret is returned once and only its SHA-256 is stored. */
export async function issueApiKey(db: Executor<GeoDb>, input: NewKeyInput, now = new Date()) {
  const unknown = input.permissions.filter((p) => !(GEO_PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length > 0)
    throw GeoErrors.invalidScope(`Unknown permission ${unknown[0]} (known: ${GEO_PERMISSIONS.join(', ')})`);
  await checkScope(db, input.tenantId, input.scope);
  const key = generateKey(API_KEY_PREFIX);
  const id = uuidv7();
  const permissions = [...new Set(input.permissions)].sort();
  const workspaceIds =
    input.scope.type === 'tenant' ? [] : [...new Set(input.scope.workspaceIds.map((w) => w.toLowerCase()))];
  const row = {
    id,
    tenant_id: input.tenantId,
    name: input.name,
    display_prefix: key.slice(0, 10),
    key_hash: sha256Hex(key),
    permissions: JSON.stringify(permissions),
    scope_type: input.scope.type,
    workspace_ids: JSON.stringify(workspaceIds),
    expires_at: input.expiresAt ? input.expiresAt.toISOString() : null,
    revoked_at: null,
    created_at: now.toISOString(),
  };
  await insertKey(db, row);
  return { key, row };
}

/** Issues a site token for one workspace (shown once, stored hashed). */
export async function issueSiteToken(
  db: Executor<GeoDb>,
  input: { tenantId: string; workspaceId: string; name: string },
  now = new Date(),
) {
  const workspace = await findWorkspace(db, input.workspaceId);
  if (!workspace || workspace.tenant_id !== input.tenantId) throw GeoErrors.workspaceDenied();
  const token = generateKey(SITE_TOKEN_PREFIX);
  const id = uuidv7();
  await insertSiteToken(db, {
    id,
    tenant_id: input.tenantId,
    workspace_id: workspace.id,
    name: input.name,
    display_prefix: token.slice(0, 12),
    token_hash: sha256Hex(token),
    revoked_at: null,
    created_at: now.toISOString(),
  });
  return { id, token };
}

export interface BootstrapResult {
  tenantId: string;
  workspaceId: string;
  workspaceIds: [string, string];
  keys: { read: string; write: string; signals: string; admin: string };
  siteToken: string;
}

/**
 * Creates a new tenant with two workspaces, four tenant-scoped keys (read; read+write; signals only; every
 * permission) and a site token for the first workspace: what scripts and tests start from.
 */
export async function bootstrapTenant(
  db: Kysely<GeoDb>,
  secrets: SecretBox,
  name = 'Bootstrap tenant',
): Promise<BootstrapResult> {
  return withTransaction(db, async (trx) => {
    const { tenantId, organizationId } = await createTenant(trx, { name });
    const first = await createWorkspace(trx, { tenantId, organizationId, name: 'Workspace A' }, secrets);
    const second = await createWorkspace(trx, { tenantId, organizationId, name: 'Workspace B' }, secrets);
    const scope: KeyScope = { type: 'tenant' };
    const key = async (keyName: string, permissions: readonly string[]) =>
      (await issueApiKey(trx, { tenantId, name: keyName, permissions, scope, expiresAt: null })).key;
    const keys = {
      read: await key('read', ['geo:read']),
      write: await key('write', ['geo:read', 'geo:write']),
      signals: await key('signals', ['geo:signals:write']),
      admin: await key('admin', GEO_PERMISSIONS),
    };
    const site = await issueSiteToken(trx, { tenantId, workspaceId: first.workspaceId, name: 'bootstrap site' });
    return {
      tenantId,
      workspaceId: first.workspaceId,
      workspaceIds: [first.workspaceId, second.workspaceId],
      keys,
      siteToken: site.token,
    };
  });
}
