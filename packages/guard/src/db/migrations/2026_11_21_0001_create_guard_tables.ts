import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = (col: any) => (t.autoIncrement ? col.primaryKey().autoIncrement() : col.primaryKey());

  await db.schema
    .createTable('pattern')
    .addColumn('id', t.serial, id)
    .addColumn('name', 'varchar(100)', (col) => col.notNull().unique())
    .addColumn('regex', 'text', (col) => col.notNull())
    .addColumn('description', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('category', 'varchar(32)', (col) => col.notNull().defaultTo('PII'))
    .addColumn('is_active', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('block_threshold', t.double)
    .addColumn('allow_threshold', t.double)
    .addColumn('created_at', t.timestamp, (col) => col.notNull())
    .addColumn('updated_at', t.timestamp, (col) => col.notNull())
    .execute();

  for (const table of ['allowlist_item', 'blacklist_item']) {
    await db.schema
      .createTable(table)
      .addColumn('id', t.serial, id)
      .addColumn('value', 'text', (col) => col.notNull())
      .addColumn('value_key', 'text', (col) => col.notNull().unique())
      .addColumn('description', 'text', (col) => col.notNull().defaultTo(''))
      .addColumn('created_at', t.timestamp, (col) => col.notNull())
      .execute();
  }

  await db.schema
    .createTable('validator')
    .addColumn('id', t.serial, id)
    .addColumn('name', 'varchar(100)', (col) => col.notNull().unique())
    .addColumn('type', 'varchar(16)', (col) => col.notNull())
    .addColumn('rule', 'text', (col) => col.notNull())
    .addColumn('description', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('expected_response', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('created_at', t.timestamp, (col) => col.notNull())
    .addColumn('updated_at', t.timestamp, (col) => col.notNull())
    .execute();

  await db.schema
    .createTable('detect_audit')
    .addColumn('id', t.serial, id)
    .addColumn('rid', 'varchar(200)', (col) => col.notNull())
    .addColumn('created_at', t.timestamp, (col) => col.notNull())
    .addColumn('duration_ms', t.double, (col) => col.notNull())
    .addColumn('total', 'integer', (col) => col.notNull())
    .addColumn('breakdown', t.json, (col) => col.notNull())
    .addColumn('blocked', 'boolean', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('detect_audit_created_at').on('detect_audit').column('created_at').execute();
  await db.schema.createIndex('detect_audit_rid').on('detect_audit').column('rid').execute();

  await db.schema
    .createTable('guard_meta')
    .addColumn('key', 'varchar(64)', (col) => col.primaryKey())
    .addColumn('value', 'text', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['guard_meta', 'detect_audit', 'validator', 'blacklist_item', 'allowlist_item', 'pattern']) {
    await db.schema.dropTable(table).execute();
  }
}
