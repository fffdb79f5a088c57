import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Generated, Kysely } from 'kysely';
import {
  type AppError,
  CoreErrors,
  canonicalJson,
  createIdempotencyTable,
  type IdempotencyKeyTable,
  type MigrationSet,
  migrateToLatest,
  payloadHash,
  pruneIdempotencyKeys,
  runIdempotent,
} from '../src/index.ts';
import { openTestDatabase, testDatabaseTargets } from '../src/testing.ts';

interface Db {
  idempotency_key: IdempotencyKeyTable;
  counter: { id: Generated<number>; note: string };
}

const migrations: MigrationSet = {
  '0001': {
    async up(db: Kysely<any>) {
      await createIdempotencyTable(db);
      await db.schema
        .createTable('counter')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('note', 'text')
        .execute();
    },
  },
};

test('canonical JSON sorts keys and ignores whitespace and key order', () => {
  assert.equal(
    canonicalJson({ b: 1, a: [true, null, { d: 'x', c: 1.5 }] }),
    '{"a":[true,null,{"c":1.5,"d":"x"}],"b":1}',
  );
  assert.equal(payloadHash({ a: 1, b: 2 }), payloadHash(JSON.parse('{ "b": 2,\n "a": 1 }')));
  assert.notEqual(payloadHash({ a: 1 }), payloadHash({ a: '1' }));
});

for (const target of testDatabaseTargets()) {
  describe(`idempotency keys (${target.dialect})`, () => {
    async function setup(t: { after(fn: () => Promise<void>): void }) {
      const database = await openTestDatabase<Db>(target, 'core');
      t.after(() => database.close());
      await migrateToLatest(database.db, migrations);
      let next = 0;
      const write = (note: string) => async (trx: Kysely<Db>) => {
        next += 1;
        await trx.insertInto('counter').values({ id: next, note }).execute();
        return { statusCode: 201, body: { id: next, note } };
      };
      const count = async () => (await database.db.selectFrom('counter').selectAll().execute()).length;
      return { db: database.db, write, count };
    }

    test('the same key and payload replays the first response without a second write', async (t) => {
      const { db, write, count } = await setup(t);
      const first = await runIdempotent(db, { scope: 's', key: 'k1', payload: { a: 1 } }, write('one'));
      assert.deepEqual(first, { statusCode: 201, body: { id: 1, note: 'one' }, replayed: false });
      const again = await runIdempotent(db, { scope: 's', key: 'k1', payload: { a: 1 } }, write('two'));
      assert.deepEqual(again, { statusCode: 201, body: { id: 1, note: 'one' }, replayed: true });
      assert.equal(await count(), 1);
    });

    test('the same key with a different payload is a 409; another scope is independent', async (t) => {
      const { db, write, count } = await setup(t);
      await runIdempotent(db, { scope: 's', key: 'k', payload: { a: 1 } }, write('one'));
      await assert.rejects(
        runIdempotent(db, { scope: 's', key: 'k', payload: { a: 2 } }, write('two')),
        (e: AppError) => e.statusCode === 409 && e.code === 'IDEMPOTENCY_KEY_REUSED',
      );
      const other = await runIdempotent(db, { scope: 'other-tenant', key: 'k', payload: { a: 2 } }, write('three'));
      assert.equal(other.replayed, false);
      assert.equal(await count(), 2);
    });

    test('concurrent first uses produce one mutation; the others get 409 with Retry-After or the replay', async (t) => {
      const { db, count } = await setup(t);
      let writes = 0;
      const slow = async (trx: Kysely<Db>) => {
        writes += 1;
        await trx.insertInto('counter').values({ id: writes, note: 'x' }).execute();
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { statusCode: 201, body: { ok: true } };
      };
      const outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, () => runIdempotent(db, { scope: 's', key: 'race', payload: {} }, slow)),
      );
      assert.equal(writes, 1);
      assert.equal(await count(), 1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') {
          const error = outcome.reason as AppError;
          assert.equal(error.code, 'IDEMPOTENCY_KEY_IN_FLIGHT');
          assert.equal(error.headers?.['retry-after'], '1');
        }
      }
      assert.ok(outcomes.some((o) => o.status === 'fulfilled' && !o.value.replayed));
    });

    test('a 4xx outcome is stored and replayed; a 5xx releases the key and writes nothing', async (t) => {
      const { db, count } = await setup(t);
      const rejecting = async () => {
        throw CoreErrors.conflict('out of stock');
      };
      await assert.rejects(runIdempotent(db, { scope: 's', key: 'four', payload: {} }, rejecting), /out of stock/);
      const replay = await runIdempotent(db, { scope: 's', key: 'four', payload: {} }, async () => ({
        statusCode: 200,
        body: {},
      }));
      assert.deepEqual(replay, {
        statusCode: 409,
        body: { error: { code: 'CONFLICT', message: 'out of stock' } },
        replayed: true,
      });

      const failing = async (trx: Kysely<Db>) => {
        await trx.insertInto('counter').values({ id: 99, note: 'partial' }).execute();
        throw new Error('database went away');
      };
      await assert.rejects(runIdempotent(db, { scope: 's', key: 'five', payload: {} }, failing), /went away/);
      assert.equal(await count(), 0, 'the partial write was rolled back');
      const retried = await runIdempotent(db, { scope: 's', key: 'five', payload: {} }, async () => ({
        statusCode: 200,
        body: { ok: 1 },
      }));
      assert.equal(retried.replayed, false, 'the key was released for a retry');
    });

    test('an abandoned claim can be taken over; expired keys are pruned', async (t) => {
      const { db, write } = await setup(t);
      const old = new Date(Date.now() - 120_000).toISOString();
      await db
        .insertInto('idempotency_key')
        .values({
          scope: 's',
          key: 'dead',
          request_hash: 'x',
          state: 'in_flight',
          status_code: null,
          response_body: null,
          created_at: old,
          expires_at: new Date(Date.now() + 1e6).toISOString(),
        })
        .execute();
      const taken = await runIdempotent(db, { scope: 's', key: 'dead', payload: {} }, write('revived'));
      assert.equal(taken.replayed, false);
      await runIdempotent(db, { scope: 's', key: 'short', payload: {} }, write('short'), { ttlMs: 1 });
      await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok((await pruneIdempotencyKeys(db)) >= 1);
    });
  });
}
