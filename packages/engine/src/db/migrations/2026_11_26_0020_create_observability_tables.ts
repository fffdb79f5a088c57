import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Observability (issue 15): the spans of each realm's work as structured events (logs and trace timelines, kept
// bounded by age and count), alert rules on the realm's metrics, and their firing history.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('observability_event')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('trace_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('span_id', 'varchar(16)', (c) => c.notNull())
    .addColumn('parent_span_id', 'varchar(16)')
    // request, step, provider_call, tool_call, webhook_delivery
    .addColumn('kind', 'varchar(24)', (c) => c.notNull())
    // info, warn, error
    .addColumn('level', 'varchar(8)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('failed', 'boolean', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('attributes', t.json, (c) => c.notNull())
    .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('observability_event_realm')
    .on('observability_event')
    .columns(['realm_id', 'id'])
    .execute();
  await db.schema
    .createIndex('observability_event_trace')
    .on('observability_event')
    .columns(['realm_id', 'trace_id'])
    .execute();
  await db.schema
    .createIndex('observability_event_time')
    .on('observability_event')
    .columns(['realm_id', 'occurred_at'])
    .execute();

  await db.schema
    .createTable('observability_alert_rule')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('name', 'varchar(120)', (c) => c.notNull())
    .addColumn('metric', 'varchar(64)', (c) => c.notNull())
    .addColumn('operator', 'varchar(4)', (c) => c.notNull())
    .addColumn('threshold', t.double, (c) => c.notNull())
    .addColumn('window_seconds', 'integer', (c) => c.notNull())
    // ok or firing; changed only by a conditional update, so one instance records each transition.
    .addColumn('state', 'varchar(8)', (c) => c.notNull())
    .addColumn('last_value', t.double)
    .addColumn('last_evaluated_at', t.timestamp)
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('observability_alert_rule_realm')
    .on('observability_alert_rule')
    .columns(['realm_id', 'id'])
    .execute();

  await db.schema
    .createTable('observability_alert_firing')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('rule_id', id, (c) => c.notNull())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('value', t.double, (c) => c.notNull())
    .addColumn('fired_at', t.timestamp, (c) => c.notNull())
    .addColumn('resolved_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('observability_alert_firing_rule')
    .on('observability_alert_firing')
    .columns(['rule_id', 'fired_at'])
    .execute();
}
