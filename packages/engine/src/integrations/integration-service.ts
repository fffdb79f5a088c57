import { type Executor, generateKey, sha256Hex, toIsoString } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import { createIdentity, issueKeyPair } from '../identity/identity-service.ts';
import { deleteIdentity, rotateAccessKeySecret, upsertMember } from '../identity/identity-store.ts';
import { type Role, type RuntimePrincipal, requireGrantable, requirePermission } from '../identity/roles.ts';
import { isUuid, newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import {
  deleteIntegrationClientRow,
  findIntegrationClient,
  type IntegrationClientRow,
  insertIntegrationClient,
  integrationClientNameTaken,
  listIntegrationClients,
  markClientRotated,
} from './integration-store.ts';

/** Default and longest overlap after a rotation, in seconds: the previous secret works this long. */
export const DEFAULT_OVERLAP_SECONDS = 3600;
export const MAX_OVERLAP_SECONDS = 7 * 86_400;
/** Clients a realm may hold. */
export const MAX_CLIENTS_PER_REALM = 200;

export interface ClientInput {
  name: string;
  description?: string | undefined;
  role?: Exclude<Role, 'owner'> | undefined;
}

function iso(value: string | Date | null): string | null {
  return value === null ? null : toIsoString(value);
}

/** The API shape of a client (never a secret). */
export function toClientView(row: IntegrationClientRow, now: number) {
  const overlapEnds = iso(row.previous_secret_expires_at);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    role: row.role,
    client_id: row.access_key,
    identity_id: row.identity_id,
    status: row.revoked_at === null ? 'active' : 'revoked',
    secret_rotated_at: iso(row.secret_rotated_at),
    previous_secret_expires_at: overlapEnds !== null && Date.parse(overlapEnds) > now ? overlapEnds : null,
    last_used_at: iso(row.last_used_at),
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
  };
}

async function clientOf(rt: RuntimeContext, realmId: string, id: string): Promise<IntegrationClientRow> {
  const row = isUuid(id) ? await findIntegrationClient(rt.db, realmId, id.toLowerCase()) : undefined;
  if (!row) throw RuntimeErrors.notFound('Integration client', id);
  return row;
}

/**
 * Creates a client (admin+): a service identity of the realm with `role` (default operator, never above the
 * caller's, never owner) and one key pair. The secret is answered once and stored only as its SHA-256.
 */
export async function createClient(rt: RuntimeContext, principal: RuntimePrincipal, input: ClientInput) {
  const realmId = requirePermission(principal, 'realm:manage');
  const role = input.role ?? 'operator';
  requireGrantable(principal, role);
  const now = nowIso(rt);
  const id = newId();
  const credentials = await inTransaction(rt.engine, (trx) =>
    insertClientRecords(trx, { id, realmId, ...input, role, createdBy: principal.identityId, now }),
  );
  await rt.realms.invalidate(realmId);
  return { ...toClientView(await clientOf(rt, realmId, id), rt.clock()), client_secret: credentials.secret_key };
}

/**
 * Stores a client on `trx`: its service identity with `role` in the realm and one key pair (answered: the secret
 * is in it once). 409 RUNTIME_NAME_TAKEN when the realm has a client of that name.
 */
export async function insertClientRecords(
  trx: Executor<EngineDb>,
  input: {
    id: string;
    realmId: string;
    name: string;
    description?: string | null | undefined;
    role: string;
    createdBy: string;
    now: string;
  },
) {
  const { id, realmId, role, now } = input;
  if (await integrationClientNameTaken(trx, realmId, input.name))
    throw RuntimeErrors.nameTaken(`An integration client named ${input.name} exists in this realm`);
  const identity = await createIdentity(trx, {
    username: `integration-${id}`,
    userType: 'service',
    realmId,
    displayName: input.name,
    metadata: { integration_client_id: id },
    now,
  });
  await upsertMember(trx, { realm_id: realmId, identity_id: identity.id, role, now });
  const pair = await issueKeyPair(trx, {
    identityId: identity.id,
    realmId,
    name: `integration client ${input.name}`,
    expiresAt: null,
    now,
  });
  await insertIntegrationClient(trx, {
    id,
    realm_id: realmId,
    name: input.name,
    description: input.description ?? null,
    identity_id: identity.id,
    key_id: pair.key_id,
    role,
    secret_rotated_at: null,
    created_by: input.createdBy,
    created_at: now,
    updated_at: now,
  });
  return pair;
}

/** The realm's clients (admin+), newest first; never a secret. */
export async function listClients(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'realm:manage');
  const rows = await listIntegrationClients(
    rt.db,
    realmId,
    cursorAfterId('integration-clients', query.cursor),
    query.limit + 1,
  );
  const now = rt.clock();
  return idPage('integration-clients', rows, query.limit, (row) => toClientView(row, now));
}

/** One client of the realm (admin+); never a secret. Another realm's client is a 404 like an unknown one. */
export async function getClient(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'realm:manage');
  return toClientView(await clientOf(rt, realmId, id), rt.clock());
}

/**
 * Deletes (revokes) a client (admin+, and only a client whose role the caller could grant): its record, service
 * identity, membership and key pair go in one transaction, so its secrets (current and any in an overlap) stop
 * working for the token exchange at once, and the principals cache is invalidated on every instance, so bearer
 * tokens it already holds are refused on their next request. A second delete is a 404 (the client is gone).
 */
export async function deleteClient(rt: RuntimeContext, principal: RuntimePrincipal, id: string): Promise<void> {
  const realmId = requirePermission(principal, 'realm:manage');
  const client = await clientOf(rt, realmId, id);
  requireGrantable(principal, client.role as Role);
  await inTransaction(rt.engine, async (trx) => {
    await deleteIntegrationClientRow(trx, client.id);
    await deleteIdentity(trx, client.identity_id);
  });
  await rt.principals.invalidate();
  await rt.realms.invalidate(realmId);
}

/**
 * Rotates a client's secret (admin+): the new secret is answered once; the previous one keeps working for the
 * token exchange for `overlap_seconds` (default 1 hour, at most 7 days, 0 ends it at once). Rotating again during
 * an overlap ends the older secret at once: at most two secrets are ever valid. Tokens already issued live out
 * their own short lifetime.
 */
export async function rotateClientSecret(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: { overlap_seconds?: number | undefined },
) {
  const realmId = requirePermission(principal, 'realm:manage');
  const client = await clientOf(rt, realmId, id);
  if (client.revoked_at !== null) throw RuntimeErrors.conflict(`Integration client ${id} is revoked`);
  const overlap = input.overlap_seconds ?? DEFAULT_OVERLAP_SECONDS;
  const secret = generateKey('esk');
  const now = rt.clock();
  const at = new Date(now).toISOString();
  await inTransaction(rt.engine, async (trx) => {
    await rotateAccessKeySecret(
      trx,
      client.key_id,
      sha256Hex(secret),
      overlap === 0 ? null : new Date(now + overlap * 1000).toISOString(),
    );
    await markClientRotated(trx, client.id, at);
  });
  await rt.principals.invalidate();
  return { ...toClientView(await clientOf(rt, realmId, id), now), client_secret: secret, overlap_seconds: overlap };
}
