import type { Executor } from '@keel/core';
import type { Insertable, Selectable, Updateable } from 'kysely';
import { param, preparedQuery } from '../db/prepared.ts';
import type { EngineDb, WebhookDestinationTable } from '../db/schema.ts';

export type DestinationRow = Selectable<WebhookDestinationTable>;

/** The merchant's destination with this id. */
export function findMerchantDestination(db: Executor<EngineDb>, merchantId: string, id: string) {
  return db
    .selectFrom('webhook_destination')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** How many destinations the merchant has. */
export async function countDestinations(db: Executor<EngineDb>, merchantId: string): Promise<number> {
  const count = await db
    .selectFrom('webhook_destination')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', merchantId)
    .executeTakeFirstOrThrow();
  return Number(count.n);
}

export async function insertDestination(
  db: Executor<EngineDb>,
  row: Insertable<WebhookDestinationTable>,
): Promise<void> {
  await db.insertInto('webhook_destination').values(row).execute();
}

/** Updates a destination and returns the row as stored. */
export async function updateDestinationRow(
  db: Executor<EngineDb>,
  id: string,
  changes: Updateable<WebhookDestinationTable>,
): Promise<DestinationRow> {
  return (await db
    .updateTable('webhook_destination')
    .set(changes)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst())!;
}

export async function deleteDestinationRow(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('webhook_destination').where('id', '=', id).execute();
}

/** The merchant's destinations, oldest first (at most 50 exist). */
export function listMerchantDestinations(db: Executor<EngineDb>, merchantId: string) {
  return db
    .selectFrom('webhook_destination')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .limit(50)
    .execute();
}

/** A destination's outbox messages, newest first, before the message id `before` (exclusive). */
export function listDestinationMessages(
  db: Executor<EngineDb>,
  page: { destinationId: string; status?: string | undefined; before?: string | undefined; limit: number },
) {
  let q = db.selectFrom('outbox_message').selectAll().where('target', '=', page.destinationId);
  if (page.status !== undefined) q = q.where('status', '=', page.status);
  if (page.before !== undefined) q = q.where('id', '<', page.before);
  return q
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

/** The delivery attempts of these messages, by attempt number. */
export function listAttemptsOf(db: Executor<EngineDb>, messageIds: string[]) {
  if (messageIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('outbox_attempt').selectAll().where('message_id', 'in', messageIds).orderBy('attempt').execute();
}

/** A destination by id, whoever owns it (the delivery worker's lookup). */
export function findDestinationById(db: Executor<EngineDb>, id: string): Promise<DestinationRow | undefined> {
  return db.selectFrom('webhook_destination').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every write asks this (usually for one merchant), so it is compiled once. */
const activeDestinationsOfOne = preparedQuery((db) =>
  db
    .selectFrom('webhook_destination')
    .select(['id', 'merchant_id', 'events'])
    .where('merchant_id', '=', param('merchantId'))
    .where('active', '=', true),
);

/** The active destinations of the merchants (id, owner and the JSON list of selected events). */
export async function listActiveDestinationsOf(
  db: Executor<EngineDb>,
  merchantIds: readonly string[],
): Promise<{ id: string; merchant_id: string; events: string }[]> {
  if (merchantIds.length === 1) return activeDestinationsOfOne(db, { merchantId: merchantIds[0] });
  return db
    .selectFrom('webhook_destination')
    .select(['id', 'merchant_id', 'events'])
    .where('merchant_id', 'in', merchantIds)
    .where('active', '=', true)
    .execute();
}
