import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Flows (issue 13): a flow per realm and name, its immutable versions (one per distinct `config`), and the
// deterministic fixtures its versions are tested against before they may be published.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('flow')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    // Lower-cased name: one flow per name in a realm (published flows become tools named after it).
    .addColumn('name_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('description', 'varchar(1000)')
    // `draft` (never published), `published`, `archived`.
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    // The latest version (the one a PUT last created); versions are numbered 1, 2, … per flow.
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('active_version', 'integer')
    .addColumn('published_version', 'integer')
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('archived_at', t.timestamp)
    .addUniqueConstraint('flow_realm_name', ['realm_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('flow_version')
    .addColumn('flow_id', id, (c) => c.notNull().references('flow.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('config', t.json, (c) => c.notNull())
    // SHA-256 of the config's canonical JSON (the compiled plan's hash).
    .addColumn('config_hash', 'varchar(64)', (c) => c.notNull())
    // `draft` or `published` (a published version's plan is what executions pin).
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    // The last `POST …/test` over every fixture of the flow on this version: true when all passed.
    .addColumn('test_passed', 'boolean')
    .addColumn('tested_at', t.timestamp)
    .addColumn('published_at', t.timestamp)
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('flow_version_pk', ['flow_id', 'version'])
    .execute();

  await db.schema
    .createTable('flow_fixture')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('flow_id', id, (c) => c.notNull().references('flow.id').onDelete('cascade'))
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('input', t.json, (c) => c.notNull())
    .addColumn('mocks', t.json, (c) => c.notNull())
    .addColumn('expect', t.json, (c) => c.notNull())
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('flow_fixture_name', ['flow_id', 'name'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['flow_fixture', 'flow_version', 'flow']) await db.schema.dropTable(table).ifExists().execute();
}
