import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Anonymous data (issue 15): events stored after PII removal and pseudonymization, and each realm's current
// pseudonymization key (sealed with the secret box; replaced, never kept, when it rotates).
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('anonymous_event')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('type', 'varchar(64)', (c) => c.notNull())
    // `api` (POST /api/v1/data/events), `catalog` or `runtime` (recorded by the engine itself).
    .addColumn('source', 'varchar(16)', (c) => c.notNull())
    .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
    // Summary buckets, written with the event so grouping is a plain column on both dialects.
    .addColumn('occurred_hour', 'varchar(24)', (c) => c.notNull())
    .addColumn('occurred_day', 'varchar(10)', (c) => c.notNull())
    .addColumn('subject', 'varchar(64)')
    .addColumn('session', 'varchar(64)')
    .addColumn('properties', t.json, (c) => c.notNull())
    .addColumn('redactions', 'integer', (c) => c.notNull())
    // SHA-256 of the client's idempotency_key (the key itself is not kept) and core's hash of the event as sent.
    .addColumn('idempotency_hash', 'varchar(64)')
    .addColumn('payload_hash', 'varchar(64)')
    .addColumn('received_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('anonymous_event_realm').on('anonymous_event').columns(['realm_id', 'id']).execute();
  await db.schema
    .createIndex('anonymous_event_realm_time')
    .on('anonymous_event')
    .columns(['realm_id', 'occurred_at'])
    .execute();
  await db.schema
    .createIndex('anonymous_event_idempotency')
    .on('anonymous_event')
    .columns(['realm_id', 'idempotency_hash'])
    .unique()
    .execute();

  await db.schema
    .createTable('anonymous_pseudonym_key')
    .addColumn('realm_id', id, (c) => c.primaryKey())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('key_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('anonymous_pseudonym_key').ifExists().execute();
  await db.schema.dropTable('anonymous_event').ifExists().execute();
}
