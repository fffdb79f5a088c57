import type { Executor } from '@keel/core';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type {
  DiscoveredToolTable,
  ToolProposalTable,
  ToolRouteTraceTable,
  ToolRoutingRuleTable,
  ToolServerCredentialTable,
  ToolServerResourceTable,
  ToolServerTable,
  ToolSessionContextTable,
} from './toolserver-tables.ts';

export type ServerRow = Selectable<ToolServerTable>;
export type CredentialRow = Selectable<ToolServerCredentialTable>;
export type ToolRow = Selectable<DiscoveredToolTable>;
export type ResourceRow = Selectable<ToolServerResourceTable>;
export type ProposalRow = Selectable<ToolProposalTable>;
export type RuleRow = Selectable<ToolRoutingRuleTable>;

// Servers ----------------------------------------------------------------------------------------------------------

export async function insertServer(db: Executor<EngineDb>, row: Insertable<ToolServerTable>): Promise<void> {
  await db.insertInto('tool_server').values(row).execute();
}

/** A server of the realm by id (undefined for an unknown or foreign id). */
export function findServer(db: Executor<EngineDb>, realmId: string, id: string): Promise<ServerRow | undefined> {
  return db
    .selectFrom('tool_server')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
}

/** The realm's servers by id, newest id first, `limit + 1` rows after the cursor id. */
export function listServerRows(
  db: Executor<EngineDb>,
  realmId: string,
  page: { limit: number; before?: string | undefined; isActive?: boolean | undefined },
): Promise<ServerRow[]> {
  let q = db.selectFrom('tool_server').selectAll().where('realm_id', '=', realmId);
  if (page.before) q = q.where('id', '<', page.before);
  if (page.isActive !== undefined) q = q.where('is_active', '=', page.isActive);
  return q
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

/** Active servers of every realm whose last probe is older than `before` (or never), by id after `afterId`. */
export function listServersDueForProbe(
  db: Executor<EngineDb>,
  page: { before: string; afterId: string; limit: number },
): Promise<ServerRow[]> {
  return db
    .selectFrom('tool_server')
    .selectAll()
    .where('is_active', '=', true)
    .where('id', '>', page.afterId)
    .where((eb) => eb.or([eb('last_probe_at', 'is', null), eb('last_probe_at', '<', page.before)]))
    .orderBy('id')
    .limit(page.limit)
    .execute();
}

/** Servers of the realm among `ids` (any order). */
export function findServersByIds(
  db: Executor<EngineDb>,
  realmId: string,
  ids: readonly string[],
): Promise<ServerRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('tool_server').selectAll().where('realm_id', '=', realmId).where('id', 'in', ids).execute();
}

export async function updateServer(
  db: Executor<EngineDb>,
  id: string,
  fields: Updateable<ToolServerTable>,
): Promise<void> {
  await db.updateTable('tool_server').set(fields).where('id', '=', id).execute();
}

/** Adds one authentication failure to the server's counter. */
export async function recordAuthFailure(db: Executor<EngineDb>, id: string, now: string): Promise<void> {
  await db
    .updateTable('tool_server')
    .set((eb) => ({ auth_failures: eb('auth_failures', '+', 1), last_auth_failure_at: now }))
    .where('id', '=', id)
    .execute();
}

export async function deleteServerRow(db: Executor<EngineDb>, id: string): Promise<void> {
  for (const table of ['tool_server_credential', 'discovered_tool', 'tool_server_resource', 'tool_proposal'] as const)
    await db.deleteFrom(table).where('server_id', '=', id).execute();
  await db.deleteFrom('tool_server').where('id', '=', id).execute();
}

/** The `allowed_mcp_servers` JSON of every agent configuration of the realm. */
export async function listAgentServerLists(
  db: Executor<EngineDb>,
  realmId: string,
): Promise<{ agent_id: string; allowed_mcp_servers: unknown }[]> {
  return db
    .selectFrom('agent_config')
    .select(['agent_id', 'allowed_mcp_servers'])
    .where('realm_id', '=', realmId)
    .execute();
}

// Credential versions ------------------------------------------------------------------------------------------------

export async function insertCredential(
  db: Executor<EngineDb>,
  row: Insertable<ToolServerCredentialTable>,
): Promise<void> {
  await db.insertInto('tool_server_credential').values(row).execute();
}

/** Every credential version of a server, newest first. */
export function listCredentialRows(db: Executor<EngineDb>, serverId: string): Promise<CredentialRow[]> {
  return db
    .selectFrom('tool_server_credential')
    .selectAll()
    .where('server_id', '=', serverId)
    .orderBy('version', 'desc')
    .execute();
}

export function findCredential(
  db: Executor<EngineDb>,
  serverId: string,
  version: number,
): Promise<CredentialRow | undefined> {
  return db
    .selectFrom('tool_server_credential')
    .selectAll()
    .where('server_id', '=', serverId)
    .where('version', '=', version)
    .executeTakeFirst();
}

