import { type Executor, isUniqueViolation, toBoolean, toIsoString } from '@keel/core';
import type { Static } from 'typebox';
import type { GuardContext } from '../context.ts';
import type { GuardDb } from '../db/schema.ts';
import { compileUserRegex } from '../detect/index.ts';
import { GuardErrors } from '../errors.ts';
import { parseId } from '../ids.ts';
import type { PatternInputSchema, PatternSchema } from './pattern-schemas.ts';
import {
  deletePattern,
  insertPattern,
  listPatterns,
  type NewPatternRow,
  type PatternRow,
  updatePatternByName,
} from './pattern-store.ts';

export type PatternInput = Static<typeof PatternInputSchema>;
export type PatternView = Static<typeof PatternSchema>;

export function toPatternView(row: PatternRow): PatternView {
  return {
    ID: row.id,
    Name: row.name,
    Regex: row.regex,
    Description: row.description,
    Category: row.category,
    IsActive: toBoolean(row.is_active),
    BlockThreshold: row.block_threshold,
    AllowThreshold: row.allow_threshold,
    CreatedAt: toIsoString(row.created_at),
    UpdatedAt: toIsoString(row.updated_at),
  };
}

/** Checks a pattern the way the engine will use it; throws a 400 naming what is wrong. */
export function patternFields(input: PatternInput): Omit<NewPatternRow, 'created_at' | 'updated_at'> {
  try {
    compileUserRegex(input.Regex);
  } catch (error) {
    throw GuardErrors.invalidRegex(input.Name, (error as Error).message);
  }
  const allow = input.AllowThreshold ?? null;
  const block = input.BlockThreshold ?? null;
  if (allow !== null && block !== null && allow > block) throw GuardErrors.invalidThresholds();
  return {
    name: input.Name,
    regex: input.Regex,
    description: input.Description ?? '',
    category: (input.Category ?? 'PII').toUpperCase(),
    is_active: input.IsActive ?? true,
    allow_threshold: allow,
    block_threshold: block,
  };
}

export async function getPatterns(ctx: GuardContext): Promise<PatternView[]> {
  return (await listPatterns(ctx.db)).map(toPatternView);
}

/** Stores a new pattern; a name already taken is a 409. Takes effect on the next request. */
export async function createPattern(ctx: GuardContext, input: PatternInput): Promise<PatternView> {
  const now = new Date().toISOString();
  let row: PatternRow;
  try {
    row = await insertPattern(ctx.db, { ...patternFields(input), created_at: now, updated_at: now });
  } catch (error) {
    if (isUniqueViolation(error)) throw GuardErrors.patternExists(input.Name);
    throw error;
  }
  await ctx.activeConfig.invalidate();
  return toPatternView(row);
}

/** Inserts the pattern or, when the name exists, replaces its definition (template import). */
export async function upsertPattern(
  db: Executor<GuardDb>,
  input: PatternInput,
  now: string,
): Promise<'created' | 'updated'> {
  const fields = patternFields(input);
  const { name, ...changes } = fields;
  const updated = await updatePatternByName(db, name, { ...changes, updated_at: now });
  if (updated) return 'updated';
  await insertPattern(db, { ...fields, created_at: now, updated_at: now });
  return 'created';
}

export async function removePattern(ctx: GuardContext, rawId: string): Promise<void> {
  const id = parseId(rawId);
  if (!(await deletePattern(ctx.db, id))) throw GuardErrors.patternNotFound(id);
  await ctx.activeConfig.invalidate();
}
