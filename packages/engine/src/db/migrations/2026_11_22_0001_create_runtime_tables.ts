import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// The agent runtime (issue 6): realms and identities, credentials, providers, prompts, agent configuration,
// sessions with their separate stores (messages, typed state and its audit, user context), knowledge, executions.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('realm')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('theme', t.json)
    .addColumn('created_by', id)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('identity')
    .addColumn('id', id, (c) => c.primaryKey())
    // The realm an agent or service identity belongs to; users may have none (registered without a realm).
    .addColumn('realm_id', id, (c) => c.references('realm.id'))
    .addColumn('username', 'varchar(255)', (c) => c.notNull())
    // `u:<name>` for users (global), `r:<realm>:<name>` for agent and service identities (per realm).
    .addColumn('username_key', 'varchar(320)', (c) => c.notNull().unique())
    .addColumn('user_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('display_name', 'varchar(255)')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('metadata', t.json)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('identity_realm').on('identity').columns(['realm_id', 'user_type']).execute();

  await db.schema
    .createTable('realm_member')
    .addColumn('realm_id', id, (c) => c.notNull().references('realm.id'))
    .addColumn('identity_id', id, (c) => c.notNull().references('identity.id'))
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('realm_member_pk', ['realm_id', 'identity_id'])
    .execute();
  await db.schema.createIndex('realm_member_identity').on('realm_member').column('identity_id').execute();

  await db.schema
    .createTable('access_key')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('identity_id', id, (c) => c.notNull().references('identity.id'))
    .addColumn('realm_id', id)
    // The public half of the pair (`ak_…`); the secret half is kept only as its SHA-256.
    .addColumn('access_key', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp)
    .addColumn('revoked_at', t.timestamp)
    .addColumn('last_used_at', t.timestamp)
    .execute();
  await db.schema.createIndex('access_key_identity').on('access_key').column('identity_id').execute();

  await db.schema
    .createTable('runtime_bootstrap')
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('ai_provider')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull().references('realm.id'))
    .addColumn('type', 'varchar(32)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('base_url', 'text')
    .addColumn('api_key_sealed', 'text')
    .addColumn('supports_text', 'boolean', (c) => c.notNull())
    .addColumn('supports_image', 'boolean', (c) => c.notNull())
    .addColumn('text_model', 'varchar(255)')
    .addColumn('image_model', 'varchar(255)')
    // Prices as exact decimal text (never floats).
    .addColumn('input_price_per_million', 'varchar(32)', (c) => c.notNull())
    .addColumn('output_price_per_million', 'varchar(32)', (c) => c.notNull())
    .addColumn('image_price', 'varchar(32)', (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('is_default', 'boolean', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    .addColumn('settings', t.json, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ai_provider_realm_name')
    .on('ai_provider')
    .columns(['realm_id', 'name'])
    .unique()
    .execute();

  await db.schema
    .createTable('prompt')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull().references('realm.id'))
    .addColumn('key', 'varchar(120)', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('variables', t.json, (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    .addColumn('activated_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('prompt_realm_key_version')
    .on('prompt')
    .columns(['realm_id', 'key', 'version'])
    .unique()
    .execute();

  await db.schema
    .createTable('agent_config')
    .addColumn('agent_id', id, (c) => c.primaryKey().references('identity.id'))
    .addColumn('realm_id', id, (c) => c.notNull().references('realm.id'))
    .addColumn('system_prompt_id', id)
    .addColumn('ai_provider_id', id)
    .addColumn('default_flow_id', id)
    .addColumn('allowed_mcp_servers', t.json, (c) => c.notNull())
    .addColumn('metadata', t.json)
    .addColumn('settings', t.json, (c) => c.notNull())
    .addColumn('profile', t.json)
    .addColumn('is_default', 'boolean', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('agent_config_realm').on('agent_config').column('realm_id').execute();

  await db.schema
    .createTable('runtime_session')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull().references('realm.id'))
    .addColumn('agent_id', id, (c) => c.notNull())
    .addColumn('flow_id', id)
    .addColumn('subject_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('subject_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('channel', 'varchar(64)')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('resume_token_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('resume_token_version', 'integer', (c) => c.notNull())
    .addColumn('ttl_seconds', 'integer', (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addColumn('label', 'varchar(255)')
    .addColumn('metadata', t.json)
    .addColumn('transcript_retention', 'boolean', (c) => c.notNull())
    .addColumn('summary', 'text')
    .addColumn('summary_updated_at', t.timestamp)
    .addColumn('message_count', 'integer', (c) => c.notNull())
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('ended_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('runtime_session_realm')
    .on('runtime_session')
    .columns(['realm_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('runtime_session_subject')
    .on('runtime_session')
    .columns(['realm_id', 'subject_id'])
    .execute();

  await db.schema
    .createTable('session_message')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('session_id', id, (c) => c.notNull())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('execution_id', id)
    .addColumn('action_type', 'varchar(40)')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('session_message_seq')
    .on('session_message')
    .columns(['session_id', 'seq'])
    .unique()
    .execute();

  await db.schema
    .createTable('session_state')
    .addColumn('session_id', id, (c) => c.notNull())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('key', 'varchar(128)', (c) => c.notNull())
    .addColumn('value_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('updated_by', id, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('session_state_pk', ['session_id', 'key'])
    .execute();

  // The audit history of typed state: who set or forgot which key when, with a digest of the value (never the value).
  await db.schema
    .createTable('session_state_audit')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('session_id', id, (c) => c.notNull())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('key', 'varchar(128)', (c) => c.notNull())
    .addColumn('action', 'varchar(16)', (c) => c.notNull())
    .addColumn('value_type', 'varchar(16)')
    .addColumn('value_sha256', 'varchar(64)')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('actor_id', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('session_state_audit_session')
    .on('session_state_audit')
    .columns(['session_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('user_context')
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('user_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('context', t.json, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('updated_by', id, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('user_context_pk', ['realm_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('knowledge_item')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('scope', 'varchar(16)', (c) => c.notNull())
    .addColumn('agent_id', id)
    .addColumn('session_id', id)
    .addColumn('user_id', 'varchar(255)')
    .addColumn('title', 'varchar(255)')
    .addColumn('content', 'text')
    .addColumn('search_text', 'text')
    .addColumn('content_sha256', 'varchar(64)', (c) => c.notNull())
    .addColumn('tags', t.json, (c) => c.notNull())
    .addColumn('source', t.json, (c) => c.notNull())
    .addColumn('confidence', t.double)
    .addColumn('metadata', t.json)
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp)
    .addColumn('forgotten_at', t.timestamp)
    .addColumn('forgotten_by', id)
    .execute();
  await db.schema
    .createIndex('knowledge_item_realm')
    .on('knowledge_item')
    .columns(['realm_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('execution')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('agent_id', id, (c) => c.notNull())
    .addColumn('session_id', id)
    .addColumn('flow_id', id)
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('mode', 'varchar(8)', (c) => c.notNull())
    .addColumn('status', 'varchar(24)', (c) => c.notNull())
    .addColumn('trace_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('action_type', 'varchar(40)')
    .addColumn('result', t.json)
    .addColumn('usage', t.json)
    .addColumn('pinned', t.json, (c) => c.notNull())
    .addColumn('error_code', 'varchar(64)')
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('completed_at', t.timestamp)
    .execute();
  await db.schema.createIndex('execution_realm').on('execution').columns(['realm_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'execution',
    'knowledge_item',
    'user_context',
    'session_state_audit',
    'session_state',
    'session_message',
    'runtime_session',
    'agent_config',
    'prompt',
    'ai_provider',
    'runtime_bootstrap',
    'access_key',
    'realm_member',
    'identity',
    'realm',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
