// Route decisions: which registered server(s) serve one tool call, by rule, filter and score — with a trace.
//
// Pure and synchronous: the caller passes the active rules, the candidate servers (registry rows joined with the
// tool's review state, the agent's attachments and the observed stats) and the request. Nothing qualifies → the
// decision fails closed with a reason code; it never falls back to a server the filters refused.

import type { ServerHealth, ServerStatsView } from './server-stats.ts';

/** Route strategies of a routing rule. */
export const ROUTE_STRATEGIES = ['explicit', 'registry', 'first_healthy', 'parallel'] as const;
export type RouteStrategy = (typeof ROUTE_STRATEGIES)[number];

/** Weights of the score components (each component is in [0, 1]; the score is their weighted mean). */
export interface ScoreWeights {
  health: number;
  latency: number;
  error_rate: number;
  cost: number;
}

export const DEFAULT_WEIGHTS: Readonly<ScoreWeights> = Object.freeze({
  health: 0.4,
  latency: 0.25,
  error_rate: 0.25,
  cost: 0.1,
});

/** An active routing rule (the store's row, already validated). */
export interface RoutingRule {
  id: string;
  /** Exact tool name, or `*` for every tool. An exact match ranks before `*`. */
  tool_name: string;
  strategy: RouteStrategy;
  /**
   * Server ids in the approved order; when present, the only servers the rule may use (others are filtered as
   * `NOT_IN_RULE`). `explicit` and `first_healthy` follow this order (without a list: by id); `registry` and
   * `parallel` order by score.
   */
  servers?: readonly string[];
  /** Higher first among rules of equal specificity; ties by id. */
  priority?: number;
  enabled?: boolean;
  /** Region the servers must be in (a request's region is checked too). */
  region?: string;
  /** Data-handling policy the servers must support (a request's policy is checked too). */
  data_handling?: string;
  /** Servers with a larger estimated cost per call (picos) are filtered. */
  max_cost?: number;
  /** Servers observed `degraded` are filtered too (default: kept, scored lower). */
  require_healthy?: boolean;
  weights?: Partial<ScoreWeights>;
  /** Latency (ms) that scores 0.5; default 250. */
  latency_target_ms?: number;
  /** Cost (picos per call) that scores 0.5; default 1,000,000. */
  cost_target?: number;
  /** `parallel`: most servers called at once (1–16, default 4). */
  max_parallel?: number;
  timeout_ms?: number;
  max_retries?: number;
}

/** One server that could serve the tool, with what the decision needs to know about it. */
export interface RouteCandidate {
  server_id: string;
  /** The registration is enabled. */
  enabled: boolean;
  /** The server exposes the tool, discovered, with a passing contract and any needed review approved. */
  tool_approved: boolean;
  region?: string;
  /** Data-handling policies the server supports (for example `no_retention`, `eu_only`). */
  data_handling?: readonly string[];
  /** Estimated cost of one call in picos. */
  estimated_cost?: number;
  /** Observed stats (absent: nothing observed yet, `unknown`). */
  stats?: Pick<ServerStatsView, 'health' | 'latency_ms' | 'error_rate'>;
}

/** The call to route. */
export interface RouteRequest {
  tool_name: string;
  /** Servers attached to the agent (`allowed_mcp_servers`); absent means no agent restriction (an admin proxy). */
  allowed_servers?: readonly string[];
  region?: string;
  data_handling?: string;
  /** Caller's strategy (for example `first_healthy`); applies only where no rule matches the tool. */
  strategy?: 'registry' | 'first_healthy' | 'parallel';
}

/** Why a candidate was left out. */
export const FILTER_REASONS = [
  'SERVER_DISABLED',
  'SERVER_NOT_ATTACHED',
  'TOOL_NOT_APPROVED',
  'NOT_IN_RULE',
  'SERVER_UNHEALTHY',
  'SERVER_DEGRADED',
  'REGION_MISMATCH',
  'DATA_HANDLING_MISMATCH',
  'COST_OVER_LIMIT',
] as const;
export type FilterReason = (typeof FILTER_REASONS)[number];

/** Why a decision failed closed. */
export type RouteFailureCode =
  /** No candidate server exposes the tool at all. */
  | 'ROUTE_TOOL_UNAVAILABLE'
  /** Candidates exist but the filters refused every one. */
  | 'ROUTE_NO_ELIGIBLE_SERVER'
  /** The input is larger than the decision accepts. */
  | 'ROUTE_INPUT_TOO_LARGE';

export interface CandidateTrace {
  server_id: string;
  eligible: boolean;
  /** Every reason that applied, in `FILTER_REASONS` order (empty when eligible). */
  reasons: FilterReason[];
  health: ServerHealth;
  /** Weighted score in [0, 1] (eligible candidates only), rounded to 6 decimals. */
  score?: number;
  components?: ScoreWeights;
}

