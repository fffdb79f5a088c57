import { columnTypes } from '@keel/core';
import { type Kysely, sql } from 'kysely';

// Frozen: a later change gets a new migration.
// Expired exports are marked pruned once their bytes are deleted, so every pruning round moves on to the next
// batch; the partial index serves "expired and not yet pruned" without scanning the table.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema.alterTable('export_job').addColumn('pruned_at', t.timestamp).execute();
  await db.schema
    .createIndex('export_job_expiry')
    .on('export_job')
    .column('expires_at')
    .where(sql.ref('pruned_at'), 'is', null)
    .execute();
}