export async function nextCredentialVersion(db: Executor<EngineDb>, serverId: string): Promise<number> {
  const row = await db
    .selectFrom('tool_server_credential')
    .select((eb) => eb.fn.max('version').as('v'))
    .where('server_id', '=', serverId)
    .executeTakeFirst();
  return Number(row?.v ?? 0) + 1;
}

export async function updateCredential(
  db: Executor<EngineDb>,
  serverId: string,
  version: number,
  fields: Updateable<ToolServerCredentialTable>,
): Promise<void> {
  await db
    .updateTable('tool_server_credential')
    .set(fields)
    .where('server_id', '=', serverId)
    .where('version', '=', version)
    .execute();
}

/** Moves every `status` version of a server (other than `keep`) to `next`. */
export async function demoteCredentials(
  db: Executor<EngineDb>,
  serverId: string,
  from: string,
  keep: number,
  fields: Updateable<ToolServerCredentialTable>,
): Promise<void> {
  await db
    .updateTable('tool_server_credential')
    .set(fields)
    .where('server_id', '=', serverId)
    .where('status', '=', from)
    .where('version', '!=', keep)
    .execute();
}

// Discovered tools ---------------------------------------------------------------------------------------------------

/** Every tool row of a server (including removed ones), by name. */
export function listServerTools(db: Executor<EngineDb>, serverId: string): Promise<ToolRow[]> {
  return db.selectFrom('discovered_tool').selectAll().where('server_id', '=', serverId).orderBy('name').execute();
}

/** A page of a server's tools by name, after `afterName`, `limit + 1` rows. */
export function listToolPage(
  db: Executor<EngineDb>,
  serverId: string,
  page: { limit: number; afterName?: string | undefined; reviewStatus?: string | undefined },
): Promise<ToolRow[]> {
  let q = db
    .selectFrom('discovered_tool')
    .selectAll()
    .where('server_id', '=', serverId)
    .where('removed_at', 'is', null);
  if (page.afterName !== undefined) q = q.where('name', '>', page.afterName);
  if (page.reviewStatus) q = q.where('review_status', '=', page.reviewStatus);
  return q
    .orderBy('name')
    .limit(page.limit + 1)
    .execute();
}

export async function insertTool(db: Executor<EngineDb>, row: Insertable<DiscoveredToolTable>): Promise<void> {
  await db.insertInto('discovered_tool').values(row).execute();
}

export async function updateTool(
  db: Executor<EngineDb>,
  id: string,
  fields: Updateable<DiscoveredToolTable>,
): Promise<void> {
  await db.updateTable('discovered_tool').set(fields).where('id', '=', id).execute();
}

export function findToolRow(db: Executor<EngineDb>, realmId: string, id: string): Promise<ToolRow | undefined> {
  return db
    .selectFrom('discovered_tool')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
}

/** The realm's listed (not removed) tools of a name, on every server. */
export function findToolsByName(db: Executor<EngineDb>, realmId: string, name: string): Promise<ToolRow[]> {
  return db
    .selectFrom('discovered_tool')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name', '=', name)
    .where('removed_at', 'is', null)
    .execute();
}

// Resources and templates --------------------------------------------------------------------------------------------

export async function replaceResources(
  db: Executor<EngineDb>,
  serverId: string,
  rows: Insertable<ToolServerResourceTable>[],
): Promise<void> {
  await db.deleteFrom('tool_server_resource').where('server_id', '=', serverId).execute();
  for (let i = 0; i < rows.length; i += 100)
    await db
      .insertInto('tool_server_resource')
      .values(rows.slice(i, i + 100))
      .execute();
}

/** A page of a server's resources (or templates) by (name, id) after the position, `limit + 1` rows. */
export function listResourcePage(
  db: Executor<EngineDb>,
  serverId: string,
  kind: 'resource' | 'template',
  page: { limit: number; after?: readonly [string, string] | undefined },
): Promise<ResourceRow[]> {
  let q = db.selectFrom('tool_server_resource').selectAll().where('server_id', '=', serverId).where('kind', '=', kind);
  const after = page.after;
  if (after)
    q = q.where((eb) =>
      eb.or([eb('name', '>', after[0]), eb.and([eb('name', '=', after[0]), eb('id', '>', after[1])])]),
    );
  return q
    .orderBy('name')
    .orderBy('id')
    .limit(page.limit + 1)
    .execute();
}

/** Every stored resource or template of a server (bounded by discovery). */
export function listServerResources(db: Executor<EngineDb>, serverId: string): Promise<ResourceRow[]> {
  return db.selectFrom('tool_server_resource').selectAll().where('server_id', '=', serverId).execute();
}

// Tool proposals -----------------------------------------------------------------------------------------------------

export async function insertProposal(db: Executor<EngineDb>, row: Insertable<ToolProposalTable>): Promise<void> {
  await db.insertInto('tool_proposal').values(row).execute();
}

