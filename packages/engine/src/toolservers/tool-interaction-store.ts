// Queries of the sampling/elicitation policy and audit (tables of migration 2026_11_26_0060).
import type { Executor } from '@keel/core';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { ToolInteractionPolicyTable, ToolInteractionTable } from './toolserver-tables.ts';

export type InteractionRow = Selectable<ToolInteractionTable>;

export function findInteractionPolicy(
  db: Executor<EngineDb>,
  realmId: string,
): Promise<Selectable<ToolInteractionPolicyTable> | undefined> {
  return db.selectFrom('tool_interaction_policy').selectAll().where('realm_id', '=', realmId).executeTakeFirst();
}

/** Inserts or replaces a realm's policy. */
export async function saveInteractionPolicy(
  db: Executor<EngineDb>,
  row: Insertable<ToolInteractionPolicyTable>,
): Promise<void> {
  await db
    .insertInto('tool_interaction_policy')
    .values(row)
    .onConflict((oc) =>
      oc.column('realm_id').doUpdateSet({ policy: row.policy, updated_by: row.updated_by, updated_at: row.updated_at }),
    )
    .execute();
}

export async function insertInteraction(db: Executor<EngineDb>, row: Insertable<ToolInteractionTable>): Promise<void> {
  await db.insertInto('tool_interaction').values(row).execute();
}

export async function updateInteraction(
  db: Executor<EngineDb>,
  id: string,
  patch: Updateable<ToolInteractionTable>,
): Promise<void> {
  await db.updateTable('tool_interaction').set(patch).where('id', '=', id).execute();
}

/** Requests and reserved-or-used tokens of a kind counted against the realm's window since `since`. */
export async function windowUsage(
  db: Executor<EngineDb>,
  realmId: string,
  kind: string,
  since: string,
): Promise<{ requests: number; tokens: number }> {
  const row = await db
    .selectFrom('tool_interaction')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('requests'),
      eb.fn
        .sum<number | string | null>(
          eb.fn.coalesce(eb('input_tokens', '+', eb.ref('output_tokens')), eb.ref('tokens_reserved')),
        )
        .as('tokens'),
    ])
    .where('realm_id', '=', realmId)
    .where('kind', '=', kind)
    .where('counted', '=', 1)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return { requests: Number(row?.requests ?? 0), tokens: Number(row?.tokens ?? 0) };
}

/** The realm's audit records, newest first, `limit + 1` rows after the cursor id. */
export function listInteractionRows(
  db: Executor<EngineDb>,
  realmId: string,
  page: {
    limit: number;
    before?: string | undefined;
    kind?: string | undefined;
    serverId?: string | undefined;
    sessionId?: string | undefined;
  },
): Promise<InteractionRow[]> {
  let q = db.selectFrom('tool_interaction').selectAll().where('realm_id', '=', realmId);
  if (page.before) q = q.where('id', '<', page.before);
  if (page.kind) q = q.where('kind', '=', page.kind);
  if (page.serverId) q = q.where('server_id', '=', page.serverId.toLowerCase());
  if (page.sessionId) q = q.where('session_id', '=', page.sessionId.toLowerCase());
  return q
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}
