import { isUniqueViolation, toIsoString } from '@keel/core';
import type { GuardContext } from '../context.ts';
import { GuardErrors } from '../errors.ts';
import { parseId } from '../ids.ts';
import { deleteListItem, insertListItem, type ListItemRow, type ListTable, listItems } from './list-store.ts';

export interface ListItemView {
  ID: number;
  value: string;
  description: string;
  CreatedAt: string;
}

/** The two lists, with the name each has in URLs and messages. */
export const LISTS = {
  allowlist: { table: 'allowlist_item', label: 'allowlist' },
  blacklist: { table: 'blacklist_item', label: 'blacklist' },
} as const satisfies Record<string, { table: ListTable; label: string }>;
export type ListName = keyof typeof LISTS;

function toView(row: ListItemRow): ListItemView {
  return { ID: row.id, value: row.value, description: row.description, CreatedAt: toIsoString(row.created_at) };
}

export async function getListItems(ctx: GuardContext, list: ListName): Promise<ListItemView[]> {
  return (await listItems(ctx.db, LISTS[list].table)).map(toView);
}

/** Adds a value (matched case-insensitively; the same value twice is a 409). Takes effect on the next request. */
export async function addListItem(
  ctx: GuardContext,
  list: ListName,
  input: { value: string; description?: string | undefined },
): Promise<ListItemView> {
  const value = input.value.trim();
  let row: ListItemRow;
  try {
    row = await insertListItem(ctx.db, LISTS[list].table, {
      value,
      value_key: value.toLowerCase(),
      description: input.description ?? '',
      created_at: new Date().toISOString(),
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw GuardErrors.listItemExists(LISTS[list].label);
    throw error;
  }
  await ctx.activeConfig.invalidate();
  return toView(row);
}

export async function removeListItem(ctx: GuardContext, list: ListName, rawId: string): Promise<void> {
  const id = parseId(rawId);
  if (!(await deleteListItem(ctx.db, LISTS[list].table, id))) throw GuardErrors.listItemNotFound(LISTS[list].label, id);
  await ctx.activeConfig.invalidate();
}