export function listProposalRows(
  db: Executor<EngineDb>,
  realmId: string,
  page: { limit: number; before?: string | undefined; status?: string | undefined; serverId?: string | undefined },
): Promise<ProposalRow[]> {
  let q = db.selectFrom('tool_proposal').selectAll().where('realm_id', '=', realmId);
  if (page.before) q = q.where('id', '<', page.before);
  if (page.status) q = q.where('status', '=', page.status);
  if (page.serverId) q = q.where('server_id', '=', page.serverId);
  return q
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

export function findProposal(db: Executor<EngineDb>, realmId: string, id: string): Promise<ProposalRow | undefined> {
  return db
    .selectFrom('tool_proposal')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
}

/** Names already proposed (any status) for a server. */
export async function listProposalNames(db: Executor<EngineDb>, serverId: string): Promise<string[]> {
  const rows = await db.selectFrom('tool_proposal').select('name').where('server_id', '=', serverId).execute();
  return rows.map((r) => r.name);
}

export async function countPendingProposals(db: Executor<EngineDb>, realmId: string): Promise<number> {
  const row = await db
    .selectFrom('tool_proposal')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('status', '=', 'proposed')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Decides a proposal still `proposed`; false when it was decided already. */
export async function decideProposal(
  db: Executor<EngineDb>,
  id: string,
  fields: Updateable<ToolProposalTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('tool_proposal')
    .set(fields)
    .where('id', '=', id)
    .where('status', '=', 'proposed')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// Routing rules and traces -------------------------------------------------------------------------------------------

export async function insertRule(db: Executor<EngineDb>, row: Insertable<ToolRoutingRuleTable>): Promise<void> {
  await db.insertInto('tool_routing_rule').values(row).execute();
}

export function listRuleRows(db: Executor<EngineDb>, realmId: string): Promise<RuleRow[]> {
  return db.selectFrom('tool_routing_rule').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
}

export function findRule(db: Executor<EngineDb>, realmId: string, id: string): Promise<RuleRow | undefined> {
  return db
    .selectFrom('tool_routing_rule')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
}

export async function updateRule(
  db: Executor<EngineDb>,
  id: string,
  fields: Updateable<ToolRoutingRuleTable>,
): Promise<void> {
  await db.updateTable('tool_routing_rule').set(fields).where('id', '=', id).execute();
}

export async function deleteRule(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('tool_routing_rule').where('id', '=', id).execute();
}

export async function countRules(db: Executor<EngineDb>, realmId: string): Promise<number> {
  const row = await db
    .selectFrom('tool_routing_rule')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Stores a batch of routing decisions in one statement (the buffer holds at most 200). */
export async function insertTraces(db: Executor<EngineDb>, rows: Insertable<ToolRouteTraceTable>[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('tool_route_trace').values(rows).execute();
}

/** The decisions recorded under a trace id in the realm, in order. */
export function listTraceRows(
  db: Executor<EngineDb>,
  realmId: string,
  traceId: string,
): Promise<Selectable<ToolRouteTraceTable>[]> {
  return db
    .selectFrom('tool_route_trace')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('trace_id', '=', traceId)
    .orderBy('seq')
    .limit(100)
    .execute();
}

export async function deleteTracesBefore(db: Executor<EngineDb>, before: string): Promise<void> {
  await db.deleteFrom('tool_route_trace').where('created_at', '<', before).execute();
}

/** The realm's enabled tools (listed, contract passing, approved), bounded (intent resolution). */
export function listRealmEnabledTools(db: Executor<EngineDb>, realmId: string): Promise<ToolRow[]> {
  return db
    .selectFrom('discovered_tool')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('removed_at', 'is', null)
    .where('contract_status', '=', 'passing')
    .where('review_status', '=', 'approved')
    .orderBy('name')
    .limit(2000)
    .execute();
}

// Tool session context -----------------------------------------------------------------------------------------------

export function findSessionContext(
  db: Executor<EngineDb>,
  realmId: string,
  sessionId: string,
): Promise<Selectable<ToolSessionContextTable> | undefined> {
  return db
    .selectFrom('tool_session_context')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
}

/** Inserts or replaces a session's tool context, bumping its version. */
export async function saveSessionContext(
  db: Executor<EngineDb>,
  row: { session_id: string; realm_id: string; context: string; updated_by: string; updated_at: string },
): Promise<void> {
  await db
    .insertInto('tool_session_context')
    .values({ ...row, version: 1 })
    .onConflict((oc) =>
      oc.column('session_id').doUpdateSet((eb) => ({
        context: eb.ref('excluded.context'),
        updated_by: eb.ref('excluded.updated_by'),
        updated_at: eb.ref('excluded.updated_at'),
        version: eb('tool_session_context.version', '+', 1),
      })),
    )
    .execute();
}
