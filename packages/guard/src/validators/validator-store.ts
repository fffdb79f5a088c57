import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { GuardDb, ValidatorTable } from '../db/schema.ts';

export type ValidatorRow = Selectable<ValidatorTable>;
export type NewValidatorRow = Insertable<ValidatorTable>;

export function listValidators(db: Executor<GuardDb>): Promise<ValidatorRow[]> {
  return db.selectFrom('validator').selectAll().orderBy('id').execute();
}

export function findValidatorByName(db: Executor<GuardDb>, name: string): Promise<ValidatorRow | undefined> {
  return db.selectFrom('validator').selectAll().where('name', '=', name).executeTakeFirst();
}

export function insertValidator(db: Executor<GuardDb>, row: NewValidatorRow): Promise<ValidatorRow> {
  return db.insertInto('validator').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Replaces the definition of the validator with this name, keeping its id and creation time. */
export function updateValidatorByName(
  db: Executor<GuardDb>,
  name: string,
  changes: Omit<NewValidatorRow, 'name' | 'created_at'>,
): Promise<ValidatorRow | undefined> {
  return db.updateTable('validator').set(changes).where('name', '=', name).returningAll().executeTakeFirst();
}

/** Deletes one validator; resolves to false when there was none with this id. */
export async function deleteValidator(db: Executor<GuardDb>, id: number): Promise<boolean> {
  const result = await db.deleteFrom('validator').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
