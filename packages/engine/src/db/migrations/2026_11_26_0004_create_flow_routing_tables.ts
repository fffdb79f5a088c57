import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Flow promotion and routing (issue 13): which published version each environment (development → qa → uat →
// production) of a flow is bound to, the append-only record of every promotion, the routing profile of a flow
// (overrides the routing manifest of its config) and the routing policy of a realm.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('flow_binding')
    .addColumn('flow_id', id, (c) => c.notNull().references('flow.id').onDelete('cascade'))
    // `development`, `qa`, `uat` or `production`.
    .addColumn('environment', 'varchar(16)', (c) => c.notNull())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('promotion_id', id, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('flow_binding_pk', ['flow_id', 'environment'])
    .execute();

  await db.schema
    .createTable('flow_promotion')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('flow_id', id, (c) => c.notNull().references('flow.id').onDelete('cascade'))
    .addColumn('realm_id', id, (c) => c.notNull())
    // The stage the version came from (null for development, which binds a published version directly).
    .addColumn('from_environment', 'varchar(16)')
    .addColumn('to_environment', 'varchar(16)', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    // The version the target environment was bound to before (null when it was unbound).
    .addColumn('replaced_version', 'integer')
    .addColumn('note', 'varchar(1000)')
    .addColumn('promoted_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('flow_promotion_flow').on('flow_promotion').columns(['flow_id', 'id']).execute();

  await db.schema
    .createTable('flow_routing_profile')
    .addColumn('flow_id', id, (c) => c.primaryKey().references('flow.id').onDelete('cascade'))
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('profile', t.json, (c) => c.notNull())
    .addColumn('updated_by', id, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('flow_routing_profile_realm')
    .on('flow_routing_profile')
    .columns(['realm_id', 'flow_id'])
    .execute();

  await db.schema
    .createTable('flow_routing_policy')
    .addColumn('realm_id', id, (c) => c.primaryKey())
    // `automatic` (route by intent) or `explicit` (only a named flow, else the fallback).
    .addColumn('mode', 'varchar(16)', (c) => c.notNull())
    .addColumn('compatibility_fallback', 'boolean', (c) => c.notNull())
    .addColumn('fallback_flow_id', id)
    // 0–100, two decimals: the share of subjects that get a flow's canary (newest published above active) version.
    .addColumn('canary_percentage', t.double, (c) => c.notNull())
    .addColumn('updated_by', id, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['flow_routing_policy', 'flow_routing_profile', 'flow_promotion', 'flow_binding'])
    await db.schema.dropTable(table).ifExists().execute();
}
