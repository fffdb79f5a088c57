import type { Kysely } from 'kysely';

// Frozen: a later change gets a new migration.
// Managed-model engines (Amazon Bedrock) are addressed by an AWS region instead of a base URL.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('measure_engine').addColumn('region', 'varchar(32)').execute();
}
