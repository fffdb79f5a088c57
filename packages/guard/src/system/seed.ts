import { withTransaction } from '@keel/core';
import type { Kysely } from 'kysely';
import type { GuardDb } from '../db/schema.ts';
import { BUILTIN_PATTERNS } from '../detect/index.ts';
import { readMeta, writeMeta } from './meta-store.ts';

const SEEDED = 'default_patterns_seeded';

/**
 * Seeds the default pattern library on first start only: once seeded, a pattern the operator deleted or
 * changed stays that way across restarts. Safe when several instances start at once.
 */
export async function seedDefaultPatterns(db: Kysely<GuardDb>): Promise<boolean> {
  if (await readMeta(db, SEEDED)) return false;
  const now = new Date().toISOString();
  await withTransaction(db, async (trx) => {
    for (const pattern of BUILTIN_PATTERNS) {
      await trx
        .insertInto('pattern')
        .values({
          name: pattern.name,
          regex: pattern.regex,
          description: pattern.description,
          category: pattern.category,
          is_active: true,
          allow_threshold: null,
          block_threshold: null,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
    }
    await writeMeta(trx, SEEDED, now);
  });
  return true;
}
