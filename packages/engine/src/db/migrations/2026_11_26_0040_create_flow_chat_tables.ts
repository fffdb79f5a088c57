import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Chat through flows and flow triggers (issue 13, items 1 and 4): the per-session continuation context of a flow
// (a pending alternatives offer, the products shown recently), event and schedule triggers, and one row per fired
// event id or schedule slot (its primary key is what makes a fire run at most once, across instances).
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('flow_session_context')
    .addColumn('session_id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('flow_id', id)
    // The alternatives offer awaiting the user's answer (requested query and products behaviour), or null.
    .addColumn('offer', t.json)
    // The products of the latest product answer, in the order shown (for "the second one").
    .addColumn('products', t.json)
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('flow_trigger')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('flow_id', id, (c) => c.notNull())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('name', 'varchar(120)', (c) => c.notNull())
    .addColumn('event', 'varchar(120)')
    .addColumn('interval_seconds', 'integer')
    .addColumn('agent_id', id)
    .addColumn('input', t.json, (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    // A schedule's next due slot (claimed by one instance, then advanced by the interval).
    .addColumn('next_run_at', t.timestamp)
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('flow_trigger_flow').on('flow_trigger').columns(['flow_id', 'id']).execute();
  await db.schema.createIndex('flow_trigger_due').on('flow_trigger').columns(['kind', 'next_run_at']).execute();

  await db.schema
    .createTable('flow_trigger_fire')
    .addColumn('trigger_id', id, (c) => c.notNull())
    .addColumn('event_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('execution_id', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('flow_trigger_fire_pk', ['trigger_id', 'event_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['flow_trigger_fire', 'flow_trigger', 'flow_session_context'])
    await db.schema.dropTable(table).ifExists().execute();
}
