import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Durable flow executions (issue 13): the execution row (state, pinned versions, lease), its step log (one row
// per completed step, written before the next step starts) and its event stream (`GET …/events`).
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('flow_execution')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    .addColumn('flow_id', id, (c) => c.notNull())
    .addColumn('flow_version', 'integer', (c) => c.notNull())
    .addColumn('agent_id', id)
    .addColumn('session_id', id)
    .addColumn('state', 'varchar(24)', (c) => c.notNull())
    .addColumn('input', t.json, (c) => c.notNull())
    // The agent settings bounds and the versions (flow, plan hash, prompt, provider) pinned at creation.
    .addColumn('settings', t.json, (c) => c.notNull())
    .addColumn('pinned', t.json, (c) => c.notNull())
    // Continuations recorded by approve, deny and resume, by wait id.
    .addColumn('signals', t.json, (c) => c.notNull())
    .addColumn('wait', t.json)
    .addColumn('action', t.json)
    .addColumn('error', t.json)
    .addColumn('usage', t.json)
    .addColumn('compensate', 'boolean', (c) => c.notNull())
    // Compensations still to run for a cancelled execution (a worker runs them).
    .addColumn('compensation_pending', 'boolean', (c) => c.notNull())
    .addColumn('cancel_requested', 'boolean', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_retries', 'integer', (c) => c.notNull())
    .addColumn('claims', 'integer', (c) => c.notNull())
    // When a worker may take it: now, a retry's backoff, or a delay's end.
    .addColumn('run_at', t.timestamp, (c) => c.notNull())
    .addColumn('lease_owner', 'varchar(64)')
    .addColumn('lease_expires_at', t.timestamp)
    .addColumn('trace_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('started_at', t.timestamp)
    .addColumn('finished_at', t.timestamp)
    .execute();
  await db.schema.createIndex('flow_execution_claim').on('flow_execution').columns(['state', 'run_at']).execute();
  await db.schema.createIndex('flow_execution_realm').on('flow_execution').columns(['realm_id', 'id']).execute();
  await db.schema.createIndex('flow_execution_flow').on('flow_execution').columns(['flow_id', 'state']).execute();

  await db.schema
    .createTable('flow_execution_step')
    .addColumn('execution_id', id, (c) => c.notNull())
    .addColumn('key', 'varchar(512)', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('record', t.json, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('flow_execution_step_pk', ['execution_id', 'key'])
    .execute();

  await db.schema
    .createTable('flow_execution_event')
    .addColumn('id', t.serial, (c) => (t.autoIncrement ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('execution_id', id, (c) => c.notNull())
    .addColumn('type', 'varchar(40)', (c) => c.notNull())
    .addColumn('data', t.json, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('flow_execution_event_execution')
    .on('flow_execution_event')
    .columns(['execution_id', 'id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['flow_execution_event', 'flow_execution_step', 'flow_execution'])
    await db.schema.dropTable(table).ifExists().execute();
}
