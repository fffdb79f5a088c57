import { AppError, fromJsonColumn } from '@keel/core';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import type { RuntimeOutboundEvent } from '../webhooks/events.ts';
import { inTransaction } from '../write.ts';
import { GovernanceErrors } from './governance-errors.ts';
import { findActivePolicy, findPolicy, findQuota, listApprovedValues, type PolicyRow } from './governance-store.ts';

/** What a policy version holds; every field is enforced at run time (see packages/engine/README.md, Governance). */
export interface PolicyRules {
  /** Normalized action types a turn may answer with; null: every action. */
  allowed_actions: string[] | null;
  /** Tool names that may be called (plus approved `tool` allowlist requests); null: every enabled tool. */
  allowed_tools: string[] | null;
  /** Provider types that may serve (plus approved `provider_type` allowlist requests); null: every type. */
  allowed_provider_types: string[] | null;
  /** `no_retention`: no turn of the realm stores message text, and only zero-data-retention providers serve. */
  data_handling: 'standard' | 'no_retention';
}

/** A policy version as runs see it: immutable once created. */
export interface GovernancePolicy {
  id: string;
  version: number;
  rules: PolicyRules;
}

/** Allowlist scopes and the policy field each one extends once approved. */
export const ALLOWLIST_SCOPES = { tool: 'allowed_tools', provider_type: 'allowed_provider_types' } as const;
export type AllowlistScope = keyof typeof ALLOWLIST_SCOPES;

export interface QuotaPolicy {
  windowSeconds: number;
  maxRequests: number | null;
  maxTokens: number | null;
  /** Millionths of the currency unit. */
  maxCostMicros: number | null;
  maxToolCalls: number | null;
  /** Percentages of each limit at which `usage.threshold_reached` is sent (ascending, no duplicates). */
  notifyAtPercent: number[];
}

const CACHE_MS = 5000;
const CHANNEL = 'governance-changed';

interface Cached<T> {
  value: T;
  until: number;
}

interface GovernanceState {
  active: Map<string, Cached<GovernancePolicy | null>>;
  /** Policy versions by id: immutable, so kept (bounded) once read. */
  versions: Map<string, GovernancePolicy>;
  approved: Map<string, Cached<string[]>>;
  quotas: Map<string, Cached<QuotaPolicy | null>>;
  subscribed: Promise<void> | undefined;
}

const states = new WeakMap<RuntimeContext, GovernanceState>();

async function stateOf(rt: RuntimeContext): Promise<GovernanceState> {
  let state = states.get(rt);
  if (!state) {
    const created: GovernanceState = {
      active: new Map(),
      versions: new Map(),
      approved: new Map(),
      quotas: new Map(),
      subscribed: undefined,
    };
    created.subscribed = rt.cache.subscribe(CHANNEL, (realmId) => {
      if (realmId === '*') {
        created.active.clear();
        created.approved.clear();
        created.quotas.clear();
        return;
      }
      created.active.delete(realmId);
      created.quotas.delete(realmId);
      for (const key of created.approved.keys()) if (key.startsWith(`${realmId}|`)) created.approved.delete(key);
    });
    states.set(rt, created);
    state = created;
  }
  await state.subscribed;
  return state;
}

/** Tells every instance (through Redis when configured) that a realm's policy, allowlist or quota changed. */
export async function governanceChanged(rt: RuntimeContext, realmId: string): Promise<void> {
  await rt.cache.publish(CHANNEL, realmId);
}

async function cached<T>(
  rt: RuntimeContext,
  map: Map<string, Cached<T>>,
  key: string,
  load: () => Promise<T>,
): Promise<T> {
  const now = rt.clock();
  const hit = map.get(key);
  if (hit && hit.until > now) return hit.value;
  const value = await load();
  if (map.size > 10_000) map.clear();
  map.set(key, { value, until: now + CACHE_MS });
  return value;
}

