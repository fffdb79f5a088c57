import { fromJsonColumn, toBoolean, toIsoString } from '@keel/core';
import { FlowErrors } from '../flows/flow-errors.ts';
import { findFlow } from '../flows/flow-store.ts';
import { checkRealmField, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { promptExists } from '../prompts/prompt-service.ts';
import { providerExists } from '../providers/provider-service.ts';
import type { ClientCapabilities } from '../runtime/actions.ts';
import { checkJson } from '../runtime/json-bounds.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import { type AgentSettings, effectiveSettings } from './agent-settings.ts';
import {
  type AgentWithConfigRow,
  clearOtherDefaultAgents,
  findAgentWithConfig,
  listAgentProfileRows,
  lockAgentIdentity,
  setAgentConfigColumns,
  upsertAgentConfig,
} from './agent-store.ts';

/** When a request names no agent: the first matching rule by descending priority picks it. */
export interface AgentProfile {
  priority: number;
  channel?: string[] | undefined;
  client_capabilities?: { vision?: boolean | undefined; actions?: string[] | undefined } | undefined;
  user_segment?: string[] | undefined;
  deployment?: string[] | undefined;
}

/** An agent as a run needs it (cached per realm). */
export interface AgentRuntime {
  id: string;
  realmId: string;
  name: string;
  status: string;
  systemPromptId: string | null;
  aiProviderId: string | null;
  defaultFlowId: string | null;
  allowedMcpServers: string[];
  metadata: Record<string, unknown> | null;
  settings: AgentSettings;
  profile: AgentProfile | null;
  isDefault: boolean;
  updatedAt: string | null;
}

export interface AgentConfigInput {
  realm_id?: string | undefined;
  system_prompt_id?: string | null | undefined;
  ai_provider_id?: string | null | undefined;
  default_flow_id?: string | null | undefined;
  allowed_mcp_servers?: string[] | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  settings?: Partial<AgentSettings> | null | undefined;
  profile?: AgentProfile | null | undefined;
  is_default?: boolean | undefined;
}

function toAgentRuntime(realmId: string, row: AgentWithConfigRow): AgentRuntime {
  return {
    id: row.id,
    realmId,
    name: row.username,
    status: row.status,
    systemPromptId: row.system_prompt_id ?? null,
    aiProviderId: row.ai_provider_id ?? null,
    defaultFlowId: row.default_flow_id ?? null,
    allowedMcpServers: row.allowed_mcp_servers == null ? [] : fromJsonColumn<string[]>(row.allowed_mcp_servers),
    metadata: row.metadata == null ? null : fromJsonColumn(row.metadata),
    settings: effectiveSettings(row.settings == null ? null : fromJsonColumn(row.settings)),
    profile: row.profile == null ? null : fromJsonColumn<AgentProfile>(row.profile),
    isDefault: row.is_default == null ? false : toBoolean(row.is_default),
    updatedAt: row.updated_at == null ? null : toIsoString(row.updated_at),
  };
}

/** An agent identity of the realm with its configuration (defaults when never configured); cached. */
export async function loadAgent(
  rt: RuntimeContext,
  realmId: string,
  agentId: string,
): Promise<AgentRuntime | undefined> {
  return rt.realms.get(realmId, `agent:${agentId.toLowerCase()}`, async () => {
    const row = await findAgentWithConfig(rt.db, realmId, agentId);
    return row ? toAgentRuntime(realmId, row) : undefined;
  });
}

function toConfigView(agent: AgentRuntime) {
  return {
    agent_id: agent.id,
    realm_id: agent.realmId,
    name: agent.name,
    status: agent.status,
    system_prompt_id: agent.systemPromptId,
    ai_provider_id: agent.aiProviderId,
    default_flow_id: agent.defaultFlowId,
    allowed_mcp_servers: agent.allowedMcpServers,
    metadata: agent.metadata,
    settings: agent.settings,
    profile: agent.profile,
    is_default: agent.isDefault,
    updated_at: agent.updatedAt,
  };
}

export async function getAgentConfig(rt: RuntimeContext, principal: RuntimePrincipal, agentId: string) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await findAgentWithConfig(rt.db, realmId, agentId);
  if (!row) throw RuntimeErrors.notFound('Agent', agentId);
  return toConfigView(toAgentRuntime(realmId, row));
}

