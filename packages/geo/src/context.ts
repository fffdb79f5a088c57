import type { Cache, SecretBox } from '@keel/core';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { GeoConfig } from './config.ts';
import type { GeoDb } from './db/schema.ts';

/** What geo's service functions work with; built once in `buildGeoApp`. */
export interface GeoContext {
  config: GeoConfig;
  db: Kysely<GeoDb>;
  cache: Cache;
  log: FastifyBaseLogger;
  /** Seals the secrets the service keeps (workspace subject secrets). */
  secrets: SecretBox;
  /** The clock, so tests can move time (expiry, salt rotation). */
  now(): Date;
}
