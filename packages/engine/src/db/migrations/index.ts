import type { MigrationSet } from '@keel/core';
import * as createCatalogTables from './2026_11_21_0001_create_catalog_tables.ts';
import * as createRuntimeTables from './2026_11_22_0001_create_runtime_tables.ts';
import * as configureSearchRank from './2026_11_23_0001_configure_search_rank.ts';
import * as createFlowTables from './2026_11_26_0001_create_flow_tables.ts';
import * as createExecutionTables from './2026_11_26_0002_create_execution_tables.ts';
import * as createToolServerTables from './2026_11_26_0003_create_tool_server_tables.ts';
import * as createFlowRoutingTables from './2026_11_26_0004_create_flow_routing_tables.ts';
import * as createAnonymousEventTables from './2026_11_26_0005_create_anonymous_event_tables.ts';
import * as createGovernanceTables from './2026_11_26_0010_create_governance_tables.ts';
import * as createObservabilityTables from './2026_11_26_0020_create_observability_tables.ts';
import * as createUsageIntegrationTables from './2026_11_26_0030_create_usage_integration_tables.ts';
import * as backfillUsageRecords from './2026_11_26_0031_backfill_usage_records.ts';
import * as createFlowChatTables from './2026_11_26_0040_create_flow_chat_tables.ts';
import * as createRealmMerchantLink from './2026_11_26_0050_create_realm_merchant_link.ts';
import * as createToolInteractionTables from './2026_11_26_0060_create_tool_interaction_tables.ts';
import * as createFlowUsageColumns from './2026_11_26_0080_create_flow_usage_columns.ts';
import * as addFlowTriggerCron from './2026_11_26_0090_add_flow_trigger_cron.ts';
import * as addOutboxTraceColumns from './2026_11_26_0091_add_outbox_trace_columns.ts';

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
  '2026_11_26_0010_create_governance_tables': createGovernanceTables,
  '2026_11_26_0020_create_observability_tables': createObservabilityTables,
  '2026_11_26_0030_create_usage_integration_tables': createUsageIntegrationTables,
  '2026_11_26_0031_backfill_usage_records': backfillUsageRecords,
  '2026_11_26_0040_create_flow_chat_tables': createFlowChatTables,
  '2026_11_26_0050_create_realm_merchant_link': createRealmMerchantLink,
  '2026_11_26_0060_create_tool_interaction_tables': createToolInteractionTables,
  '2026_11_26_0080_create_flow_usage_columns': createFlowUsageColumns,
  '2026_11_26_0090_add_flow_trigger_cron': addFlowTriggerCron,
  '2026_11_26_0091_add_outbox_trace_columns': addOutboxTraceColumns,
};
