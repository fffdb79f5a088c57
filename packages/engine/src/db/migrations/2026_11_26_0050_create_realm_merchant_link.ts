import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// A runtime realm linked to one catalog merchant (issue 13 item 2, issue 15 item 4): its flows reach that merchant's
// catalog in-process and the catalog records the merchant's anonymous events in that realm. One merchant per realm and
// one realm per merchant (both unique), so a realm never reaches another merchant's catalog and a merchant's events
// land in exactly one realm. Also: the agent's max_concurrency copied onto each execution, so a claim can bound the
// executions of one agent running at once across every worker without reading the settings JSON.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('realm_merchant_link')
    .addColumn('realm_id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('created_by', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.alterTable('flow_execution').addColumn('max_concurrency', 'integer').execute();
  await db.schema
    .createIndex('flow_execution_agent_running')
    .on('flow_execution')
    .columns(['agent_id', 'state', 'lease_expires_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('flow_execution_agent_running').ifExists().execute();
  await db.schema.alterTable('flow_execution').dropColumn('max_concurrency').execute();
  await db.schema.dropTable('realm_merchant_link').ifExists().execute();
}