/** The rules of an agent configuration that its schema cannot say (400 RUNTIME_INVALID_REQUEST). */
export function checkAgentConfig(input: Pick<AgentConfigInput, 'settings' | 'profile' | 'metadata'>): void {
  const effective = effectiveSettings(input.settings ?? {});
  if (effective.node_timeout_ms > effective.max_latency_ms)
    throw RuntimeErrors.invalid('settings.node_timeout_ms must not exceed settings.max_latency_ms');
  if (input.profile) {
    const p = input.profile;
    const criteria = [p.channel, p.client_capabilities, p.user_segment, p.deployment].filter((c) => c !== undefined);
    if (criteria.length === 0)
      throw RuntimeErrors.invalid(
        'profile needs at least one of channel, client_capabilities, user_segment, deployment',
      );
  }
  checkJson(input.metadata, 'metadata');
}

/**
 * Replaces an agent's configuration. Referenced prompt, provider, flow and tool servers must exist in the
 * realm (404 otherwise: ids never cross realms; flows and tool servers are unknown until their registries
 * exist). A prompt grants no access; attached servers bound the tools available.
 */
export async function putAgentConfig(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  agentId: string,
  input: AgentConfigInput,
) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const agent = await findAgentWithConfig(rt.db, realmId, agentId);
  if (!agent) throw RuntimeErrors.notFound('Agent', agentId);
  const settings = input.settings ?? {};
  checkAgentConfig(input);
  const promptId = input.system_prompt_id?.toLowerCase() ?? null;
  const providerId = input.ai_provider_id?.toLowerCase() ?? null;
  const flowId = input.default_flow_id?.toLowerCase() ?? null;
  const servers = [...new Set((input.allowed_mcp_servers ?? []).map((s) => s.toLowerCase()))];
  if (promptId && !(await promptExists(rt.db, realmId, promptId))) throw RuntimeErrors.notFound('Prompt', promptId);
  if (providerId && !(await providerExists(rt.db, realmId, providerId)))
    throw RuntimeErrors.notFound('Provider', providerId);
  if (flowId && !(await rt.extensions.flows?.exists(realmId, flowId))) throw RuntimeErrors.notFound('Flow', flowId);
  for (const server of servers)
    if (!(await rt.extensions.toolServers?.exists(realmId, server)))
      throw RuntimeErrors.notFound('Tool server', server);
  const now = nowIso(rt);
  const row = {
    agent_id: agent.id,
    realm_id: realmId,
    system_prompt_id: promptId,
    ai_provider_id: providerId,
    default_flow_id: flowId,
    allowed_mcp_servers: JSON.stringify(servers),
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    settings: JSON.stringify(settings),
    profile: input.profile ? JSON.stringify(input.profile) : null,
    is_default: input.is_default ?? false,
    updated_at: now,
  };
  await inTransaction(rt.engine, async (trx) => {
    await upsertAgentConfig(trx, row, now);
    if (row.is_default) await clearOtherDefaultAgents(trx, realmId, agent.id, now);
  });
  await rt.realms.invalidate(realmId);
  return getAgentConfig(rt, principal, agent.id);
}

/** Agents attach at most this many tool servers (the same bound as `allowed_mcp_servers` in the configuration). */
export const MAX_ATTACHED_SERVERS = 50;

/**
 * Attaches (`attach: true`) or detaches a registered tool server of the realm; an agent never configured gets a
 * configuration with defaults and the one server. Attaching twice is a no-op; detaching a server that is not
 * attached is a 404, like an unknown or foreign id.
 */
export async function setServerAttachment(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  agentId: string,
  serverId: string,
  attach: boolean,
) {
  const realmId = requirePermission(principal, 'config:write');
  const id = serverId.toLowerCase();
  if (attach && !(await rt.extensions.toolServers?.exists(realmId, id)))
    throw RuntimeErrors.notFound('Tool server', id);
  const agentKey = await inTransaction(rt.engine, async (trx) => {
    // The list is read and written under the agent's row lock (PostgreSQL; SQLite writes are serialised), so two
    // concurrent attaches both land.
    await lockAgentIdentity(trx, agentId);
    const agent = await findAgentWithConfig(trx, realmId, agentId);
    if (!agent) throw RuntimeErrors.notFound('Agent', agentId);
    const current = agent.allowed_mcp_servers == null ? [] : fromJsonColumn<string[]>(agent.allowed_mcp_servers);
    if (!attach && !current.includes(id)) throw RuntimeErrors.notFound('Attached tool server', id);
    if (attach && current.includes(id)) return agent.id;
    if (attach && current.length >= MAX_ATTACHED_SERVERS)
      throw RuntimeErrors.limit(`An agent attaches at most ${MAX_ATTACHED_SERVERS} tool servers`);
    const servers = JSON.stringify(attach ? [...current, id] : current.filter((s) => s !== id));
    await setAgentConfigColumns(trx, { agentId: agent.id, realmId, now: nowIso(rt) }, { allowed_mcp_servers: servers });
    return agent.id;
  });
  await rt.realms.invalidate(realmId);
  return getAgentConfig(rt, principal, agentKey);
}

