import { columnTypes } from '@keel/core';
import { type Kysely, sql } from 'kysely';

// Governance (issue 15): policy versions (one active per realm), maker-checker allowlist requests, the realm quota
// policy, evaluation datasets and runs, deployment profiles / support access / lawful-request metadata (records),
// and the audit trail of every governance write. Executions of both kinds record the policy version pinned to them.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('governance_policy')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('name', 'varchar(120)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('rules', t.json, (c) => c.notNull())
    // draft → active → superseded (when another version is activated).
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('activated_by', id)
    .addColumn('activated_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('governance_policy_version')
    .on('governance_policy')
    .columns(['realm_id', 'version'])
    .unique()
    .execute();
  // At most one active version per realm, whatever races: the database refuses a second one.
  await db.schema
    .createIndex('governance_policy_one_active')
    .on('governance_policy')
    .column('realm_id')
    .unique()
    .where(sql.ref('status'), '=', 'active')
    .execute();

  await db.schema
    .createTable('governance_allowlist')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('scope', 'varchar(32)', (c) => c.notNull())
    .addColumn('value', 'varchar(255)', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('requested_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('decided_by', id)
    .addColumn('decided_at', t.timestamp)
    .addColumn('decision_note', 'text')
    .execute();
  await db.schema
    .createIndex('governance_allowlist_realm')
    .on('governance_allowlist')
    .columns(['realm_id', 'status', 'scope'])
    .execute();

  await db.schema
    .createTable('governance_quota')
    .addColumn('realm_id', id, (c) => c.primaryKey())
    .addColumn('window_seconds', 'integer', (c) => c.notNull())
    .addColumn('max_requests', 'integer')
    .addColumn('max_tokens', 'bigint')
    // Exact decimal text in the realm's currency (compared in millionths).
    .addColumn('max_cost', 'varchar(32)')
    .addColumn('max_tool_calls', 'integer')
    .addColumn('updated_by', id, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('governance_dataset')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('name', 'varchar(120)', (c) => c.notNull())
    .addColumn('kind', 'varchar(24)', (c) => c.notNull())
    .addColumn('cases', t.json, (c) => c.notNull())
    .addColumn('case_count', 'integer', (c) => c.notNull())
    .addColumn('approval', t.json)
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('governance_dataset_realm')
    .on('governance_dataset')
    .columns(['realm_id', 'id'])
    .execute();

  await db.schema
    .createTable('governance_evaluation_run')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('dataset_id', id, (c) => c.notNull())
    .addColumn('mode', 'varchar(16)', (c) => c.notNull())
    .addColumn('agent_id', id, (c) => c.notNull())
    .addColumn('policy_id', id)
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('summary', t.json, (c) => c.notNull())
    .addColumn('results', t.json, (c) => c.notNull())
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('completed_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('governance_evaluation_run_realm')
    .on('governance_evaluation_run')
    .columns(['realm_id', 'id'])
    .execute();

  // Deployment profiles, support access grants and lawful-request metadata: one row per record, its fields as JSON.
  await db.schema
    .createTable('governance_record')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('data', t.json, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp)
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('governance_record_realm')
    .on('governance_record')
    .columns(['realm_id', 'kind', 'id'])
    .execute();

  await db.schema
    .createTable('governance_audit')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('actor_id', id, (c) => c.notNull())
    .addColumn('action', 'varchar(64)', (c) => c.notNull())
    .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('details', t.json, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('governance_audit_realm').on('governance_audit').columns(['realm_id', 'id']).execute();

  // The policy version pinned to each execution at creation (null: the realm had no active policy).
  await db.schema.alterTable('execution').addColumn('policy_version_id', id).execute();
  await db.schema.alterTable('flow_execution').addColumn('policy_version_id', id).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('flow_execution').dropColumn('policy_version_id').execute();
  await db.schema.alterTable('execution').dropColumn('policy_version_id').execute();
  for (const table of [
    'governance_audit',
    'governance_record',
    'governance_evaluation_run',
    'governance_dataset',
    'governance_quota',
    'governance_allowlist',
    'governance_policy',
  ])
    await db.schema.dropTable(table).ifExists().execute();
}
