import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, test } from 'node:test';
import { type Generated, type Kysely, sql } from 'kysely';
import {
  columnTypes,
  createGroupCommit,
  isUniqueViolation,
  type MigrationSet,
  migrateToLatest,
  pingDatabase,
  toIsoString,
  withTransaction,
} from '../src/index.ts';
import { openTestDatabase, testDatabaseTargets } from '../src/testing.ts';

interface TestDb {
  stock: { id: Generated<number>; sku: string; qty: number; created_at: string | Date; data: unknown };
}

const migrations: MigrationSet = {
  '0001_stock': {
    async up(db: Kysely<any>) {
      const t = columnTypes(db);
      await db.schema
        .createTable('stock')
        .addColumn('id', t.serial, (c) => (t.autoIncrement ? c.primaryKey().autoIncrement() : c.primaryKey()))
        .addColumn('sku', 'text', (c) => c.notNull().unique())
        .addColumn('qty', 'integer', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('data', t.json)
        .execute();
    },
  },
};

for (const target of testDatabaseTargets()) {
  describe(`database on ${target.dialect}`, () => {
    test('migrations apply once, and a second run applies nothing', async (t) => {
      const database = await openTestDatabase<TestDb>(target, 'core');
      t.after(() => database.close());
      assert.deepEqual(await migrateToLatest(database.db, migrations), ['0001_stock']);
      assert.deepEqual(await migrateToLatest(database.db, migrations), []);
      assert.equal(await pingDatabase(database.db), true);
    });

    test('group commit: concurrent writes share commits; one that fails rolls back alone and gets its error', async (t) => {
      const database = await openTestDatabase<TestDb>(target, 'core');
      t.after(() => database.close());
      await migrateToLatest(database.db, migrations);
      const writes = createGroupCommit(database.db);
      const now = new Date().toISOString();
      const transactions = new Set<unknown>();
      const insert = (sku: string, fail = false) =>
        writes.run(async (trx) => {
          transactions.add(trx);
          await trx.insertInto('stock').values({ sku, qty: 1, created_at: now, data: '{}' }).execute();
          await trx.updateTable('stock').set({ qty: 2 }).where('sku', '=', sku).execute();
          if (fail) throw new Error(`refused ${sku}`);
          return sku;
        });
      const outcomes = await Promise.allSettled([
        insert('a'),
        insert('b'),
        insert('c', true),
        insert('a'), // a unique violation inside the batch
        insert('d'),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled'],
      );
      assert.match(String((outcomes[2] as PromiseRejectedResult).reason), /refused c/);
      assert.equal(isUniqueViolation((outcomes[3] as PromiseRejectedResult).reason), true);
      const rows = await database.db.selectFrom('stock').select(['sku', 'qty']).orderBy('sku').execute();
      assert.deepEqual(
        rows.map((r) => `${r.sku}:${r.qty}`),
        ['a:2', 'b:2', 'd:2'],
        'the failed writes left nothing, not even their first statement',
      );
      if (target.dialect === 'sqlite') assert.equal(transactions.size, 1, 'five concurrent writes, one commit');
      else assert.equal(transactions.size, 5, 'PostgreSQL: a transaction each');
    });

    test("group commit: each write runs in its own caller's async context, grouped or not", async (t) => {
      const database = await openTestDatabase<TestDb>(target, 'core');
      t.after(() => database.close());
      await migrateToLatest(database.db, migrations);
      const writes = createGroupCommit(database.db, { postgresGroups: 1 });
      const request = new AsyncLocalStorage<string>();
      const transactions = new Set<unknown>();
      const seen = await Promise.all(
        ['r1', 'r2', 'r3', 'r4'].map((id) =>
          request.run(id, () =>
            writes.run(async (trx) => {
              transactions.add(trx);
              await trx
                .insertInto('stock')
                .values({ sku: id, qty: 1, created_at: new Date().toISOString(), data: '{}' })
                .execute();
              return request.getStore();
            }),
          ),
        ),
      );
      assert.ok(transactions.size < 4, 'the writes were grouped');
      assert.deepEqual(seen, ['r1', 'r2', 'r3', 'r4']);
    });

    test('group commit: a group stays under maxWeight (a heavier write runs alone); postgresGroups groups on PostgreSQL too', async (t) => {
      const database = await openTestDatabase<TestDb>(target, 'core');
      t.after(() => database.close());
      await migrateToLatest(database.db, migrations);
      const writes = createGroupCommit(database.db, { maxWeight: 10, postgresGroups: 1 });
      const now = new Date().toISOString();
      const groups = new Map<unknown, string[]>();
      const insert = (sku: string, weight: number) =>
        writes.run(async (trx) => {
          groups.set(trx, [...(groups.get(trx) ?? []), sku]);
          await trx.insertInto('stock').values({ sku, qty: weight, created_at: now, data: '{}' }).execute();
        }, weight);
      await Promise.all([insert('a', 4), insert('b', 4), insert('c', 4), insert('big', 50), insert('d', 1)]);
      assert.deepEqual([...groups.values()], [['a', 'b'], ['c'], ['big'], ['d']]);
      assert.equal((await database.db.selectFrom('stock').select('sku').execute()).length, 5);
    });

    test('a transaction that throws leaves nothing behind', async (t) => {
      const database = await openTestDatabase<TestDb>(target, 'core');
      t.after(() => database.close());
      await migrateToLatest(database.db, migrations);
      const now = new Date().toISOString();
      await assert.rejects(
        withTransaction(database.db, async (trx) => {
          await trx.insertInto('stock').values({ sku: 'a', qty: 1, created_at: now, data: '{}' }).execute();
          throw new Error('abort');
        }),
        /abort/,
      );
      const rows = await database.db.selectFrom('stock').selectAll().execute();
      assert.equal(rows.length, 0);
    });

    test('a conditional update decides by affected rows; unique violations are recognised', async (t) => {
      const database = await openTestDatabase<TestDb>(target, 'core');
      t.after(() => database.close());
      await migrateToLatest(database.db, migrations);
      const now = new Date().toISOString();
      const row = await database.db
        .insertInto('stock')
        .values({ sku: 'a', qty: 2, created_at: now, data: JSON.stringify({ x: 1 }) })
        .returningAll()
        .executeTakeFirstOrThrow();
      assert.equal(typeof row.id, 'number');
      assert.equal(toIsoString(row.created_at), now);
      const take = () =>
        database.db
          .updateTable('stock')
          .set({ qty: sql`qty - 1` })
          .where('sku', '=', 'a')
          .where('qty', '>=', 1)
          .executeTakeFirst();
      assert.equal(Number((await take()).numUpdatedRows), 1);
      assert.equal(Number((await take()).numUpdatedRows), 1);
      assert.equal(Number((await take()).numUpdatedRows), 0);
      await assert.rejects(
        database.db.insertInto('stock').values({ sku: 'a', qty: 1, created_at: now, data: null }).execute(),
        (error: unknown) => isUniqueViolation(error),
      );
    });
  });
}

for (const target of testDatabaseTargets()) {
  describe(`migrations on ${target.dialect}`, () => {
    test('a failing migration leaves nothing applied, and names itself', async (t) => {
      const database = await openTestDatabase<any>(target, 'core');
      t.after(() => database.close());
      const broken: MigrationSet = {
        ...migrations,
        '0002_broken': {
          async up(db: Kysely<any>) {
            await sql`select * from no_such_table`.execute(db);
          },
        },
      };
      await assert.rejects(migrateToLatest(database.db, broken), /migration 0002_broken failed/);
      assert.deepEqual(
        await migrateToLatest(database.db, migrations),
        ['0001_stock'],
        'the first migration was rolled back too',
      );
    });

    test('a database written by a newer version is refused', async (t) => {
      const database = await openTestDatabase<any>(target, 'core');
      t.after(() => database.close());
      await migrateToLatest(database.db, { ...migrations, '0009_future': { async up() {} } });
      await assert.rejects(migrateToLatest(database.db, migrations), /newer version/);
    });

    test('concurrent migrators apply each migration once', async (t) => {
      const database = await openTestDatabase<any>(target, 'core');
      t.after(() => database.close());
      const results = await Promise.all([
        migrateToLatest(database.db, migrations),
        migrateToLatest(database.db, migrations),
      ]);
      assert.deepEqual(results.flat(), ['0001_stock']);
    });
  });
}

test('sqlite::memory: and :memory: open an in-memory database, never a file named :memory:', async () => {
  const fs = await import('node:fs');
  const { openDatabase } = await import('../src/index.ts');
  for (const url of [':memory:', 'sqlite::memory:', 'sqlite://:memory:']) {
    const database = await openDatabase<any>({ url });
    await database.close();
  }
  assert.equal(fs.existsSync(':memory:'), false);
});

test('two processes writing one SQLite file wait their turn instead of failing', async (t) => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const { spawn } = await import('node:child_process');
  const { openDatabase: open } = await import('../src/index.ts');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-two-writers-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'shared.sqlite');
  const database = await open<any>({ url: file });
  t.after(() => database.close());
  await sql`create table counter (id integer primary key, n integer not null)`.execute(database.db);
  await sql`insert into counter (id, n) values (1, 0)`.execute(database.db);

  // Another process keeps committing small write transactions for a second.
  const writer = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { DatabaseSync } from 'node:sqlite';
       const db = new DatabaseSync(${JSON.stringify(file)});
       db.exec('PRAGMA busy_timeout = 5000');
       const until = Date.now() + 1000;
       while (Date.now() < until) { db.exec('begin immediate'); db.exec('update counter set n = n + 1 where id = 1'); db.exec('commit'); }
       db.close();`,
    ],
    { stdio: 'inherit' },
  );
  const done = new Promise<number | null>((resolve) => writer.on('exit', resolve));

  // Meanwhile this process reads, then writes, in each transaction: the pattern a deferred BEGIN fails on.
  let ok = 0;
  for (let i = 0; i < 40; i++) {
    await withTransaction(database.db, async (trx) => {
      const { rows } = await sql<{ n: number }>`select n from counter where id = 1`.execute(trx);
      await sql`update counter set n = ${Number(rows[0]!.n) + 1} where id = 1`.execute(trx);
    });
    ok++;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(await done, 0);
  assert.equal(ok, 40);
});
