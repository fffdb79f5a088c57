import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { GuardDb, ListItemTable } from '../db/schema.ts';

/** The two value lists: trusted values (ignored) and forbidden values (hard block). */
export type ListTable = 'allowlist_item' | 'blacklist_item';
export type ListItemRow = Selectable<ListItemTable>;

export function listItems(db: Executor<GuardDb>, table: ListTable): Promise<ListItemRow[]> {
  return db.selectFrom(table).selectAll().orderBy('id').execute();
}

export function insertListItem(
  db: Executor<GuardDb>,
  table: ListTable,
  row: Insertable<ListItemTable>,
): Promise<ListItemRow> {
  return db.insertInto(table).values(row).returningAll().executeTakeFirstOrThrow();
}

/** Deletes one item; resolves to false when there was none with this id. */
export async function deleteListItem(db: Executor<GuardDb>, table: ListTable, id: number): Promise<boolean> {
  const result = await db.deleteFrom(table).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
