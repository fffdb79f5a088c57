import { withTransaction } from '@keel/core';
import type { GuardContext } from '../context.ts';
import { type PatternInput, patternFields, upsertPattern } from '../patterns/pattern-service.ts';
import { upsertValidator, type ValidatorInput, validatorFields } from '../validators/validator-service.ts';

export interface TemplateInput {
  template: {
    name: string;
    description?: string | undefined;
    patterns?: PatternInput[] | undefined;
    validators?: ValidatorInput[] | undefined;
  };
}

export interface TemplateImportResult {
  message: string;
  name: string;
}

/**
 * Imports a template in one transaction: patterns and validators whose name exists are updated, the others
 * inserted. Every definition is checked before anything is written, and any failure leaves nothing behind.
 */
export async function importTemplate(ctx: GuardContext, input: TemplateInput): Promise<TemplateImportResult> {
  const { template } = input;
  const patterns = template.patterns ?? [];
  const validators = template.validators ?? [];
  // Fail fast with a 400 on the first bad definition, before the transaction opens.
  for (const pattern of patterns) patternFields(pattern);
  for (const validator of validators) validatorFields(validator);

  const now = new Date().toISOString();
  const counts = { created: 0, updated: 0 };
  await withTransaction(ctx.db, async (trx) => {
    for (const pattern of patterns) counts[await upsertPattern(trx, pattern, now)]++;
    for (const validator of validators) counts[await upsertValidator(trx, validator, now)]++;
  });
  await ctx.activeConfig.invalidate();
  return {
    message: `Template imported: ${patterns.length} patterns and ${validators.length} validators (${counts.created} created, ${counts.updated} updated)`,
    name: template.name,
  };
}
