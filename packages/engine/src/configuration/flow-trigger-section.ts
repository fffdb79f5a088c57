import { createTrigger, type TriggerInput, toTriggerView } from '../flows/flow-trigger-service.ts';
import { deleteTriggerRow, type TriggerRow } from '../flows/flow-trigger-store.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { isPlanned, realmNames, resolveName } from './configuration-refs.ts';
import type { FlowTriggerItem } from './configuration-schemas.ts';
import { about, type ConfigSection, tooMany } from './configuration-sections.ts';
import { listRealmTriggers } from './configuration-store.ts';
import { runtimeOn } from './flow-section.ts';

/** The trigger view's fields that are state or ids of the realm, not configuration. */
const NOT_CONFIG = new Set(['id', 'flow_id', 'agent_id', 'next_run_at', 'created_at', 'updated_at']);

function triggerItem(row: TriggerRow & { flow_name: string }, agents: Map<string, string>): FlowTriggerItem {
  const fields: Record<string, unknown> = {};
  // Every field of the trigger service's view but ids and state (a field it gains travels too); nulls are absent.
  for (const [key, value] of Object.entries(toTriggerView(row)))
    if (!NOT_CONFIG.has(key) && value !== null) fields[key] = value;
  const agent = row.agent_id === null ? null : (agents.get(row.agent_id) ?? null);
  return { flow: row.flow_name, ...fields, agent } as FlowTriggerItem;
}

const triggerKey = (item: { flow: string; name: string }) => `${item.flow}/${item.name}`;

/**
 * Flow triggers, keyed `<flow>/<name>`, written after flows and agents (they name both). A new or changed trigger is
 * created by the trigger service's own `createTrigger` (its validation and first schedule slot) in the deploy's
 * transaction; a changed one replaces the old (fire records start anew). Triggers hold no secret.
 */
export const flowTriggerSection: ConfigSection<FlowTriggerItem, TriggerRow, FlowTriggerItem> = {
  name: 'flow_triggers',
  key: triggerKey,
  async read(db, realmId, limit) {
    const rows = await listRealmTriggers(db, realmId, limit + 1);
    if (rows.length > limit) tooMany('flow triggers', limit);
    const { agents } = await realmNames(db, realmId);
    const items = rows.map((row) => ({ item: triggerItem(row, agents), row }));
    const keys = new Set<string>();
    for (const { item } of items) {
      const key = triggerKey(item);
      if (keys.has(key))
        throw RuntimeErrors.conflict(
          `flow_triggers: two triggers are ${key}; a bundle names triggers by flow and name`,
        );
      keys.add(key);
    }
    return items;
  },
  async prepare(_ctx, item) {
    return { ...item, input: item.input ?? {}, is_active: item.is_active ?? true };
  },
  async desired(db, ctx, prepared) {
    const ref = `flow_triggers/${triggerKey(prepared)}`;
    const names = await realmNames(db, ctx.realmId);
    resolveName(ctx, names, ref, 'flows', prepared.flow);
    if (prepared.agent !== null) resolveName(ctx, names, ref, 'agents', prepared.agent);
    return { item: prepared, secret: { kind: 'none' }, secretChanged: false, missingCredential: null };
  },
  async write(trx, ctx, prepared, _desired, current) {
    const ref = `flow_triggers/${triggerKey(prepared)}`;
    const names = await realmNames(trx, ctx.realmId);
    const flowId = resolveName(ctx, names, ref, 'flows', prepared.flow);
    const agentId = prepared.agent === null ? undefined : resolveName(ctx, names, ref, 'agents', prepared.agent);
    if (isPlanned(flowId) || (agentId !== undefined && isPlanned(agentId)))
      throw RuntimeErrors.invalid(`${ref}: its flow or agent is not written`);
    if (current) await deleteTriggerRow(trx, current.row.id);
    const { flow: _flow, agent: _agent, ...fields } = prepared;
    const input = { ...fields, ...(agentId === undefined ? {} : { agent_id: agentId }) } as TriggerInput;
    await about(ref, () => createTrigger(runtimeOn(ctx.rt, trx), ctx.principal, flowId, input));
  },
  async remove(db, _ctx, current, dry) {
    if (!dry) await deleteTriggerRow(db, current.row.id);
  },
};