export function toPolicy(row: PolicyRow): GovernancePolicy {
  return { id: row.id, version: row.version, rules: fromJsonColumn<PolicyRules>(row.rules) };
}

/** The realm's active policy version (cached 5 s, dropped on every activation), or null when it has none. */
export async function activePolicy(rt: RuntimeContext, realmId: string): Promise<GovernancePolicy | null> {
  const state = await stateOf(rt);
  return cached(rt, state.active, realmId, async () => {
    const row = await findActivePolicy(rt.db, realmId);
    return row ? toPolicy(row) : null;
  });
}

/** The policy version pinned to an execution (null: none was active when it was created). */
export async function pinnedPolicy(
  rt: RuntimeContext,
  realmId: string,
  policyVersionId: string | null,
): Promise<GovernancePolicy | null> {
  if (policyVersionId === null) return null;
  const state = await stateOf(rt);
  const hit = state.versions.get(policyVersionId);
  if (hit) return hit;
  const row = await findPolicy(rt.db, realmId, policyVersionId);
  if (!row) return null;
  const policy = toPolicy(row);
  if (state.versions.size > 10_000) state.versions.clear();
  state.versions.set(policyVersionId, policy);
  return policy;
}

/** `{id, version}` of a policy for an execution's `pinned` record. */
export function pinOf(policy: GovernancePolicy | null): { id: string; version: number } | null {
  return policy ? { id: policy.id, version: policy.version } : null;
}

async function permits(
  rt: RuntimeContext,
  realmId: string,
  policy: GovernancePolicy | null,
  scope: AllowlistScope,
  value: string,
): Promise<boolean> {
  const listed = policy?.rules[ALLOWLIST_SCOPES[scope]];
  if (!listed || listed.includes(value)) return true;
  const state = await stateOf(rt);
  const approved = await cached(rt, state.approved, `${realmId}|${scope}`, () =>
    listApprovedValues(rt.db, realmId, scope),
  );
  return approved.includes(value);
}

/** Refuses (403 GOVERNANCE_POLICY_DENIED) a tool the policy does not allow and no approved allowlist request adds. */
export async function checkToolAllowed(
  rt: RuntimeContext,
  realmId: string,
  policy: GovernancePolicy | null,
  toolName: string,
): Promise<void> {
  if (!(await permits(rt, realmId, policy, 'tool', toolName)))
    throw GovernanceErrors.policyDenied(`The tool ${toolName}`, policy!.version);
}

/** Refuses a provider type the policy does not allow and no approved allowlist request adds. */
export async function checkProviderAllowed(
  rt: RuntimeContext,
  realmId: string,
  policy: GovernancePolicy | null,
  providerType: string,
): Promise<void> {
  if (!(await permits(rt, realmId, policy, 'provider_type', providerType)))
    throw GovernanceErrors.policyDenied(`The provider type ${providerType}`, policy!.version);
}

/** Whether the policy lets a turn answer with this normalized action. */
export function actionAllowed(policy: GovernancePolicy | null, actionType: string): boolean {
  const allowed = policy?.rules.allowed_actions;
  return !allowed || allowed.includes(actionType);
}

/** A decimal amount (up to 6 places) in millionths. */
export function toMicros(decimal: string): number {
  const [whole, fraction = ''] = decimal.split('.');
  return Number(whole) * 1_000_000 + Number(fraction.padEnd(6, '0'));
}

export function quotaOf(row: Awaited<ReturnType<typeof findQuota>>): QuotaPolicy | null {
  if (!row) return null;
  return {
    windowSeconds: row.window_seconds,
    maxRequests: row.max_requests,
    maxTokens: row.max_tokens === null ? null : Number(row.max_tokens),
    maxCostMicros: row.max_cost === null ? null : toMicros(row.max_cost),
    maxToolCalls: row.max_tool_calls,
    notifyAtPercent: fromJsonColumn<number[] | null>(row.notify_at_percent ?? null) ?? [],
  };
}

