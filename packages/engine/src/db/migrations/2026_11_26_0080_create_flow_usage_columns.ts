import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Usage of durable flow executions and runtime tool calls, and usage-threshold notifications (issue 15 leftovers).
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  // A usage record of a durable flow execution's step (a model node's tokens and cost, a tool node's call): the
  // execution and the step key. Written in the transaction that stores the step, so a step is counted once.
  await db.schema.alterTable('usage_record').addColumn('flow_execution_id', 'varchar(36)').execute();
  await db.schema.alterTable('usage_record').addColumn('step_key', 'text').execute();
  await db.schema
    .createIndex('usage_record_flow_execution')
    .on('usage_record')
    .columns(['flow_execution_id'])
    .execute();
  // Percentages of each quota limit at which a `usage.threshold_reached` runtime webhook event is sent (JSON array).
  await db.schema.alterTable('governance_quota').addColumn('notify_at_percent', t.json).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('governance_quota').dropColumn('notify_at_percent').execute();
  await db.schema.dropIndex('usage_record_flow_execution').ifExists().execute();
  await db.schema.alterTable('usage_record').dropColumn('step_key').execute();
  await db.schema.alterTable('usage_record').dropColumn('flow_execution_id').execute();
}
