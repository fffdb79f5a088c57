import type { MigrationSet } from '@keel/core';
import * as createGeoTables from './2026_11_21_0001_create_geo_tables.ts';
import * as exportJobPruned from './2026_11_26_0101_export_job_pruned.ts';
import * as createMeasureTables from './2026_11_26_0102_create_measure_tables.ts';
import * as measureEngineRegion from './2026_11_26_0103_measure_engine_region.ts';

/** Geo's migrations, in the order they run. */
export const geoMigrations: MigrationSet = {
  '2026_11_21_0001_create_geo_tables': createGeoTables,
  '2026_11_26_0101_export_job_pruned': exportJobPruned,
  '2026_11_26_0102_create_measure_tables': createMeasureTables,
  '2026_11_26_0103_measure_engine_region': measureEngineRegion,
};
