// The built-in library reaches existing installs: patterns added by a later catalog release are seeded once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUILTIN_PATTERNS } from '../src/detect/index.ts';
import { seedDefaultPatterns } from '../src/system/seed.ts';
import { buildGuard, testDatabaseTargets } from './helper.ts';

const LATER = BUILTIN_PATTERNS.filter((p) => p.since === 2).map((p) => p.name);

for (const target of testDatabaseTargets()) {
  describe(`built-in pattern releases (${target.dialect})`, () => {
    test('a fresh install has every built-in; MAC_ADDRESS is seeded inactive', async (t) => {
      const { db } = await buildGuard(t, target);
      const rows = await db.selectFrom('pattern').select(['name', 'is_active']).execute();
      for (const p of BUILTIN_PATTERNS)
        assert.ok(
          rows.some((r) => r.name === p.name),
          p.name,
        );
      assert.equal(Boolean(rows.find((r) => r.name === 'MAC_ADDRESS')!.is_active), false);
      assert.equal(Boolean(rows.find((r) => r.name === 'URL')!.is_active), true);
      for (const off of ['US_BANK_NUMBER', 'ABA_ROUTING_NUMBER', 'US_NPI', 'PERSON'])
        assert.equal(Boolean(rows.find((r) => r.name === off)!.is_active), false, off);
      assert.equal(Boolean(rows.find((r) => r.name === 'CRYPTO_WALLET')!.is_active), true);
    });

    test('an install seeded before release 3 gets its identifiers once, inactive ones inactive', async (t) => {
      const { db } = await buildGuard(t, target);
      const release3 = BUILTIN_PATTERNS.filter((p) => p.since === 3).map((p) => p.name);
      assert.ok(release3.includes('AU_TFN') && release3.includes('CRYPTO_WALLET'));
      await db.deleteFrom('pattern').where('name', 'in', release3).execute();
      await db.deleteFrom('guard_meta').where('key', '=', 'default_patterns_release_3_seeded').execute();
      assert.equal(await seedDefaultPatterns(db), false, 'not a first start');
      const rows = await db.selectFrom('pattern').select(['name', 'is_active']).execute();
      for (const name of release3)
        assert.ok(
          rows.some((r) => r.name === name),
          name,
        );
      assert.equal(Boolean(rows.find((r) => r.name === 'US_NPI')!.is_active), false);
      await db.deleteFrom('pattern').where('name', '=', 'KR_RRN').execute();
      await seedDefaultPatterns(db);
      const after = (await db.selectFrom('pattern').select('name').execute()).map((r) => r.name);
      assert.equal(after.includes('KR_RRN'), false, 'the operator deleted it');
    });

    test('an install seeded before release 4 gets PERSON once, inactive', async (t) => {
      const { db } = await buildGuard(t, target);
      assert.deepEqual(
        BUILTIN_PATTERNS.filter((p) => p.since === 4).map((p) => p.name),
        ['PERSON'],
      );
      await db.deleteFrom('pattern').where('name', '=', 'PERSON').execute();
      await db.deleteFrom('guard_meta').where('key', '=', 'default_patterns_release_4_seeded').execute();
      assert.equal(await seedDefaultPatterns(db), false, 'not a first start');
      const row = await db.selectFrom('pattern').select('is_active').where('name', '=', 'PERSON').executeTakeFirst();
      assert.equal(Boolean(row?.is_active), false);
    });

    test('an install seeded before release 2 gets its patterns once; one deleted afterwards stays deleted', async (t) => {
      const { db } = await buildGuard(t, target);
      await db.deleteFrom('pattern').where('name', 'in', LATER).execute();
      await db.deleteFrom('guard_meta').where('key', '=', 'default_patterns_release_2_seeded').execute();
      assert.equal(await seedDefaultPatterns(db), false, 'not a first start');
      const names = (await db.selectFrom('pattern').select('name').execute()).map((r) => r.name);
      for (const name of LATER) assert.ok(names.includes(name), name);
      await db.deleteFrom('pattern').where('name', '=', 'URL').execute();
      await seedDefaultPatterns(db);
      const after = (await db.selectFrom('pattern').select('name').execute()).map((r) => r.name);
      assert.equal(after.includes('URL'), false, 'the operator deleted it');
    });
  });
}
