import type { Executor } from '@keel/core';
import type { Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { PromptTable } from '../runtime/db-tables.ts';

export type PromptRow = Selectable<PromptTable>;

/** A prompt version of the realm by id. */
export function findPromptRow(db: Executor<EngineDb>, realmId: string, id: string): Promise<PromptRow | undefined> {
  return db
    .selectFrom('prompt')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
}

/** The highest version number of the prompt `key` (0 when it has none). */
export async function latestPromptVersion(db: Executor<EngineDb>, realmId: string, key: string): Promise<number> {
  const latest = await db
    .selectFrom('prompt')
    .select((eb) => eb.fn.max('version').as('v'))
    .where('realm_id', '=', realmId)
    .where('key', '=', key)
    .executeTakeFirst();
  return Number(latest?.v ?? 0);
}

/** Stores a prompt version. */
export async function insertPrompt(db: Executor<EngineDb>, row: PromptRow): Promise<void> {
  await db.insertInto('prompt').values(row).execute();
}

/** Sets fields of a prompt version. */
export async function updatePromptRow(db: Executor<EngineDb>, id: string, changes: Partial<PromptRow>): Promise<void> {
  await db.updateTable('prompt').set(changes).where('id', '=', id).execute();
}

/** Makes `row` the active version of its key: the key's other active versions become inactive. */
export async function activatePromptRow(db: Executor<EngineDb>, row: PromptRow, now: string): Promise<void> {
  await db
    .updateTable('prompt')
    .set({ is_active: false, updated_at: now })
    .where('realm_id', '=', row.realm_id)
    .where('key', '=', row.key)
    .where('id', '!=', row.id)
    .where('is_active', '=', true)
    .execute();
  await db
    .updateTable('prompt')
    .set({ is_active: true, activated_at: row.activated_at ?? now, updated_at: now })
    .where('id', '=', row.id)
    .execute();
}

/** Deletes a prompt version. */
export async function deletePromptRow(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('prompt').where('id', '=', id).execute();
}

/** Prompt versions of the realm, newest id first, at most `limit`. */
export function listPromptRows(
  db: Executor<EngineDb>,
  realmId: string,
  filter: { afterId?: string | undefined; key?: string | undefined; isActive?: boolean | undefined },
  limit: number,
): Promise<PromptRow[]> {
  let q = db.selectFrom('prompt').selectAll().where('realm_id', '=', realmId);
  if (filter.afterId) q = q.where('id', '<', filter.afterId);
  if (filter.key) q = q.where('key', '=', filter.key);
  if (filter.isActive !== undefined) q = q.where('is_active', '=', filter.isActive);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** The number of agents whose system prompt is a version of the key `key` (they run its active version). */
export async function countAgentsUsingPromptKey(db: Executor<EngineDb>, realmId: string, key: string): Promise<number> {
  const row = await db
    .selectFrom('agent_config as a')
    .innerJoin('prompt as p', 'p.id', 'a.system_prompt_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('a.realm_id', '=', realmId)
    .where('p.key', '=', key)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The number of agents whose system prompt is the version `promptId`. */
export async function countAgentsUsingPrompt(
  db: Executor<EngineDb>,
  realmId: string,
  promptId: string,
): Promise<number> {
  const row = await db
    .selectFrom('agent_config')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('system_prompt_id', '=', promptId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The active version of the key of prompt `id`, or undefined when the prompt or an active version is missing. */
export function findActivePromptOfKey(db: Executor<EngineDb>, realmId: string, id: string) {
  return db
    .selectFrom('prompt as p')
    .innerJoin('prompt as active', (join) =>
      join.onRef('active.realm_id', '=', 'p.realm_id').onRef('active.key', '=', 'p.key'),
    )
    .select(['active.id', 'active.key', 'active.version', 'active.content', 'active.variables'])
    .where('p.realm_id', '=', realmId)
    .where('p.id', '=', id)
    .where('active.is_active', '=', true)
    .executeTakeFirst();
}
