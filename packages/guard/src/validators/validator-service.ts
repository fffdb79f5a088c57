import { type Executor, isUniqueViolation, toIsoString } from '@keel/core';
import type { Static } from 'typebox';
import type { GuardContext } from '../context.ts';
import type { GuardDb } from '../db/schema.ts';
import { GuardErrors } from '../errors.ts';
import { parseId } from '../ids.ts';
import { checkValidatorDefinition } from './compile-validator.ts';
import type { ValidatorInputSchema, ValidatorSchema } from './validator-schemas.ts';
import {
  deleteValidator,
  insertValidator,
  listValidators,
  type NewValidatorRow,
  updateValidatorByName,
  type ValidatorRow,
} from './validator-store.ts';

export type ValidatorInput = Static<typeof ValidatorInputSchema>;
export type ValidatorView = Static<typeof ValidatorSchema>;

function toView(row: ValidatorRow): ValidatorView {
  return {
    ID: row.id,
    name: row.name,
    type: row.type,
    rule: row.rule,
    description: row.description,
    expected_response: row.expected_response,
    CreatedAt: toIsoString(row.created_at),
    UpdatedAt: toIsoString(row.updated_at),
  };
}

/** Checks that the validator can run; throws a 400 naming what is wrong. */
export function validatorFields(input: ValidatorInput): Omit<NewValidatorRow, 'created_at' | 'updated_at'> {
  const expected = input.expected_response?.trim() ?? '';
  try {
    checkValidatorDefinition(input.type, input.rule, expected);
  } catch (error) {
    throw GuardErrors.invalidValidator(input.name, (error as Error).message);
  }
  return {
    name: input.name,
    type: input.type,
    rule: input.rule,
    description: input.description ?? '',
    expected_response: expected || (input.type === 'AI_PROMPT' ? 'YES' : input.type === 'REGEX' ? 'MATCH' : ''),
  };
}

export async function getValidators(ctx: GuardContext): Promise<ValidatorView[]> {
  return (await listValidators(ctx.db)).map(toView);
}

/** Stores a validator; a name already taken is a 409. Usable as a guardrail from the next request on. */
export async function createValidator(ctx: GuardContext, input: ValidatorInput): Promise<ValidatorView> {
  const now = new Date().toISOString();
  let row: ValidatorRow;
  try {
    row = await insertValidator(ctx.db, { ...validatorFields(input), created_at: now, updated_at: now });
  } catch (error) {
    if (isUniqueViolation(error)) throw GuardErrors.validatorExists(input.name);
    throw error;
  }
  await ctx.activeConfig.invalidate();
  return toView(row);
}

/** Inserts the validator or, when the name exists, replaces its definition (template import). */
export async function upsertValidator(
  db: Executor<GuardDb>,
  input: ValidatorInput,
  now: string,
): Promise<'created' | 'updated'> {
  const fields = validatorFields(input);
  const { name, ...changes } = fields;
  if (await updateValidatorByName(db, name, { ...changes, updated_at: now })) return 'updated';
  await insertValidator(db, { ...fields, created_at: now, updated_at: now });
  return 'created';
}

export async function removeValidator(ctx: GuardContext, rawId: string): Promise<void> {
  const id = parseId(rawId);
  if (!(await deleteValidator(ctx.db, id))) throw GuardErrors.validatorNotFound(id);
  await ctx.activeConfig.invalidate();
}