/** The decision, and its trace: plain JSON, bounded, with no secret (ids, codes and numbers only). */
export interface RouteDecision {
  ok: boolean;
  tool_name: string;
  strategy: RouteStrategy;
  /** The rule applied, or null for the default (`registry`, or the request's strategy). */
  rule_id: string | null;
  /** The server to call first (null when failed closed; the first of `parallel` for a parallel route). */
  chosen: string | null;
  /** Servers to try next, in order, if the chosen one fails (empty for `parallel`). */
  fallbacks: string[];
  /** `parallel`: every server to call at once, in score order. */
  parallel: string[];
  reason_code?: RouteFailureCode;
  /** Every candidate considered, in input order (at most `ROUTE_LIMITS.maxCandidates`). */
  candidates: CandidateTrace[];
  timeout_ms?: number;
  max_retries?: number;
}

export const ROUTE_LIMITS = Object.freeze({ maxCandidates: 1000, maxRules: 5000, maxParallel: 16 });

const HEALTH_SCORE: Record<ServerHealth, number> = { healthy: 1, unknown: 0.6, degraded: 0.3, unhealthy: 0 };

/** The rule that applies to a tool: explicit rules first (exclusive), then exact name before `*`, priority, id. */
export function selectRule(rules: readonly RoutingRule[], toolName: string): RoutingRule | undefined {
  let best: RoutingRule | undefined;
  for (const rule of rules) {
    if (rule.enabled === false) continue;
    if (rule.tool_name !== toolName && rule.tool_name !== '*') continue;
    if (!best || ranksBefore(rule, best)) best = rule;
  }
  return best;
}

