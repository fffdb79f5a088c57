import { withTransaction } from '@keel/core';
import type { Kysely } from 'kysely';
import type { GuardDb } from '../db/schema.ts';
import { BUILTIN_PATTERNS } from '../detect/index.ts';
import { readMeta, writeMeta } from './meta-store.ts';

const SEEDED = 'default_patterns_seeded';
/** Catalog releases after the first: their new built-ins are added to existing installs once (meta key per release). */
const LATER_RELEASES = [2, 3, 4];

/**
 * Seeds the default pattern library on first start only: once seeded, a pattern the operator deleted or
 * changed stays that way across restarts. Safe when several instances start at once.
 */
export async function seedDefaultPatterns(db: Kysely<GuardDb>): Promise<boolean> {
  if (await readMeta(db, SEEDED)) {
    await seedLaterReleases(db);
    return false;
  }
  await insertPatterns(db, BUILTIN_PATTERNS, [SEEDED, ...LATER_RELEASES.map(releaseKey)]);
  return true;
}

function releaseKey(release: number): string {
  return `default_patterns_release_${release}_seeded`;
}

/**
 * Built-ins added by a later catalog release reach an install seeded before it, once: a pattern the operator
 * deletes afterwards stays deleted, and a name the operator already uses is left alone.
 */
async function seedLaterReleases(db: Kysely<GuardDb>): Promise<void> {
  for (const release of LATER_RELEASES) {
    if (await readMeta(db, releaseKey(release))) continue;
    await insertPatterns(
      db,
      BUILTIN_PATTERNS.filter((p) => p.since === release),
      [releaseKey(release)],
    );
  }
}

async function insertPatterns(
  db: Kysely<GuardDb>,
  patterns: typeof BUILTIN_PATTERNS,
  metaKeys: string[],
): Promise<void> {
  const now = new Date().toISOString();
  await withTransaction(db, async (trx) => {
    for (const pattern of patterns) {
      await trx
        .insertInto('pattern')
        .values({
          name: pattern.name,
          regex: pattern.regex,
          description: pattern.description,
          category: pattern.category,
          is_active: pattern.defaultActive !== false,
          allow_threshold: null,
          block_threshold: null,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
    }
    for (const key of metaKeys) await writeMeta(trx, key, now);
  });
}