/**
 * Selects the agent's active flow: it becomes the agent's `default_flow_id`, which a turn runs when it names no flow,
 * its session has none pinned and intent routing picks none. The flow must be an active flow of the realm (404 like
 * an unknown one otherwise; 409 FLOW_NOT_ACTIVE for a draft, deactivated or archived flow). An agent never configured
 * gets a configuration with defaults. Answers the configuration.
 */
export async function selectAgentFlow(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  agentId: string,
  flowId: string,
) {
  const realmId = requirePermission(principal, 'config:write');
  const id = flowId.toLowerCase();
  const flow = await findFlow(rt.db, realmId, id);
  if (!flow) throw RuntimeErrors.notFound('Flow', id);
  if (!toBoolean(flow.is_active)) throw FlowErrors.notActive(id);
  const agentKey = await inTransaction(rt.engine, async (trx) => {
    await lockAgentIdentity(trx, agentId);
    const agent = await findAgentWithConfig(trx, realmId, agentId);
    if (!agent) throw RuntimeErrors.notFound('Agent', agentId);
    await setAgentConfigColumns(trx, { agentId: agent.id, realmId, now: nowIso(rt) }, { default_flow_id: id });
    return agent.id;
  });
  await rt.realms.invalidate(realmId);
  return getAgentConfig(rt, principal, agentKey);
}

interface ProfileEntry {
  agentId: string;
  profile: AgentProfile | null;
  isDefault: boolean;
}

async function loadProfiles(rt: RuntimeContext, realmId: string): Promise<ProfileEntry[]> {
  return rt.realms.get(realmId, 'agent-profiles', async () => {
    const rows = await listAgentProfileRows(rt.db, realmId);
    const entries = rows.map((row) => ({
      agentId: row.agent_id,
      profile: row.profile === null ? null : fromJsonColumn<AgentProfile>(row.profile),
      isDefault: toBoolean(row.is_default),
    }));
    // Descending priority; ties go to the agent configured first (ids are time-ordered), so the choice is stable.
    return entries.sort((a, b) => (b.profile?.priority ?? -1) - (a.profile?.priority ?? -1));
  });
}

function matches(profile: AgentProfile, request: AgentRequestFacts): boolean {
  if (profile.channel && (request.channel === null || !profile.channel.includes(request.channel))) return false;
  const wanted = profile.client_capabilities;
  if (wanted) {
    if (wanted.vision !== undefined && (request.capabilities?.vision ?? false) !== wanted.vision) return false;
    const offered = request.capabilities?.actions;
    if (wanted.actions && (!offered || !wanted.actions.every((a) => offered.includes(a)))) return false;
  }
  const segment = request.metadata.user_segment;
  if (profile.user_segment && (typeof segment !== 'string' || !profile.user_segment.includes(segment))) return false;
  const deployment = request.metadata.deployment;
  if (profile.deployment && (typeof deployment !== 'string' || !profile.deployment.includes(deployment))) return false;
  return true;
}

export interface AgentRequestFacts {
  channel: string | null;
  capabilities: ClientCapabilities | undefined;
  metadata: Record<string, unknown>;
}

/**
 * The agent for a request that names none: profile rules by descending priority on channel,
 * client_capabilities, metadata.user_segment and metadata.deployment; else the realm default agent.
 */
export async function resolveAgent(
  rt: RuntimeContext,
  realmId: string,
  request: AgentRequestFacts,
): Promise<{ agentId: string; source: 'profile_rule' | 'realm_default'; priority: number | null }> {
  const entries = await loadProfiles(rt, realmId);
  for (const entry of entries)
    if (entry.profile && matches(entry.profile, request))
      return { agentId: entry.agentId, source: 'profile_rule', priority: entry.profile.priority };
  const fallback = entries.find((entry) => entry.isDefault);
  if (!fallback) throw RuntimeErrors.agentNotResolved();
  return { agentId: fallback.agentId, source: 'realm_default', priority: null };
}
