import type { Executor } from '@keel/core';
import type { Selectable } from 'kysely';
import { param, preparedQuery } from '../db/prepared.ts';
import type { EngineDb } from '../db/schema.ts';

type Timestamp = string | Date;

export interface RuntimeWebhookTable {
  id: string;
  realm_id: string;
  url: string;
  description: string | null;
  /** JSON array of the selected event names (or `*`). */
  events: unknown;
  signing_secret_sealed: string;
  active: boolean | number;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    runtime_webhook: RuntimeWebhookTable;
  }
}

export type RuntimeWebhookRow = Selectable<RuntimeWebhookTable>;

/** Outbox targets of runtime webhooks are `runtime:<id>` (catalog destinations use their bare id). */
export const RUNTIME_TARGET_PREFIX = 'runtime:';

export async function insertRuntimeWebhook(db: Executor<EngineDb>, row: RuntimeWebhookRow): Promise<void> {
  await db.insertInto('runtime_webhook').values(row).execute();
}

/** The realm's webhook with this id. */
export function findRuntimeWebhook(db: Executor<EngineDb>, realmId: string, id: string) {
  return db
    .selectFrom('runtime_webhook')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A webhook by id, whatever its realm (the delivery worker's lookup). */
export function findRuntimeWebhookById(db: Executor<EngineDb>, id: string) {
  return db.selectFrom('runtime_webhook').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countRuntimeWebhooks(db: Executor<EngineDb>, realmId: string): Promise<number> {
  const row = await db
    .selectFrom('runtime_webhook')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The realm's webhooks, newest id first, before `afterId`, at most `limit`. */
export function listRuntimeWebhooks(
  db: Executor<EngineDb>,
  realmId: string,
  afterId: string | undefined,
  limit: number,
) {
  let q = db.selectFrom('runtime_webhook').selectAll().where('realm_id', '=', realmId);
  if (afterId) q = q.where('id', '<', afterId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

export async function deleteRuntimeWebhookRow(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('runtime_webhook').where('id', '=', id).execute();
}

/** Every turn asks this (for its one realm), so it is compiled once. */
const activeWebhooksOfOne = preparedQuery((db) =>
  db
    .selectFrom('runtime_webhook')
    .select(['id', 'realm_id', 'events'])
    .where('realm_id', '=', param('realmId'))
    .where('active', '=', true),
);

/** The active webhooks of these realms (id, realm, JSON list of selected events). */
export function listActiveRuntimeWebhooksOf(
  db: Executor<EngineDb>,
  realmIds: readonly string[],
): Promise<{ id: string; realm_id: string; events: unknown }[]> {
  if (realmIds.length === 1) return activeWebhooksOfOne(db, { realmId: realmIds[0] });
  return db
    .selectFrom('runtime_webhook')
    .select(['id', 'realm_id', 'events'])
    .where('realm_id', 'in', realmIds)
    .where('active', '=', true)
    .execute();
}

export async function updateRuntimeWebhookRow(
  db: Executor<EngineDb>,
  id: string,
  set: Partial<Pick<RuntimeWebhookRow, 'description' | 'events' | 'active' | 'signing_secret_sealed'>> & {
    updated_at: string;
  },
): Promise<void> {
  await db.updateTable('runtime_webhook').set(set).where('id', '=', id).execute();
}
