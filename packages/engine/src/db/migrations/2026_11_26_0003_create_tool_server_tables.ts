import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// The tool-server registry (issue 14): registered MCP servers with their profile and observed health, credential
// versions (sealed secrets), discovered tools with contract and review state, resources and resource templates,
// tool proposals, routing rules and routing decision traces.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('tool_server')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull().references('realm.id'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    // `http` (streamable HTTP) or `sse`.
    .addColumn('type', 'varchar(16)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    .addColumn('capabilities', t.json, (c) => c.notNull())
    // Authentication profile without secrets: `{type, header_name?, token_url?, client_id?, scope?, credential_ref?}`.
    .addColumn('auth_profile', t.json, (c) => c.notNull())
    // `{allowed_hosts: string[]}`: the hosts the server's URL (and OAuth token URL) may name.
    .addColumn('egress_policy', t.json, (c) => c.notNull())
    .addColumn('region', 'varchar(64)')
    .addColumn('data_handling', t.json, (c) => c.notNull())
    .addColumn('estimated_cost', 'bigint')
    .addColumn('active_credential_version', 'integer')
    // What the last successful probe negotiated: protocol version, server info, capabilities.
    .addColumn('negotiated', t.json)
    .addColumn('last_probe_at', t.timestamp)
    .addColumn('last_probe_ok', 'boolean')
    .addColumn('last_probe_latency_ms', 'integer')
    .addColumn('last_error_code', 'varchar(64)')
    .addColumn('auth_failures', 'integer', (c) => c.notNull())
    .addColumn('last_auth_failure_at', t.timestamp)
    .addColumn('discovered_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('tool_server_realm_name')
    .on('tool_server')
    .columns(['realm_id', 'name'])
    .unique()
    .execute();

  await db.schema
    .createTable('tool_server_credential')
    .addColumn('server_id', id, (c) => c.notNull().references('tool_server.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('realm_id', id, (c) => c.notNull())
    // AES-256-GCM sealed secret (core's secret box); null once erased.
    .addColumn('secret_sealed', 'text')
    // `active`, `previous` (inside its overlap window), `inactive`, `failed` (never activated).
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('created_by', id)
    .addColumn('tested_at', t.timestamp)
    .addColumn('test_ok', 'boolean')
    .addColumn('test_error_code', 'varchar(64)')
    .addColumn('activated_at', t.timestamp)
    .addColumn('overlap_until', t.timestamp)
    .addPrimaryKeyConstraint('tool_server_credential_pk', ['server_id', 'version'])
    .execute();

  await db.schema
    .createTable('discovered_tool')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('server_id', id, (c) => c.notNull().references('tool_server.id').onDelete('cascade'))
    .addColumn('name', 'varchar(128)', (c) => c.notNull())
    .addColumn('title', 'varchar(255)')
    .addColumn('description', 'text')
    .addColumn('input_schema', t.json, (c) => c.notNull())
    .addColumn('output_schema', t.json)
    .addColumn('annotations', t.json)
    // `read`, `write`, `destructive`, `financial`, `external_message`, `sensitive`.
    .addColumn('impact', t.json, (c) => c.notNull())
    .addColumn('read_only', 'boolean', (c) => c.notNull())
    .addColumn('contract_hash', 'varchar(64)', (c) => c.notNull())
    // `passing` or `failing`, with the problems of a failing contract.
    .addColumn('contract_status', 'varchar(16)', (c) => c.notNull())
    .addColumn('contract_problems', t.json, (c) => c.notNull())
    .addColumn('contract_checked_at', t.timestamp, (c) => c.notNull())
    // `disabled`, `approved`, `rejected`, `quarantined`.
    .addColumn('review_status', 'varchar(16)', (c) => c.notNull())
    .addColumn('review_required', 'boolean', (c) => c.notNull())
    .addColumn('review_note', 'varchar(1000)')
    .addColumn('reviewed_by', id)
    .addColumn('reviewed_at', t.timestamp)
    // Set when a rediscovery no longer lists the tool (it is then unreachable until listed again).
    .addColumn('removed_at', t.timestamp)
    .addColumn('discovered_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('discovered_tool_server_name')
    .on('discovered_tool')
    .columns(['server_id', 'name'])
    .unique()
    .execute();
  await db.schema
    .createIndex('discovered_tool_realm_name')
    .on('discovered_tool')
    .columns(['realm_id', 'name'])
    .execute();

  await db.schema
    .createTable('tool_server_resource')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('server_id', id, (c) => c.notNull().references('tool_server.id').onDelete('cascade'))
    // `resource` (a URI) or `template` (an RFC 6570 URI template).
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('uri', 'varchar(2048)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('mime_type', 'varchar(255)')
    .addColumn('discovered_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('tool_server_resource_list')
    .on('tool_server_resource')
    .columns(['server_id', 'kind', 'name', 'id'])
    .execute();

  await db.schema
    .createTable('tool_proposal')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('server_id', id, (c) => c.notNull().references('tool_server.id').onDelete('cascade'))
    .addColumn('name', 'varchar(128)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('input_schema', t.json, (c) => c.notNull())
    .addColumn('source', t.json, (c) => c.notNull())
    // `proposed`, `approved`, `rejected`.
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('review_note', 'varchar(1000)')
    .addColumn('reviewed_by', id)
    .addColumn('reviewed_at', t.timestamp)
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('tool_proposal_server_name')
    .on('tool_proposal')
    .columns(['server_id', 'name'])
    .unique()
    .execute();
  await db.schema.createIndex('tool_proposal_realm').on('tool_proposal').columns(['realm_id', 'id']).execute();

  await db.schema
    .createTable('tool_routing_rule')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull().references('realm.id'))
    .addColumn('rule', t.json, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tool_routing_rule_realm').on('tool_routing_rule').columns(['realm_id', 'id']).execute();

  await db.schema
    .createTable('tool_route_trace')
    .addColumn('trace_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('trace', t.json, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('tool_route_trace_pk', ['realm_id', 'trace_id', 'seq'])
    .execute();
  // Tool session context: a store of its own, beside the session's typed state and messages.
  await db.schema
    .createTable('tool_session_context')
    .addColumn('session_id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('context', t.json, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('updated_by', id, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema.createIndex('tool_route_trace_created').on('tool_route_trace').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'tool_session_context',
    'tool_route_trace',
    'tool_routing_rule',
    'tool_proposal',
    'tool_server_resource',
    'discovered_tool',
    'tool_server_credential',
    'tool_server',
  ])
    await db.schema.dropTable(table).execute();
}
