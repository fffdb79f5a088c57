// The usage backfill migration: turns recorded before usage records existed become one record each (seed → up →
// assert), with the exact cost; executions without usage are skipped; a rerun adds nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type MigrationSet, migrateToLatest } from '@keel/core';
import { openTestDatabase } from '@keel/core/testing';
import type { Kysely } from 'kysely';
import * as backfill from '../src/db/migrations/2026_11_26_0031_backfill_usage_records.ts';
import { engineMigrations } from '../src/db/migrations/index.ts';
import type { EngineDb } from '../src/db/schema.ts';
import { newId } from '../src/ids.ts';
import { testDatabaseTargets } from './runtime-helper.ts';

const BEFORE_USAGE: MigrationSet = Object.fromEntries(
  Object.entries(engineMigrations).filter(([name]) => name < '2026_11_26_0030'),
);

for (const target of testDatabaseTargets()) {
  describe(`usage backfill migration (${target.dialect})`, () => {
    test('each earlier turn with usage becomes one usage record; a rerun adds nothing', async (t) => {
      const database = await openTestDatabase<EngineDb>(target, 'engine');
      t.after(() => database.close());
      const db = database.db as unknown as Kysely<any>;
      await migrateToLatest(db, BEFORE_USAGE);
      const realmId = newId();
      const turn = (usage: unknown, kind = 'chat') => ({
        id: newId(),
        realm_id: realmId,
        agent_id: newId(),
        session_id: null,
        flow_id: null,
        kind,
        mode: 'sync',
        status: 'succeeded',
        trace_id: 'trace',
        action_type: 'RESPOND',
        result: JSON.stringify({ routing: { model: 'gpt-4o-mini' } }),
        usage: usage === null ? null : JSON.stringify(usage),
        pinned: JSON.stringify({ provider_id: 'p-1' }),
        error_code: null,
        created_by: newId(),
        created_at: new Date().toISOString(),
        completed_at: new Date().toISOString(),
      });
      const rows = [
        turn({ input_tokens: 12, output_tokens: 5, cost: '0.000022', currency: 'USD' }),
        turn({ input_tokens: 100, output_tokens: 50, cost: '1.000000000001', currency: 'EUR' }, 'execute'),
        turn(null),
        turn({ input_tokens: 1, output_tokens: 1, cost: 'NaN', currency: 'USD' }),
      ];
      await db.insertInto('execution').values(rows).execute();

      await migrateToLatest(db, engineMigrations);
      const records = await db
        .selectFrom('usage_record')
        .selectAll()
        .select((eb) => eb.cast('cost_picos', 'text').as('cost_picos'))
        .where('realm_id', '=', realmId)
        .orderBy('source')
        .execute();
      assert.deepEqual(
        records.map((r) => [r.execution_id, r.source, r.cost_picos, r.currency, Number(r.input_tokens), r.name]),
        [
          [rows[0]!.id, 'chat', '22000000', 'USD', 12, 'gpt-4o-mini'],
          [rows[1]!.id, 'execute', '1000000000001', 'EUR', 100, 'gpt-4o-mini'],
        ],
      );
      assert.equal(records[0]!.provider_id, 'p-1');
      await backfill.up(db);
      const again = await db.selectFrom('usage_record').select('id').where('realm_id', '=', realmId).execute();
      assert.equal(again.length, 2);
      await backfill.down(db);
      assert.equal(
        (await db.selectFrom('usage_record').select('id').where('realm_id', '=', realmId).execute()).length,
        0,
      );
    });
  });
}
