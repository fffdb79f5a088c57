import {
  type CoreConfig,
  createSecretBox,
  defaultDatabaseUrl,
  loadSecretKey,
  migrateToLatest,
  type SecretBox,
} from '@keel/core';
import type { Kysely } from 'kysely';
import type { GeoConfig } from '../config.ts';
import { geoMigrations } from './migrations/index.ts';
import type { GeoDb } from './schema.ts';

// geo's database and secret box, apart from the app, so that `keel geo …` opens them without loading geo's routes.

export function geoDatabaseUrl(core: CoreConfig): string {
  return core.databaseUrl ?? defaultDatabaseUrl(core.dataDir, 'geo');
}

/** The secret box of a configuration: KEEL_SECRET_KEY, or the key generated into KEEL_DATA_DIR on first use. */
export function geoSecretBox(config: GeoConfig): SecretBox {
  return createSecretBox(loadSecretKey({ secretKey: config.core.secretKey, dataDir: config.core.dataDir }).keyHex);
}

/** Applies geo's migrations. */
export async function prepareGeoDatabase(db: Kysely<GeoDb>): Promise<string[]> {
  return migrateToLatest(db, geoMigrations);
}
