import type { Executor } from '@keel/core';
import type { GuardDb } from '../db/schema.ts';

export async function readMeta(db: Executor<GuardDb>, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('guard_meta').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function writeMeta(db: Executor<GuardDb>, key: string, value: string): Promise<void> {
  await db
    .insertInto('guard_meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
