import type { MigrationSet } from '@keel/core';
import * as createCatalogTables from './2026_11_21_0001_create_catalog_tables.ts';
import * as createRuntimeTables from './2026_11_22_0001_create_runtime_tables.ts';
import * as configureSearchRank from './2026_11_23_0001_configure_search_rank.ts';
import * as createFlowTables from './2026_11_26_0001_create_flow_tables.ts';
import * as createExecutionTables from './2026_11_26_0002_create_execution_tables.ts';
import * as createToolServerTables from './2026_11_26_0003_create_tool_server_tables.ts';
import * as createFlowRoutingTables from './2026_11_26_0004_create_flow_routing_tables.ts';
import * as createAnonymousEventTables from './2026_11_26_0005_create_anonymous_event_tables.ts';
import * as createObservabilityTables from './2026_11_26_0020_create_observability_tables.ts';

/** The engine's migrations, in the order they run (the catalog's, then the runtime's). */
export const engineMigrations: MigrationSet = {
  '2026_11_21_0001_create_catalog_tables': createCatalogTables,
  '2026_11_22_0001_create_runtime_tables': createRuntimeTables,
  '2026_11_23_0001_configure_search_rank': configureSearchRank,
  '2026_11_26_0001_create_flow_tables': createFlowTables,
  '2026_11_26_0002_create_execution_tables': createExecutionTables,
  '2026_11_26_0003_create_tool_server_tables': createToolServerTables,
  '2026_11_26_0004_create_flow_routing_tables': createFlowRoutingTables,
  '2026_11_26_0005_create_anonymous_event_tables': createAnonymousEventTables,
  '2026_11_26_0020_create_observability_tables': createObservabilityTables,
};
