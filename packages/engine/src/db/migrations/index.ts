import type { MigrationSet } from '@keel/core';
import * as createCatalogTables from './2026_11_21_0001_create_catalog_tables.ts';
import * as createRuntimeTables from './2026_11_22_0001_create_runtime_tables.ts';
import * as configureSearchRank from './2026_11_23_0001_configure_search_rank.ts';
import * as createAnonymousEventTables from './2026_11_26_0005_create_anonymous_event_tables.ts';

/** The engine's migrations, in the order they run (the catalog's, then the runtime's). */
export const engineMigrations: MigrationSet = {
  '2026_11_21_0001_create_catalog_tables': createCatalogTables,
  '2026_11_22_0001_create_runtime_tables': createRuntimeTables,
  '2026_11_23_0001_configure_search_rank': configureSearchRank,
  '2026_11_26_0005_create_anonymous_event_tables': createAnonymousEventTables,
};
