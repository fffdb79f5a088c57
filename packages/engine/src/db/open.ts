import { type CoreConfig, defaultDatabaseUrl, migrateToLatest, openDatabase } from '@keel/core';
import type { Kysely } from 'kysely';
import type { EngineConfig } from '../config.ts';
import { engineMigrations } from './migrations/index.ts';
import type { EngineDb } from './schema.ts';

// Opening and migrating the engine's database, apart from the apps, so that `keel engine …` and `keel import …` open
// it without loading the engine's HTTP apps.

export function engineDatabaseUrl(core: CoreConfig): string {
  return core.databaseUrl ?? defaultDatabaseUrl(core.dataDir, 'engine');
}

/** Applies the engine's migrations. */
export async function prepareEngineDatabase(db: Kysely<EngineDb>): Promise<string[]> {
  return migrateToLatest(db, engineMigrations);
}

/** Opens the engine's database (schema `engine` on PostgreSQL) and applies pending migrations. */
export async function openEngineDatabase(config: EngineConfig) {
  const database = await openDatabase<EngineDb>({ url: engineDatabaseUrl(config.core), schema: 'engine' });
  try {
    await prepareEngineDatabase(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}
