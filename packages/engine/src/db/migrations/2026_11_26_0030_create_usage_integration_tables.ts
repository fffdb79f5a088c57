import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Usage, integration clients and runtime webhooks (issue 15, items 3 and 6).
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  // One row per usage entry: a chat or execute turn (written in the turn's transaction), AI usage reported through
  // POST /runtime/ai/usage, and tool or custom entries from POST /usages. Totals are sums over this table only.
  await db.schema
    .createTable('usage_record')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    // `ai`, `tool` or `custom`.
    .addColumn('type', 'varchar(16)', (c) => c.notNull())
    // `chat`, `execute` (the engine's own turns) or `api`.
    .addColumn('source', 'varchar(16)', (c) => c.notNull())
    // The model (ai), the tool (tool) or the metric (custom).
    .addColumn('name', 'varchar(255)')
    .addColumn('provider_id', id)
    .addColumn('agent_id', id)
    .addColumn('tool_server_id', id)
    .addColumn('session_id', id)
    // A turn's execution: unique, so one execution is counted once.
    .addColumn('execution_id', id, (c) => c.unique())
    .addColumn('status', 'varchar(32)')
    .addColumn('input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('output_tokens', 'bigint', (c) => c.notNull())
    .addColumn('images', 'integer', (c) => c.notNull())
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('unit', 'varchar(32)')
    // Exact cost in pico-units (10^-12) of `currency`.
    .addColumn('cost_picos', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'varchar(3)')
    // `provider_prices` (computed by the engine) or `caller` (a tool or custom entry's own figure).
    .addColumn('cost_source', 'varchar(16)', (c) => c.notNull())
    .addColumn('metadata', t.json)
    .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('usage_record_realm').on('usage_record').columns(['realm_id', 'id']).execute();
  await db.schema
    .createIndex('usage_record_realm_time')
    .on('usage_record')
    .columns(['realm_id', 'occurred_at'])
    .execute();

  // An integration client is a realm service identity with one key pair (access_key row) whose previous secret
  // stays valid until `previous_secret_expires_at` after a rotation.
  await db.schema
    .createTable('integration_client')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('name', 'varchar(100)', (c) => c.notNull())
    .addColumn('description', 'varchar(1000)')
    .addColumn('identity_id', id, (c) => c.notNull())
    .addColumn('key_id', id, (c) => c.notNull())
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('secret_rotated_at', t.timestamp)
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('integration_client_realm')
    .on('integration_client')
    .columns(['realm_id', 'id'])
    .execute();
  await db.schema
    .createIndex('integration_client_name')
    .on('integration_client')
    .columns(['realm_id', 'name'])
    .unique()
    .execute();
  await db.schema.alterTable('access_key').addColumn('previous_secret_hash', 'varchar(64)').execute();
  await db.schema.alterTable('access_key').addColumn('previous_secret_expires_at', t.timestamp).execute();

  // Runtime webhooks: deliveries go through the engine's one outbox (target `runtime:<id>`).
  await db.schema
    .createTable('runtime_webhook')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('description', 'varchar(1000)')
    .addColumn('events', t.json, (c) => c.notNull())
    .addColumn('signing_secret_sealed', 'text', (c) => c.notNull())
    .addColumn('active', 'boolean', (c) => c.notNull())
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('runtime_webhook_realm').on('runtime_webhook').columns(['realm_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('runtime_webhook').ifExists().execute();
  await db.schema.alterTable('access_key').dropColumn('previous_secret_expires_at').execute();
  await db.schema.alterTable('access_key').dropColumn('previous_secret_hash').execute();
  await db.schema.dropTable('integration_client').ifExists().execute();
  await db.schema.dropTable('usage_record').ifExists().execute();
}
