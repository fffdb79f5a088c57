import { ConfigReader, type CoreConfig, type Env, type HttpConfig, readCoreConfig, readHttpConfig } from '@keel/core';

export interface GeoConfig {
  core: CoreConfig;
  http: HttpConfig;
  events: {
    /** Largest number of events one POST /api/v2/geo/events may carry. */
    maxBatch: number;
    /** How long a site token stays cached in memory after a lookup (revocation takes effect within it). */
    siteTokenCacheMs: number;
  };
  exports: { ttlHours: number; maxRows: number; maxPdfRows: number };
  worker: { enabled: boolean; intervalMs: number };
  shares: { maxDays: number };
  measure: {
    /** MANAGED_MODEL_ENDPOINT_OVERRIDE: where managed-model engines send their calls instead of AWS (tests, VPC endpoints). */
    managedModelEndpointOverride: string | undefined;
  };
}

/** Reads geo's configuration (shared variables plus GEO_*); throws a ConfigError naming every bad one. */
export function readGeoConfig(env: Env): GeoConfig {
  const reader = new ConfigReader(env);
  const config: GeoConfig = {
    core: readCoreConfig(reader),
    http: readHttpConfig(reader),
    events: {
      maxBatch: reader.int('GEO_EVENTS_MAX_BATCH', 500, { min: 1, max: 1000 }),
      siteTokenCacheMs: reader.int('GEO_SITE_TOKEN_CACHE_MS', 5000, { min: 0, max: 300_000 }),
    },
    exports: {
      ttlHours: reader.int('GEO_EXPORT_TTL_HOURS', 24, { min: 1, max: 24 * 30 }),
      maxRows: reader.int('GEO_EXPORT_MAX_ROWS', 1_000_000, { min: 1, max: 10_000_000 }),
      maxPdfRows: reader.int('GEO_EXPORT_MAX_PDF_ROWS', 2000, { min: 1, max: 20_000 }),
    },
    worker: {
      enabled: reader.bool('GEO_WORKER_ENABLED', true),
      intervalMs: reader.int('GEO_WORKER_INTERVAL_MS', 1000, { min: 10, max: 600_000 }),
    },
    shares: { maxDays: reader.int('GEO_SHARE_MAX_DAYS', 90, { min: 1, max: 3650 }) },
    measure: {
      managedModelEndpointOverride: reader.url('MANAGED_MODEL_ENDPOINT_OVERRIDE', ['http:', 'https:']),
    },
  };
  reader.done();
  return config;
}
