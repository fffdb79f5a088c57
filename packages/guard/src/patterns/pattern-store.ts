import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { GuardDb, PatternTable } from '../db/schema.ts';

export type PatternRow = Selectable<PatternTable>;
export type NewPatternRow = Insertable<PatternTable>;

/** Every pattern, oldest first. */
export function listPatterns(db: Executor<GuardDb>): Promise<PatternRow[]> {
  return db.selectFrom('pattern').selectAll().orderBy('id').execute();
}

export function findPatternByName(db: Executor<GuardDb>, name: string): Promise<PatternRow | undefined> {
  return db.selectFrom('pattern').selectAll().where('name', '=', name).executeTakeFirst();
}

export function insertPattern(db: Executor<GuardDb>, row: NewPatternRow): Promise<PatternRow> {
  return db.insertInto('pattern').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Replaces the definition of the pattern with this name, keeping its id and creation time. */
export function updatePatternByName(
  db: Executor<GuardDb>,
  name: string,
  changes: Omit<NewPatternRow, 'name' | 'created_at'>,
): Promise<PatternRow | undefined> {
  return db.updateTable('pattern').set(changes).where('name', '=', name).returningAll().executeTakeFirst();
}

/** Deletes one pattern; resolves to false when there was none with this id. */
export async function deletePattern(db: Executor<GuardDb>, id: number): Promise<boolean> {
  const result = await db.deleteFrom('pattern').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
