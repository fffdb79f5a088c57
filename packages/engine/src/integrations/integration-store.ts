import type { Executor } from '@keel/core';
import type { Insertable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';

type Timestamp = string | Date;

export interface IntegrationClientTable {
  id: string;
  realm_id: string;
  name: string;
  description: string | null;
  /** The client's service identity and its one key pair (access_key row). */
  identity_id: string;
  key_id: string;
  role: string;
  secret_rotated_at: Timestamp | null;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    integration_client: IntegrationClientTable;
  }
}

export async function insertIntegrationClient(
  db: Executor<EngineDb>,
  row: Insertable<IntegrationClientTable>,
): Promise<void> {
  await db.insertInto('integration_client').values(row).execute();
}

function clientsWithKeys(db: Executor<EngineDb>) {
  return db
    .selectFrom('integration_client as c')
    .innerJoin('access_key as k', 'k.id', 'c.key_id')
    .select([
      'c.id',
      'c.realm_id',
      'c.name',
      'c.description',
      'c.identity_id',
      'c.key_id',
      'c.role',
      'c.secret_rotated_at',
      'c.created_by',
      'c.created_at',
      'c.updated_at',
      'k.access_key',
      'k.previous_secret_expires_at',
      'k.last_used_at',
      'k.revoked_at',
    ]);
}

export type IntegrationClientRow = NonNullable<Awaited<ReturnType<typeof findIntegrationClient>>>;

/** A realm's client by id, with its key pair's public key and standing. */
export function findIntegrationClient(db: Executor<EngineDb>, realmId: string, id: string) {
  return clientsWithKeys(db).where('c.realm_id', '=', realmId).where('c.id', '=', id).executeTakeFirst();
}

/** Whether the realm has a client with this name. */
export async function integrationClientNameTaken(db: Executor<EngineDb>, realmId: string, name: string) {
  const row = await db
    .selectFrom('integration_client')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row !== undefined;
}

/** The realm's clients, newest id first, before `afterId`, at most `limit`. */
export function listIntegrationClients(
  db: Executor<EngineDb>,
  realmId: string,
  afterId: string | undefined,
  limit: number,
) {
  let q = clientsWithKeys(db).where('c.realm_id', '=', realmId);
  if (afterId) q = q.where('c.id', '<', afterId);
  return q.orderBy('c.id', 'desc').limit(limit).execute();
}

export async function markClientRotated(db: Executor<EngineDb>, id: string, now: string): Promise<void> {
  await db
    .updateTable('integration_client')
    .set({ secret_rotated_at: now, updated_at: now })
    .where('id', '=', id)
    .execute();
}

export async function updateIntegrationClient(
  db: Executor<EngineDb>,
  id: string,
  set: { description: string | null; role: string; updated_at: string },
): Promise<void> {
  await db.updateTable('integration_client').set(set).where('id', '=', id).execute();
}

/** Deletes a client's record (its identity, key pair and membership go with deleteIdentity). */
export async function deleteIntegrationClientRow(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('integration_client').where('id', '=', id).execute();
}
