import { type Kysely, type Migration, sql } from 'kysely';
import { dialectOf } from './dialect.ts';

/** Migrations listed in code, keyed by a name that sorts in the order they must run. */
export type MigrationSet = Record<string, Migration>;

/** The bookkeeping table of applied migrations (one per service schema or SQLite file). */
export const MIGRATION_TABLE = 'keel_migration';
const TABLE = MIGRATION_TABLE;

interface MigrationDb {
  [TABLE]: { name: string; applied_at: string };
}

/**
 * Applies every pending migration of a service, in name order, in one transaction: either all of them are
 * applied or none. The bookkeeping table lives next to the service's tables (its PostgreSQL schema or its
 * SQLite file) and nothing outside them is inspected. On PostgreSQL an advisory lock keeps instances that
 * start together from migrating twice. Throws with the failing migration's name.
 */
export async function migrateToLatest(db: Kysely<any>, migrations: MigrationSet): Promise<string[]> {
  const postgres = dialectOf(db) === 'postgres';
  return db.transaction().execute(async (trx) => {
    if (postgres) {
      await sql`select pg_advisory_xact_lock(hashtext(current_schema() || '.keel_migration'))`.execute(trx);
    }
    await trx.schema
      .createTable(TABLE)
      .ifNotExists()
      .addColumn('name', 'varchar(255)', (col) => col.primaryKey())
      .addColumn('applied_at', 'varchar(40)', (col) => col.notNull())
      .execute();
    const mdb = trx as unknown as Kysely<MigrationDb>;
    const applied = new Set((await mdb.selectFrom(TABLE).select('name').execute()).map((row) => row.name));
    const names = Object.keys(migrations).sort();
    const unknown = [...applied].filter((name) => !(name in migrations));
    if (unknown.length > 0) {
      throw new Error(
        `the database has migrations this version does not know (${unknown.join(', ')}): it was written by a newer version`,
      );
    }
    const done: string[] = [];
    for (const name of names) {
      if (applied.has(name)) continue;
      try {
        await migrations[name]!.up(trx);
      } catch (error) {
        throw new Error(`migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      }
      await mdb.insertInto(TABLE).values({ name, applied_at: new Date().toISOString() }).execute();
      done.push(name);
    }
    return done;
  });
}