async function realmQuota(rt: RuntimeContext, realmId: string): Promise<QuotaPolicy | null> {
  const state = await stateOf(rt);
  return cached(rt, state.quotas, realmId, async () => quotaOf(await findQuota(rt.db, realmId)));
}

type Metric = 'requests' | 'tokens' | 'cost' | 'tool_calls';

function limitOf(quota: QuotaPolicy, metric: Metric): number | null {
  return {
    requests: quota.maxRequests,
    tokens: quota.maxTokens,
    cost: quota.maxCostMicros,
    tool_calls: quota.maxToolCalls,
  }[metric];
}

function shown(metric: Metric, value: number): string {
  return metric === 'cost' ? (value / 1_000_000).toFixed(6).replace(/\.?0+$/, '') : String(value);
}

/**
 * Adds to the realm's counters of the current window (shared through Redis when configured) and refuses with
 * 429 GOVERNANCE_QUOTA_EXCEEDED and `Retry-After` (seconds to the window's end) when a limit is passed: `add`
 * counts (a refused request stays counted), `full` metrics only refuse once their total has reached the limit
 * (tokens and cost are known after a run, so a run starts while any budget is left).
 */
async function admit(
  rt: RuntimeContext,
  realmId: string,
  add: Partial<Record<Metric, number>>,
  full: readonly Metric[],
): Promise<void> {
  const quota = await realmQuota(rt, realmId);
  if (!quota) return;
  const metrics = [...new Set([...Object.keys(add), ...full] as Metric[])].filter((m) => limitOf(quota, m) !== null);
  if (metrics.length === 0) return;
  const windowMs = quota.windowSeconds * 1000;
  const counts = await rt.counters.add(
    metrics.map((metric) => ({ key: `${realmId}:${metric}`, amount: add[metric] ?? 0 })),
    windowMs,
  );
  await notifyThresholds(
    rt,
    realmId,
    quota,
    metrics.map((metric, i) => ({ metric, amount: add[metric] ?? 0, ...counts[i]! })),
  );
  metrics.forEach((metric, i) => {
    const limit = limitOf(quota, metric)!;
    const { total, resetAt } = counts[i]!;
    const over = metric in add ? total > limit : total >= limit;
    if (!over) return;
    const retryAfter = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
    throw Object.assign(
      GovernanceErrors.quotaExceeded(
        metric,
        quota.windowSeconds,
        shown(metric, Math.min(total, limit)),
        shown(metric, limit),
        retryAfter,
      ),
      { headers: { 'retry-after': String(retryAfter) } },
    );
  });
}

/** A run (chat, execute, queued or synchronous execution): one request, and tokens and cost must not be used up. */
export function admitRun(rt: RuntimeContext, realmId: string): Promise<void> {
  return admit(rt, realmId, { requests: 1 }, ['tokens', 'cost']);
}

/** Tool calls (REST tool execution, proxy and aggregate calls, a flow's tool step): one each. */
export function admitToolCall(rt: RuntimeContext, realmId: string, calls = 1): Promise<void> {
  return admit(rt, realmId, { tool_calls: calls }, []);
}

/**
 * A model call of a durable flow execution (ai, ai_decision, supervisor round, specialist): refused while the
 * window's tokens or cost are used up; counts nothing itself (the execution's request was counted when it was
 * created, its tokens and cost are charged by `chargeRun` once the call answered).
 */
export function admitModelCall(rt: RuntimeContext, realmId: string): Promise<void> {
  return admit(rt, realmId, {}, ['tokens', 'cost']);
}

/** The seconds to wait of a GOVERNANCE_QUOTA_EXCEEDED refusal (its `Retry-After`); undefined for any other error. */
export function quotaRetryAfter(error: unknown): number | undefined {
  if (!(error instanceof AppError) || error.code !== 'GOVERNANCE_QUOTA_EXCEEDED') return undefined;
  const header = error.headers?.['retry-after'];
  return header === undefined ? 1 : Number(header);
}

