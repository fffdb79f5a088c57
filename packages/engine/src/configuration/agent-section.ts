import { canonicalJson, fromJsonColumn, toBoolean } from '@keel/core';
import { checkAgentConfig } from '../agents/agent-service.ts';
import { clearOtherDefaultAgents, upsertAgentConfig } from '../agents/agent-store.ts';
import { createIdentity } from '../identity/identity-service.ts';
import { deleteIdentity, updateIdentity, upsertMember } from '../identity/identity-store.ts';
import { requireGrantable } from '../identity/roles.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { isPlanned, type RealmNames, realmNames, resolveName } from './configuration-refs.ts';
import type { AgentItem } from './configuration-schemas.ts';
import { about, type ConfigSection, type DeployContext, tooMany } from './configuration-sections.ts';
import { listRealmAgents, type RealmAgentRow, setAgentDefaultFlow } from './configuration-store.ts';

const json = <T>(value: unknown, fallback: T): T => (value == null ? fallback : (fromJsonColumn<T>(value) ?? fallback));

function agentItem(row: RealmAgentRow, names: RealmNames): AgentItem {
  const prompt = row.system_prompt_id ? names.prompts.get(row.system_prompt_id) : undefined;
  const at = prompt?.lastIndexOf('@') ?? -1;
  const servers = json<string[]>(row.allowed_mcp_servers, [])
    .map((id) => names.tool_servers.get(id))
    .filter((name): name is string => name !== undefined);
  return {
    name: row.username,
    display_name: row.display_name,
    role: row.role as AgentItem['role'],
    system_prompt: prompt ? { key: prompt.slice(0, at), version: Number(prompt.slice(at + 1)) } : null,
    provider: (row.ai_provider_id && names.providers.get(row.ai_provider_id)) || null,
    default_flow: (row.default_flow_id && names.flows.get(row.default_flow_id)) || null,
    allowed_mcp_servers: [...new Set(servers)].sort(),
    metadata: json<Record<string, unknown> | null>(row.metadata, null),
    settings: json<AgentItem['settings']>(row.settings, {}),
    profile: json<AgentItem['profile']>(row.profile, null),
    is_default: row.is_default == null ? false : toBoolean(row.is_default),
  };
}

/**
 * The ids an agent item names, in the target realm (400 for a name that is neither there nor in the bundle). Agents
 * are written before flows (flows name agents as specialists), so a default flow the bundle creates resolves to a
 * placeholder (`isPlanned`) until the flows are written.
 */
function resolveAgentRefs(ctx: DeployContext, names: RealmNames, item: AgentItem) {
  const ref = `agents/${item.name}`;
  const prompt = item.system_prompt;
  return {
    system_prompt_id: prompt
      ? resolveName(ctx, names, ref, 'prompts', `${prompt.key}@${prompt.version}`, prompt.key)
      : null,
    ai_provider_id: item.provider === null ? null : resolveName(ctx, names, ref, 'providers', item.provider),
    default_flow_id:
      item.default_flow === null
        ? null
        : resolveName(ctx, names, ref, 'flows', item.default_flow, item.default_flow, true),
    allowed_mcp_servers: item.allowed_mcp_servers.map((name) => resolveName(ctx, names, ref, 'tool_servers', name)),
  };
}

/**
 * Agents by username: the identity (display name, role in the realm) with its configuration. Creating, changing
 * or deleting one needs realm:manage (owner or admin), as the agent identity routes do.
 */
export const agentSection: ConfigSection<AgentItem, RealmAgentRow, AgentItem> = {
  name: 'agents',
  permission: 'realm:manage',
  key: (item) => item.name,
  async read(db, realmId, limit) {
    const rows = await listRealmAgents(db, realmId, limit + 1);
    if (rows.length > limit) tooMany('agents', limit);
    const names = await realmNames(db, realmId);
    return rows.map((row) => ({ item: agentItem(row, names), row }));
  },
  async prepare(_ctx, item) {
    return about(`agents/${item.name}`, () => {
      checkAgentConfig(item);
      return { ...item, allowed_mcp_servers: [...new Set(item.allowed_mcp_servers)].sort() };
    });
  },
  async desired(db, ctx, prepared) {
    // The references must resolve now (a dry run fails on a dangling name just as the deploy would).
    resolveAgentRefs(ctx, await realmNames(db, ctx.realmId), prepared);
    return { item: prepared, secret: { kind: 'none' }, secretChanged: false, missingCredential: null };
  },
  async write(trx, ctx, prepared, _desired, current) {
    const ids = resolveAgentRefs(ctx, await realmNames(trx, ctx.realmId), prepared);
    if (!current || current.item.role !== prepared.role) requireGrantable(ctx.principal, prepared.role);
    let agentId = current?.row.id;
    if (!agentId) {
      const identity = await createIdentity(trx, {
        username: prepared.name,
        userType: 'agent',
        realmId: ctx.realmId,
        displayName: prepared.display_name,
        now: ctx.now,
      });
      agentId = identity.id;
    } else if (current!.item.display_name !== prepared.display_name)
      await updateIdentity(trx, agentId, { display_name: prepared.display_name, updated_at: ctx.now });
    if (!current || current.item.role !== prepared.role)
      await upsertMember(trx, { realm_id: ctx.realmId, identity_id: agentId, role: prepared.role, now: ctx.now });
    if (current && canonicalJson(agentConfigOf(current.item)) === canonicalJson(agentConfigOf(prepared))) return;
    const config = prepared;
    const flowId = ids.default_flow_id;
    if (flowId !== null && isPlanned(flowId)) {
      // The second phase: the flow this deploy creates gets its id once the flows section wrote it.
      ids.default_flow_id = null;
      const id = agentId;
      ctx.deferred.push(async (trx) => {
        const names = await realmNames(trx, ctx.realmId);
        const ref = `agents/${prepared.name}`;
        await setAgentDefaultFlow(trx, id, resolveName(ctx, names, ref, 'flows', prepared.default_flow!), ctx.now);
      });
    }
    await upsertAgentConfig(
      trx,
      {
        agent_id: agentId,
        realm_id: ctx.realmId,
        ...ids,
        allowed_mcp_servers: JSON.stringify(ids.allowed_mcp_servers),
        metadata: config.metadata ? JSON.stringify(config.metadata) : null,
        settings: JSON.stringify(config.settings),
        profile: config.profile ? JSON.stringify(config.profile) : null,
        is_default: config.is_default,
        updated_at: ctx.now,
      },
      ctx.now,
    );
    if (config.is_default) await clearOtherDefaultAgents(trx, ctx.realmId, agentId, ctx.now);
  },
  async remove(db, ctx, current, dry) {
    if (current.row.id === ctx.identityId)
      throw RuntimeErrors.inUse(`agents/${current.item.name} is the caller: keep it in the bundle`);
    requireGrantable(ctx.principal, current.item.role);
    if (!dry) await deleteIdentity(db, current.row.id);
  },
  async committed(rt) {
    await rt.principals.invalidate();
  },
};

/** The configuration part of an agent item (what PUT .../config replaces). */
function agentConfigOf(item: AgentItem) {
  const { name: _n, display_name: _d, role: _r, ...config } = item;
  return config;
}
