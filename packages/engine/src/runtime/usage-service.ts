import { fromJsonColumn } from '@keel/core';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { picosText } from '../providers/pricing.ts';
import type { RuntimeContext } from './runtime-context.ts';
import { listExecutionUsage } from './usage-store.ts';

/** The most executions one summary reads (newest first); `truncated` says when the window held more. */
export const USAGE_SUMMARY_MAX_ROWS = 50_000;

interface Totals {
  executions: number;
  input_tokens: number;
  output_tokens: number;
  cost: Map<string, bigint>;
}

function picosOf(cost: string): bigint {
  const [whole, fraction = ''] = cost.split('.');
  return BigInt(whole ?? '0') * 10n ** 12n + BigInt(fraction.slice(0, 12).padEnd(12, '0'));
}

function view(totals: Totals) {
  return {
    executions: totals.executions,
    input_tokens: totals.input_tokens,
    output_tokens: totals.output_tokens,
    cost: Object.fromEntries([...totals.cost].map(([currency, picos]) => [currency, picosText(picos)])),
  };
}

/**
 * Realm and per-agent totals of the runtime's executions over the last `days` days (1–90, default 30): runs by
 * status, tokens, and exact cost per currency (decimal strings).
 */
export async function usageSummary(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: { days?: number | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const days = input.days ?? 30;
  const since = new Date(rt.clock() - days * 86_400_000).toISOString();
  const rows = await listExecutionUsage(rt.db, realmId, since, USAGE_SUMMARY_MAX_ROWS + 1);
  const counted = rows.slice(0, USAGE_SUMMARY_MAX_ROWS);
  const fresh = (): Totals => ({ executions: 0, input_tokens: 0, output_tokens: 0, cost: new Map() });
  const realm = fresh();
  const agents = new Map<string, Totals>();
  const statuses: Record<string, number> = {};
  for (const row of counted) {
    statuses[row.status] = (statuses[row.status] ?? 0) + 1;
    let agent = agents.get(row.agent_id);
    if (!agent) {
      agent = fresh();
      agents.set(row.agent_id, agent);
    }
    const usage = fromJsonColumn<{ input_tokens?: number; output_tokens?: number; cost?: string; currency?: string }>(
      row.usage,
    );
    for (const totals of [realm, agent]) {
      totals.executions += 1;
      if (!usage) continue;
      totals.input_tokens += usage.input_tokens ?? 0;
      totals.output_tokens += usage.output_tokens ?? 0;
      if (usage.cost && usage.currency && /^\d+(\.\d+)?$/.test(usage.cost))
        totals.cost.set(usage.currency, (totals.cost.get(usage.currency) ?? 0n) + picosOf(usage.cost));
    }
  }
  return {
    realm_id: realmId,
    since,
    days,
    truncated: rows.length > USAGE_SUMMARY_MAX_ROWS,
    by_status: statuses,
    totals: view(realm),
    agents: [...agents].map(([agentId, totals]) => ({ agent_id: agentId, ...view(totals) })),
  };
}