/** Adds a finished run's tokens and cost to the window (never refuses: the run already happened). */
export async function chargeRun(
  rt: RuntimeContext,
  realmId: string,
  usage: { tokens: number; costPicos: bigint },
): Promise<void> {
  const quota = await realmQuota(rt, realmId);
  if (!quota || (quota.maxTokens === null && quota.maxCostMicros === null)) return;
  const added = [
    { metric: 'tokens' as const, amount: usage.tokens },
    { metric: 'cost' as const, amount: Number(usage.costPicos / 1_000_000n) },
  ];
  const counts = await rt.counters.add(
    added.map(({ metric, amount }) => ({ key: `${realmId}:${metric}`, amount })),
    quota.windowSeconds * 1000,
  );
  await notifyThresholds(
    rt,
    realmId,
    quota,
    added.map((entry, i) => ({ ...entry, ...counts[i]! })),
  );
}

/** The runtime webhook event of a quota threshold crossed in the current window. */
export const THRESHOLD_EVENT = 'usage.threshold_reached';

/**
 * Sends `usage.threshold_reached` (through the outbox, to the realm's runtime webhooks that select it) for every
 * `notify_at_percent` threshold of a limited metric that this addition crossed: the counter's total before it was
 * below `limit × percent / 100`, after it at or above. The counters are atomic (one Redis INCRBY across instances),
 * so exactly one addition crosses a threshold in a window: one event per threshold per metric per window. Sent
 * after the counting (at most once: a process that dies in between sends none).
 */
async function notifyThresholds(
  rt: RuntimeContext,
  realmId: string,
  quota: QuotaPolicy,
  added: readonly { metric: Metric; amount: number; total: number; resetAt: number }[],
): Promise<void> {
  if (quota.notifyAtPercent.length === 0) return;
  const events: RuntimeOutboundEvent[] = [];
  for (const { metric, amount, total, resetAt } of added) {
    const limit = limitOf(quota, metric);
    if (limit === null || limit === 0 || amount <= 0) continue;
    const before = total - amount;
    for (const percent of quota.notifyAtPercent) {
      const threshold = (limit * percent) / 100;
      if (!(before < threshold && total >= threshold)) continue;
      events.push({
        event: THRESHOLD_EVENT,
        realmId,
        data: {
          metric,
          threshold_percent: percent,
          limit: shown(metric, limit),
          used: shown(metric, total),
          window_seconds: quota.windowSeconds,
          window_started_at: new Date(resetAt - quota.windowSeconds * 1000).toISOString(),
          window_resets_at: new Date(resetAt).toISOString(),
        },
      });
    }
  }
  if (events.length === 0) return;
  await inTransaction(rt.engine, async (_trx, sink) => {
    for (const event of events) sink.emitRuntime(event);
  }).catch((error: unknown) => rt.log.warn({ err: error, realmId }, 'usage threshold events not queued'));
}

/** The realm's counters in the current window (for the snapshot). */
export async function quotaUsage(
  rt: RuntimeContext,
  realmId: string,
  quota: QuotaPolicy,
): Promise<{ requests: number; tokens: number; cost: string; tool_calls: number; window_resets_at: string }> {
  const metrics: Metric[] = ['requests', 'tokens', 'cost', 'tool_calls'];
  const counts = await rt.counters.add(
    metrics.map((metric) => ({ key: `${realmId}:${metric}`, amount: 0 })),
    quota.windowSeconds * 1000,
  );
  return {
    requests: counts[0]!.total,
    tokens: counts[1]!.total,
    cost: shown('cost', counts[2]!.total),
    tool_calls: counts[3]!.total,
    window_resets_at: new Date(counts[0]!.resetAt).toISOString(),
  };
}
