import { columnTypes, createIdempotencyTable, dialectOf } from '@keel/core';
import type { Kysely } from 'kysely';

// Frozen: a later change gets a new migration.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const postgres = dialectOf(db) === 'postgres';

  await db.schema
    .createTable('tenant')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('organization')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull().references('tenant.id'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('workspace')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull().references('tenant.id'))
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organization.id'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('timezone', 'varchar(64)', (c) => c.notNull())
    .addColumn('subject_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('workspace_tenant').on('workspace').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('api_key')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull().references('tenant.id'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('display_prefix', 'varchar(16)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('scope_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('workspace_ids', 'text', (c) => c.notNull())
    .addColumn('expires_at', t.timestamp)
    .addColumn('revoked_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_key_tenant').on('api_key').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('site_token')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull().references('tenant.id'))
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('display_prefix', 'varchar(16)', (c) => c.notNull())
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('revoked_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('dataset_record')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('dataset', 'varchar(32)', (c) => c.notNull())
    .addColumn('mode', 'varchar(16)', (c) => c.notNull())
    .addColumn('record_key', 'varchar(200)')
    .addColumn('definition_version', 'varchar(64)', (c) => c.notNull())
    .addColumn('run_id', 'varchar(100)')
    .addColumn('import_id', 'varchar(100)')
    .addColumn('computed_at', t.timestamp, (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('confidence_value', t.double)
    .addColumn('confidence_low', t.double)
    .addColumn('confidence_high', t.double)
    .addColumn('evidence', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(32)')
    .addColumn('subject_hash', 'varchar(64)')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('api_json', 'text', (c) => c.notNull())
    .execute();
  // The analytics page: newest first by (time-ordered) id within one workspace, dataset and mode.
  await db.schema
    .createIndex('dataset_record_page')
    .on('dataset_record')
    .columns(['workspace_id', 'dataset', 'mode', 'id'])
    .execute();
  await db.schema
    .createIndex('dataset_record_subject')
    .on('dataset_record')
    .columns(['workspace_id', 'subject_hash'])
    .execute();

  await db.schema
    .createTable('action_transition')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('action_id', 'varchar(36)', (c) => c.notNull().references('dataset_record.id'))
    .addColumn('from_status', 'varchar(32)', (c) => c.notNull())
    .addColumn('to_status', 'varchar(32)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(36)')
    .addColumn('via', 'varchar(16)', (c) => c.notNull())
    .addColumn('note', 'varchar(1000)')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('action_transition_action')
    .on('action_transition')
    .columns(['action_id', 'id'])
    .execute();

  await db.schema
    .createTable('target')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('target_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('name', 'varchar(500)', (c) => c.notNull())
    .addColumn('kind', 'varchar(64)', (c) => c.notNull())
    .addColumn('url', 'varchar(2048)')
    .addColumn('aliases', 'text', (c) => c.notNull())
    .addColumn('attributes', 'text', (c) => c.notNull())
    .addColumn('merged_into', 'varchar(36)')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('target_key_unique', ['workspace_id', 'project_id', 'target_key'])
    .execute();
  await db.schema
    .createTable('relation')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('from_target_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('to_target_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('kind', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  // Mutations run one at a time per workspace (a row lock) and deduplicate edges in memory, so one plain index
  // for loading a graph is all the relation table needs; a wide unique index made bulk imports several times slower.
  await db.schema.createIndex('relation_graph').on('relation').columns(['workspace_id', 'project_id']).execute();
  await db.schema
    .createTable('graph_mutation')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('operation', 'varchar(16)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(36)')
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('graph_mutation_project')
    .on('graph_mutation')
    .columns(['workspace_id', 'project_id', 'id'])
    .execute();

  await db.schema
    .createTable('tracking_event')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('name', 'varchar(100)')
    .addColumn('path', 'varchar(1024)')
    .addColumn('referrer_host', 'varchar(255)')
    .addColumn('ai_engine', 'varchar(32)')
    .addColumn('crawler', 'varchar(64)')
    .addColumn('consent', 'integer', (c) => c.notNull())
    .addColumn('visitor_id', 'varchar(32)')
    .addColumn('subject_hash', 'varchar(64)')
    .addColumn('properties', 'text')
    .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
    .addColumn('received_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tracking_event_page').on('tracking_event').columns(['workspace_id', 'id']).execute();
  await db.schema
    .createIndex('tracking_event_subject')
    .on('tracking_event')
    .columns(['workspace_id', 'subject_hash'])
    .execute();

  await db.schema
    .createTable('daily_salt')
    .addColumn('day', 'varchar(10)', (c) => c.primaryKey())
    .addColumn('salt', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('privacy_request')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('type', 'varchar(16)', (c) => c.notNull())
    .addColumn('subject_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('claimed_at', t.timestamp)
    .addColumn('result', 'text')
    .addColumn('export_id', 'varchar(36)')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('completed_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('privacy_request_workspace')
    .on('privacy_request')
    .columns(['workspace_id', 'id'])
    .execute();
  await db.schema
    .createIndex('privacy_request_status')
    .on('privacy_request')
    .columns(['status', 'created_at'])
    .execute();

  await db.schema
    .createTable('export_job')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('source', 'varchar(16)', (c) => c.notNull())
    .addColumn('dataset', 'varchar(32)')
    .addColumn('report_id', 'varchar(36)')
    .addColumn('subject_hash', 'varchar(64)')
    .addColumn('format', 'varchar(8)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('claimed_at', t.timestamp)
    .addColumn('row_count', 'integer')
    .addColumn('byte_size', 'integer')
    .addColumn('error', 'varchar(500)')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('completed_at', t.timestamp)
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('export_job_status').on('export_job').columns(['status', 'created_at']).execute();
  await db.schema.createIndex('export_job_workspace').on('export_job').columns(['workspace_id', 'id']).execute();
  await db.schema
    .createTable('export_chunk')
    .addColumn('export_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('export_chunk_pk', ['export_id', 'seq'])
    .execute();

  await db.schema
    .createTable('dashboard_share')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('dashboard_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('key_id', 'varchar(36)')
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('revoked_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dashboard_share_dashboard')
    .on('dashboard_share')
    .columns(['workspace_id', 'dashboard_id'])
    .execute();

  await createIdempotencyTable(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'idempotency_key',
    'dashboard_share',
    'export_chunk',
    'export_job',
    'privacy_request',
    'daily_salt',
    'tracking_event',
    'graph_mutation',
    'relation',
    'target',
    'action_transition',
    'dataset_record',
    'site_token',
    'api_key',
    'workspace',
    'organization',
    'tenant',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
