import type { Kysely } from 'kysely';

// Cron schedules for flow schedule triggers (issue 13 leftover): a schedule fires either every `interval_seconds` or
// at the times of a 5-field cron expression in an IANA time zone; `next_run_at` stays the claimed slot in both cases.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('flow_trigger').addColumn('cron', 'varchar(120)').execute();
  await db.schema.alterTable('flow_trigger').addColumn('time_zone', 'varchar(64)').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('flow_trigger').dropColumn('time_zone').execute();
  await db.schema.alterTable('flow_trigger').dropColumn('cron').execute();
}
