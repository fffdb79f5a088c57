import type { Executor } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';

/** The stored response of an event already processed for this key, if any. */
export async function findReceipt(db: Executor<EngineDb>, keyId: string, eventId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_receipt')
    .select('response')
    .where('key_id', '=', keyId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return row?.response;
}

/** Stores an event's response as its receipt (unique per key and event id: a concurrent replay loses the race). */
export async function insertReceipt(
  db: Executor<EngineDb>,
  receipt: { keyId: string; eventId: string; response: string; createdAt: string },
): Promise<void> {
  await db
    .insertInto('webhook_receipt')
    .values({
      key_id: receipt.keyId,
      event_id: receipt.eventId,
      response: receipt.response,
      created_at: receipt.createdAt,
    })
    .execute();
}
