import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Database, type DialectName, openDatabase } from './db/open-database.ts';

export interface TestDatabaseTarget {
  dialect: DialectName;
  url: string;
}

/** SQLite in memory always; PostgreSQL too when TEST_DATABASE_URL is set (CI sets it). */
export function testDatabaseTargets(env = process.env): TestDatabaseTarget[] {
  const targets: TestDatabaseTarget[] = [{ dialect: 'sqlite', url: ':memory:' }];
  if (env.TEST_DATABASE_URL) targets.push({ dialect: 'postgres', url: env.TEST_DATABASE_URL });
  return targets;
}

/**
 * Opens a fresh database for one test suite: a new in-memory SQLite database, or a new PostgreSQL schema
 * that is dropped again on close.
 */
export async function openTestDatabase<DB>(target: TestDatabaseTarget, service: string): Promise<Database<DB>> {
  if (target.dialect === 'sqlite') return openDatabase<DB>({ url: target.url });
  const schema = `${service}_test_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase<DB>({ url: target.url, schema, poolSize: 5 });
  return {
    ...database,
    close: async () => {
      await database.close();
      const client = new pg.Client({ connectionString: target.url });
      await client.connect();
      try {
        await client.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await client.end();
      }
    },
  };
}