function ranksBefore(a: RoutingRule, b: RoutingRule): boolean {
  const explicitA = a.strategy === 'explicit' ? 1 : 0;
  const explicitB = b.strategy === 'explicit' ? 1 : 0;
  if (explicitA !== explicitB) return explicitA > explicitB;
  const exactA = a.tool_name === '*' ? 0 : 1;
  const exactB = b.tool_name === '*' ? 0 : 1;
  if (exactA !== exactB) return exactA > exactB;
  const pa = a.priority ?? 0;
  const pb = b.priority ?? 0;
  if (pa !== pb) return pa > pb;
  return a.id < b.id;
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** The score components of a candidate (each in [0, 1]). */
export function scoreComponents(candidate: RouteCandidate, rule: RoutingRule | undefined): ScoreWeights {
  const health = candidate.stats?.health ?? 'unknown';
  const latencyTarget = rule?.latency_target_ms ?? 250;
  const costTarget = rule?.cost_target ?? 1_000_000;
  const latency = candidate.stats?.latency_ms;
  const errorRate = candidate.stats?.error_rate ?? 0;
  const cost = candidate.estimated_cost;
  return {
    health: HEALTH_SCORE[health],
    // Unknown latency or cost scores neutral (0.5): neither rewarded nor punished.
    latency: latency === undefined ? 0.5 : latencyTarget / (latencyTarget + Math.max(0, latency)),
    error_rate: 1 - Math.min(1, Math.max(0, errorRate)),
    cost: cost === undefined ? 0.5 : costTarget / (costTarget + Math.max(0, cost)),
  };
}

function weightedScore(components: ScoreWeights, weights: ScoreWeights): number {
  const total = weights.health + weights.latency + weights.error_rate + weights.cost;
  if (!(total > 0)) return 0;
  return round6(
    (components.health * weights.health +
      components.latency * weights.latency +
      components.error_rate * weights.error_rate +
      components.cost * weights.cost) /
      total,
  );
}

function effectiveWeights(rule: RoutingRule | undefined): ScoreWeights {
  const w = { ...DEFAULT_WEIGHTS, ...(rule?.weights ?? {}) };
  for (const k of Object.keys(DEFAULT_WEIGHTS) as (keyof ScoreWeights)[]) {
    if (!(Number.isFinite(w[k]) && w[k] >= 0)) w[k] = DEFAULT_WEIGHTS[k];
  }
  return w;
}

function filterReasons(
  candidate: RouteCandidate,
  rule: RoutingRule | undefined,
  request: RouteRequest,
  allowed: ReadonlySet<string> | undefined,
  ruleServers: ReadonlySet<string> | undefined,
): FilterReason[] {
  const reasons: FilterReason[] = [];
  const health = candidate.stats?.health ?? 'unknown';
  if (!candidate.enabled) reasons.push('SERVER_DISABLED');
  if (allowed && !allowed.has(candidate.server_id)) reasons.push('SERVER_NOT_ATTACHED');
  if (!candidate.tool_approved) reasons.push('TOOL_NOT_APPROVED');
  if (ruleServers && !ruleServers.has(candidate.server_id)) reasons.push('NOT_IN_RULE');
  if (health === 'unhealthy') reasons.push('SERVER_UNHEALTHY');
  if (health === 'degraded' && rule?.require_healthy === true) reasons.push('SERVER_DEGRADED');
  for (const region of [rule?.region, request.region]) {
    if (region !== undefined && candidate.region !== region) {
      reasons.push('REGION_MISMATCH');
      break;
    }
  }
  for (const policy of [rule?.data_handling, request.data_handling]) {
    if (policy !== undefined && !(candidate.data_handling ?? []).includes(policy)) {
      reasons.push('DATA_HANDLING_MISMATCH');
      break;
    }
  }
  if (rule?.max_cost !== undefined && (candidate.estimated_cost ?? Number.POSITIVE_INFINITY) > rule.max_cost) {
    reasons.push('COST_OVER_LIMIT');
  }
  return reasons;
}

/**
 * Decides the route of one tool call: selects the rule, filters the candidates, scores the eligible ones and
 * orders them by the strategy. Fails closed (`ok: false`, `reason_code`) when nothing qualifies.
 */
export function decideRoute(
  rules: readonly RoutingRule[],
  candidates: readonly RouteCandidate[],
  request: RouteRequest,
): RouteDecision {
  const rule = rules.length <= ROUTE_LIMITS.maxRules ? selectRule(rules, request.tool_name) : undefined;
  const strategy: RouteStrategy = rule?.strategy ?? request.strategy ?? 'registry';
  const base = {
    tool_name: request.tool_name,
    strategy,
    rule_id: rule?.id ?? null,
    ...(rule?.timeout_ms !== undefined ? { timeout_ms: rule.timeout_ms } : {}),
    ...(rule?.max_retries !== undefined ? { max_retries: rule.max_retries } : {}),
  };
  if (candidates.length > ROUTE_LIMITS.maxCandidates || rules.length > ROUTE_LIMITS.maxRules) {
    return failed(base, 'ROUTE_INPUT_TOO_LARGE', []);
  }
  const allowed = request.allowed_servers ? new Set(request.allowed_servers) : undefined;
  const listed = rule?.servers;
  // An explicit rule without a list allows nothing (fail closed); other rules without one allow every server.
  const ruleServers = listed ? new Set(listed) : rule?.strategy === 'explicit' ? new Set<string>() : undefined;
  const weights = effectiveWeights(rule);

  const traces: CandidateTrace[] = [];
  const eligible: CandidateTrace[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (seen.has(candidate.server_id)) continue;
    seen.add(candidate.server_id);
    const reasons = filterReasons(candidate, rule, request, allowed, ruleServers);
    const trace: CandidateTrace = {
      server_id: candidate.server_id,
      eligible: reasons.length === 0,
      reasons,
      health: candidate.stats?.health ?? 'unknown',
    };
    if (trace.eligible) {
      const components = scoreComponents(candidate, rule);
      trace.components = components;
      trace.score = weightedScore(components, weights);
      eligible.push(trace);
    }
    traces.push(trace);
  }

  if (eligible.length === 0) {
    const anyOffers = traces.some((t) => !t.reasons.includes('TOOL_NOT_APPROVED'));
    return failed(base, anyOffers ? 'ROUTE_NO_ELIGIBLE_SERVER' : 'ROUTE_TOOL_UNAVAILABLE', traces);
  }

  const byScore = (a: CandidateTrace, b: CandidateTrace) =>
    (b.score ?? 0) - (a.score ?? 0) || (a.server_id < b.server_id ? -1 : a.server_id > b.server_id ? 1 : 0);
  let order: string[];
  if (strategy === 'explicit' || strategy === 'first_healthy') {
    // The approved order: the rule's list (without one: by id). No scoring reorders it.
    const position = new Map((listed ?? []).map((id, index) => [id, index]));
    order = eligible
      .map((t) => t.server_id)
      .sort((a, b) => {
        const pa = position.get(a) ?? Number.MAX_SAFE_INTEGER;
        const pb = position.get(b) ?? Number.MAX_SAFE_INTEGER;
        return pa - pb || (a < b ? -1 : a > b ? 1 : 0);
      });
    // first_healthy: a server observed healthy goes before one that is only not unhealthy, keeping the order within.
    if (strategy === 'first_healthy') {
      const health = new Map(eligible.map((t) => [t.server_id, t.health]));
      order = [
        ...order.filter((id) => health.get(id) === 'healthy'),
        ...order.filter((id) => health.get(id) !== 'healthy'),
      ];
    }
  } else {
    order = [...eligible].sort(byScore).map((t) => t.server_id);
  }

  if (strategy === 'parallel') {
    const limit = Math.min(Math.max(1, Math.floor(rule?.max_parallel ?? 4)), ROUTE_LIMITS.maxParallel);
    const parallel = order.slice(0, limit);
    return { ...base, ok: true, chosen: parallel[0] ?? null, fallbacks: [], parallel, candidates: traces };
  }
  return { ...base, ok: true, chosen: order[0] ?? null, fallbacks: order.slice(1), parallel: [], candidates: traces };
}

function failed(
  base: Pick<RouteDecision, 'tool_name' | 'strategy' | 'rule_id' | 'timeout_ms' | 'max_retries'>,
  code: RouteFailureCode,
  candidates: CandidateTrace[],
): RouteDecision {
  return { ...base, ok: false, chosen: null, fallbacks: [], parallel: [], reason_code: code, candidates };
}
