import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { type MigrationSet, migrateToLatest } from '../src/index.ts';
import { openTestDatabase, testDatabaseTargets } from '../src/testing.ts';

const BASE_URL = process.env.TEST_DATABASE_URL;

const migrations: MigrationSet = {
  '0001_items': {
    up: async (db) => {
      await db.schema
        .createTable('item')
        .addColumn('id', 'integer', (col) => col.primaryKey())
        .addColumn('name', 'varchar(50)')
        .execute();
      await db.schema
        .createTable('setting')
        .addColumn('name', 'varchar(50)', (col) => col.primaryKey())
        .execute();
    },
  },
};

/** A service's prepare step: migrate, then seed a setting on a database that has none (as guard seeds its patterns). */
async function prepare(db: Kysely<any>): Promise<void> {
  await migrateToLatest(db, migrations);
  const seeded = await db.selectFrom('setting').select('name').execute();
  if (seeded.length === 0) await db.insertInto('setting').values({ name: 'seeded' }).execute();
}

async function schemaExists(name: string | undefined): Promise<boolean> {
  const client = new pg.Client({ connectionString: BASE_URL });
  await client.connect();
  try {
    return (await client.query('select 1 from pg_namespace where nspname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describe('openTestDatabase', () => {
  for (const target of testDatabaseTargets()) {
    test(`with reuseSchema, the next open starts from what prepare leaves on a fresh database (${target.dialect})`, async () => {
      const first = await openTestDatabase<any>(target, 'reusetest', { prepare, reuseSchema: true });
      await first.db.insertInto('item').values({ id: 1, name: 'left over' }).execute();
      await first.db.insertInto('setting').values({ name: 'changed by a test' }).execute();
      await first.close();
      const second = await openTestDatabase<any>(target, 'reusetest', { prepare, reuseSchema: true });
      try {
        if (target.dialect === 'postgres') assert.equal(second.schema, first.schema, 'the emptied schema is reused');
        assert.deepEqual(await second.db.selectFrom('item').selectAll().execute(), []);
        assert.deepEqual(await second.db.selectFrom('setting').select('name').execute(), [{ name: 'seeded' }]);
        const applied = await sql<{ name: string }>`select name from keel_migration`.execute(second.db);
        assert.deepEqual(
          applied.rows.map((row) => row.name),
          ['0001_items'],
        );
      } finally {
        await second.close();
      }
    });
  }

  if (BASE_URL) {
    const target = { dialect: 'postgres' as const, url: BASE_URL };

    test('without reuseSchema the schema is dropped on close', async () => {
      const database = await openTestDatabase<any>(target, 'droptest', { prepare });
      assert.equal(await schemaExists(database.schema), true);
      await database.close();
      assert.equal(await schemaExists(database.schema), false);
    });

    test('a migration that inserts rows makes the reused open throw, naming the table, and leaves no schema', async () => {
      const inserting: MigrationSet = {
        '0001_items': {
          up: async (db) => {
            await db.schema
              .createTable('item')
              .addColumn('id', 'integer', (col) => col.primaryKey())
              .execute();
            await db.insertInto('item').values({ id: 1 }).execute();
          },
        },
      };
      const withData = async (db: Kysely<any>) => {
        await migrateToLatest(db, inserting);
      };
      const first = await openTestDatabase<any>(target, 'datamigration', { prepare: withData, reuseSchema: true });
      await first.close();
      await assert.rejects(
        openTestDatabase<any>(target, 'datamigration', { prepare: withData, reuseSchema: true }),
        /left 0 rows in item on a reused schema, 1 on a fresh one/,
      );
      assert.equal(await schemaExists(first.schema), false);
    });

    test('the schemas kept for reuse are dropped when the process exits', async () => {
      const testing = path.join(import.meta.dirname, '..', 'src', 'testing.ts');
      const script = `
        const { openTestDatabase } = await import(${JSON.stringify(testing)});
        const prepare = async (db) => { await db.schema.createTable('x').ifNotExists().addColumn('id', 'integer').execute(); };
        const database = await openTestDatabase({ dialect: 'postgres', url: process.env.TEST_DATABASE_URL }, 'exittest', { prepare, reuseSchema: true });
        await database.close();
        console.log(database.schema);`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
        env: process.env,
      });
      const schema = stdout.trim();
      assert.match(schema, /^exittest_test_[0-9a-f]{12}$/);
      assert.equal(await schemaExists(schema), false);
    });
  }
});
