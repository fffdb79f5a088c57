import { columnTypes } from '@keel/core';
import type { Kysely } from 'kysely';

// Sampling and elicitation requests of MCP servers during tool calls (issue 14): each realm's policy, and one audit
// record per request (ids, outcome, token counts; never a prompt, an answer or an elicited value).
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const id = 'varchar(36)';

  await db.schema
    .createTable('tool_interaction_policy')
    .addColumn('realm_id', id, (c) => c.primaryKey())
    .addColumn('policy', t.json, (c) => c.notNull())
    .addColumn('updated_by', id, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('tool_interaction')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('realm_id', id, (c) => c.notNull())
    // `sampling` or `elicitation`.
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('server_id', id, (c) => c.notNull())
    .addColumn('tool_name', 'varchar(128)')
    .addColumn('session_id', id)
    .addColumn('trace_id', 'varchar(128)')
    // pending (a reservation while served), served, accepted, declined, refused, failed.
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .addColumn('reason', 'varchar(64)')
    // 1 while the request counts against the window budget (reserved or served), 0 when refused.
    .addColumn('counted', 'integer', (c) => c.notNull())
    .addColumn('provider_id', id)
    .addColumn('tokens_reserved', 'integer', (c) => c.notNull())
    .addColumn('input_tokens', 'integer')
    .addColumn('output_tokens', 'integer')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tool_interaction_realm').on('tool_interaction').columns(['realm_id', 'id']).execute();
  await db.schema
    .createIndex('tool_interaction_window')
    .on('tool_interaction')
    .columns(['realm_id', 'kind', 'created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tool_interaction').ifExists().execute();
  await db.schema.dropTable('tool_interaction_policy').ifExists().execute();
}
