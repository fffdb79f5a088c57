import type { Executor } from '@keel/core';
import type { Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { AiProviderTable } from '../runtime/db-tables.ts';

export type ProviderRow = Selectable<AiProviderTable>;

/** A provider of the realm by id. */
export function findProviderRow(db: Executor<EngineDb>, realmId: string, id: string): Promise<ProviderRow | undefined> {
  return db
    .selectFrom('ai_provider')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
}

/** The realm's default provider. */
export function findDefaultProviderRow(db: Executor<EngineDb>, realmId: string): Promise<ProviderRow | undefined> {
  return db
    .selectFrom('ai_provider')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('is_default', '=', true)
    .executeTakeFirst();
}

/** Providers of the realm, newest id first, at most `limit`. */
export function listProviderRows(
  db: Executor<EngineDb>,
  realmId: string,
  filter: { afterId?: string | undefined; type?: string | undefined; isActive?: boolean | undefined },
  limit: number,
): Promise<ProviderRow[]> {
  let q = db.selectFrom('ai_provider').selectAll().where('realm_id', '=', realmId);
  if (filter.afterId) q = q.where('id', '<', filter.afterId);
  if (filter.type) q = q.where('type', '=', filter.type);
  if (filter.isActive !== undefined) q = q.where('is_active', '=', filter.isActive);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** Stores a provider (the unique realm + name index refuses a second of one name). */
export async function insertProvider(db: Executor<EngineDb>, row: ProviderRow): Promise<void> {
  await db.insertInto('ai_provider').values(row).execute();
}

/** Sets fields of a provider. */
export async function updateProviderRow(
  db: Executor<EngineDb>,
  id: string,
  changes: Partial<ProviderRow>,
): Promise<void> {
  await db.updateTable('ai_provider').set(changes).where('id', '=', id).execute();
}

/** Clears the default flag of every provider of the realm but `keepId`. */
export async function clearOtherDefaultProviders(
  db: Executor<EngineDb>,
  realmId: string,
  keepId: string,
  now: string,
): Promise<void> {
  await db
    .updateTable('ai_provider')
    .set({ is_default: false, updated_at: now })
    .where('realm_id', '=', realmId)
    .where('id', '!=', keepId)
    .where('is_default', '=', true)
    .execute();
}

/**
 * The number of agent configurations that use the provider `id`: directly, or — when `orDefault` (it is the realm
 * default) — by naming no provider.
 */
export async function countAgentsUsingProvider(
  db: Executor<EngineDb>,
  realmId: string,
  id: string,
  orDefault: boolean,
): Promise<number> {
  let users = db
    .selectFrom('agent_config')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId);
  users = orDefault
    ? users.where((eb) => eb.or([eb('ai_provider_id', '=', id), eb('ai_provider_id', 'is', null)]))
    : users.where('ai_provider_id', '=', id);
  return Number((await users.executeTakeFirstOrThrow()).n);
}

/** Deletes a provider. */
export async function deleteProviderRow(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('ai_provider').where('id', '=', id).execute();
}
