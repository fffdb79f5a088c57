import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';

/** Migrations listed in code, keyed by a name that sorts in the order they must run. */
export type MigrationSet = Record<string, Migration>;

class StaticMigrationProvider implements MigrationProvider {
  readonly #migrations: MigrationSet;
  constructor(migrations: MigrationSet) {
    this.#migrations = migrations;
  }
  async getMigrations(): Promise<MigrationSet> {
    return this.#migrations;
  }
}

/** Applies every pending migration of a service; throws with the failing migration's name. */
export async function migrateToLatest(db: Kysely<any>, migrations: MigrationSet): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider(migrations) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${reason}`, { cause: error });
  }
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
