import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Frozen: a later change gets a new migration.
// The measurement engine: tracked prompts, engines (configured providers), schedules, runs and their answers.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await db.schema
    .createTable('measure_prompt')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('prompt_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('topic', 'varchar(200)')
    .addColumn('locale', 'varchar(35)', (c) => c.notNull())
    .addColumn('intent', 'varchar(64)')
    .addColumn('persona', 'varchar(200)')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('measure_prompt_key')
    .on('measure_prompt')
    .columns(['workspace_id', 'project_id', 'prompt_key'])
    .unique()
    .execute();
  await db.schema
    .createIndex('measure_prompt_page')
    .on('measure_prompt')
    .columns(['workspace_id', 'project_id', 'id'])
    .execute();

  await db.schema
    .createTable('measure_engine')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('name', 'varchar(100)', (c) => c.notNull())
    .addColumn('provider', 'varchar(32)', (c) => c.notNull())
    .addColumn('base_url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('model', 'varchar(200)', (c) => c.notNull())
    .addColumn('api_key', 'text')
    .addColumn('concurrency', 'integer', (c) => c.notNull())
    .addColumn('requests_per_minute', 'integer', (c) => c.notNull())
    .addColumn('input_price_micros', 'bigint', (c) => c.notNull())
    .addColumn('output_price_micros', 'bigint', (c) => c.notNull())
    .addColumn('timeout_ms', 'integer', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('measure_engine_name')
    .on('measure_engine')
    .columns(['workspace_id', 'name'])
    .unique()
    .execute();

  await db.schema
    .createTable('measure_run')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('samples', 'integer', (c) => c.notNull())
    .addColumn('engine_ids', 'text', (c) => c.notNull())
    .addColumn('prompt_ids', 'text', (c) => c.notNull())
    .addColumn('judge_engine_id', 'varchar(36)')
    .addColumn('simulation', 'text')
    .addColumn('total_tasks', 'integer', (c) => c.notNull())
    .addColumn('seed', 'bigint', (c) => c.notNull())
    .addColumn('summary', 'text')
    .addColumn('error', 'varchar(500)')
    .addColumn('schedule_id', 'varchar(36)')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('claimed_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('started_at', t.timestamp)
    .addColumn('completed_at', t.timestamp)
    .execute();
  await db.schema.createIndex('measure_run_page').on('measure_run').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('measure_run_status').on('measure_run').columns(['status', 'created_at']).execute();

  await db.schema
    .createTable('measure_answer')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('run_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('prompt_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('engine_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('sample', 'integer', (c) => c.notNull())
    .addColumn('status', 'varchar(8)', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('citations', 'text', (c) => c.notNull())
    .addColumn('features', 'text', (c) => c.notNull())
    .addColumn('input_tokens', 'integer', (c) => c.notNull())
    .addColumn('output_tokens', 'integer', (c) => c.notNull())
    .addColumn('cost_micros', 'bigint', (c) => c.notNull())
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'varchar(500)')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  // One answer per task: a resumed run can never store a task twice.
  await db.schema
    .createIndex('measure_answer_task')
    .on('measure_answer')
    .columns(['run_id', 'prompt_id', 'engine_id', 'sample'])
    .unique()
    .execute();

  await db.schema
    .createTable('measure_schedule')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull().references('workspace.id'))
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('engine_ids', 'text', (c) => c.notNull())
    .addColumn('samples', 'integer', (c) => c.notNull())
    .addColumn('every_hours', 'integer', (c) => c.notNull())
    .addColumn('next_run_at', t.timestamp, (c) => c.notNull())
    .addColumn('last_run_id', 'varchar(36)')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('measure_schedule_due')
    .on('measure_schedule')
    .columns(['active', 'next_run_at'])
    .execute();

  // Attribution reads a workspace's AI referrals and crawler hits of a time window.
  await db.schema
    .createIndex('tracking_event_time')
    .on('tracking_event')
    .columns(['workspace_id', 'occurred_at'])
    .execute();
}
