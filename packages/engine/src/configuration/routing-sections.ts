import { canonicalJson, fromJsonColumn } from '@keel/core';
import { policyOf } from '../flows/flow-routing-service.ts';
import type { FlowRoutingPolicyRow } from '../flows/flow-routing-store.ts';
import { findRoutingPolicy, upsertRoutingPolicy } from '../flows/flow-routing-store.ts';
import { newId } from '../ids.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { validateRoutingRule } from '../toolservers/routing/index.ts';
import { EXECUTION_LIMITS, rulesChanged } from '../toolservers/tool-execution-service.ts';
import { toolRuntimeOf } from '../toolservers/tool-runtime-registry.ts';
import { deleteRule, insertRule, listRuleRows, type RuleRow } from '../toolservers/toolserver-store.ts';
import { type RealmNames, realmNames, resolveName } from './configuration-refs.ts';
import type { FlowRoutingItem, RoutingRuleItem, ToolRoutingItem } from './configuration-schemas.ts';
import { type ConfigSection, type DeployContext, REALM_KEY } from './configuration-sections.ts';

const unchangedSecret = { secret: { kind: 'none' }, secretChanged: false, missingCredential: null } as const;

/** Rules in a canonical order (rules have no names: a set of them is compared, and stored, in this order). */
const sortRules = (rules: RoutingRuleItem[]) =>
  rules
    .map((rule) => [canonicalJson(rule), rule] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, rule]) => rule);

function ruleItem(row: RuleRow, names: RealmNames): RoutingRuleItem {
  const { id: _id, ...rule } = fromJsonColumn<RoutingRuleItem & { id?: string }>(row.rule);
  if (!rule.servers) return rule;
  return { ...rule, servers: rule.servers.map((id) => names.tool_servers.get(id) ?? id) };
}

/** The rules with their servers as ids of the target realm, validated as the routing-rule routes validate them. */
function resolvedRules(ctx: DeployContext, names: RealmNames, rules: RoutingRuleItem[]) {
  return rules.map((rule, index) => {
    const ref = `tool_routing/rules/${index}`;
    const servers = rule.servers?.map((name) => resolveName(ctx, names, ref, 'tool_servers', name));
    const checked = validateRoutingRule('bundle', { ...rule, ...(servers ? { servers } : {}) });
    if (!checked.ok) throw RuntimeErrors.invalid(`${ref}: ${checked.problems.map((p) => p.message).join('; ')}`);
    const { id: _id, ...stored } = checked.rule;
    return stored;
  });
}

/** The realm's tool routing rules as one set (rules have no names): a deploy replaces the whole set when it differs. */
export const toolRoutingSection: ConfigSection<ToolRoutingItem, RuleRow[], ToolRoutingItem> = {
  name: 'tool_routing',
  single: true,
  key: () => REALM_KEY,
  async read(db, realmId) {
    const rows = await listRuleRows(db, realmId);
    const names = await realmNames(db, realmId);
    return [{ item: { rules: sortRules(rows.map((row) => ruleItem(row, names))) }, row: rows }];
  },
  async prepare(_ctx, item) {
    if (item.rules.length > EXECUTION_LIMITS.rulesPerRealm)
      throw RuntimeErrors.invalid(`tool_routing: a realm holds at most ${EXECUTION_LIMITS.rulesPerRealm} rules`);
    return { rules: sortRules(item.rules) };
  },
  async desired(db, ctx, prepared) {
    resolvedRules(ctx, await realmNames(db, ctx.realmId), prepared.rules);
    return { item: prepared, ...unchangedSecret };
  },
  async write(trx, ctx, prepared, _desired, current) {
    const rules = resolvedRules(ctx, await realmNames(trx, ctx.realmId), prepared.rules);
    for (const row of current?.row ?? []) await deleteRule(trx, row.id);
    for (const rule of rules)
      await insertRule(trx, {
        id: newId(),
        realm_id: ctx.realmId,
        rule: JSON.stringify(rule),
        created_at: ctx.now,
        updated_at: ctx.now,
      });
  },
  async remove() {},
  async committed(rt, realmId) {
    await rulesChanged(toolRuntimeOf(rt), realmId);
  },
};

const canary = (value: number) => Math.round(value * 100) / 100;

/** The realm's flow routing policy (defaults when never set); the fallback flow by name. */
export const flowRoutingSection: ConfigSection<FlowRoutingItem, FlowRoutingPolicyRow | undefined, FlowRoutingItem> = {
  name: 'flow_routing',
  single: true,
  key: () => REALM_KEY,
  async read(db, realmId) {
    const row = await findRoutingPolicy(db, realmId);
    const policy = policyOf(row);
    const names = await realmNames(db, realmId);
    const fallback = policy.fallback_flow_id === null ? null : (names.flows.get(policy.fallback_flow_id) ?? null);
    const { fallback_flow_id: _id, ...rest } = policy;
    return [{ item: { ...rest, fallback_flow: fallback, canary_percentage: canary(rest.canary_percentage) }, row }];
  },
  async prepare(_ctx, item) {
    return { ...item, canary_percentage: canary(item.canary_percentage) };
  },
  async desired(db, ctx, prepared) {
    if (prepared.fallback_flow !== null)
      resolveName(ctx, await realmNames(db, ctx.realmId), 'flow_routing', 'flows', prepared.fallback_flow);
    return { item: prepared, ...unchangedSecret };
  },
  async write(trx, ctx, prepared) {
    const names = await realmNames(trx, ctx.realmId);
    const { fallback_flow: fallback, ...policy } = prepared;
    await upsertRoutingPolicy(trx, {
      realm_id: ctx.realmId,
      ...policy,
      fallback_flow_id: fallback === null ? null : resolveName(ctx, names, 'flow_routing', 'flows', fallback),
      updated_by: ctx.identityId,
      updated_at: ctx.now,
    });
  },
  async remove() {},
};
