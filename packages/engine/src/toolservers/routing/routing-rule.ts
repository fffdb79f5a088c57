// The schema and validation of a routing rule as written through the routing-rules routes (the spec does not
// show the record's fields; these are the ones the decision reads, with bounds).
import { type Static, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { RETRY_LIMITS } from './retry-policy.ts';
import { ROUTE_LIMITS, ROUTE_STRATEGIES, type RoutingRule } from './route-decision.ts';

const Id = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' });
const Weight = Type.Number({ minimum: 0, maximum: 100 });

/** A routing rule's writable fields (the id is the store's). */
export const RoutingRuleInputSchema = Type.Object(
  {
    tool_name: Type.String({ minLength: 1, maxLength: 128, pattern: '^(\\*|[A-Za-z0-9_.:/-]+)$' }),
    strategy: Type.Union(ROUTE_STRATEGIES.map((s) => Type.Literal(s))),
    servers: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 64 })),
    priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
    enabled: Type.Optional(Type.Boolean()),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    data_handling: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    max_cost: Type.Optional(Type.Integer({ minimum: 0 })),
    require_healthy: Type.Optional(Type.Boolean()),
    weights: Type.Optional(
      Type.Object(
        {
          health: Type.Optional(Weight),
          latency: Type.Optional(Weight),
          error_rate: Type.Optional(Weight),
          cost: Type.Optional(Weight),
        },
        { additionalProperties: false },
      ),
    ),
    latency_target_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
    cost_target: Type.Optional(Type.Integer({ minimum: 1 })),
    max_parallel: Type.Optional(Type.Integer({ minimum: 1, maximum: ROUTE_LIMITS.maxParallel })),
    timeout_ms: Type.Optional(
      Type.Integer({ minimum: RETRY_LIMITS.timeoutMs.min, maximum: RETRY_LIMITS.timeoutMs.max }),
    ),
    max_retries: Type.Optional(
      Type.Integer({ minimum: RETRY_LIMITS.maxRetries.min, maximum: RETRY_LIMITS.maxRetries.max }),
    ),
  },
  { additionalProperties: false },
);
export type RoutingRuleInput = Static<typeof RoutingRuleInputSchema>;

const validator = Compile(RoutingRuleInputSchema);

/** One problem of a rule: a JSON pointer and a readable message. */
export interface RuleProblem {
  path: string;
  message: string;
}

/**
 * Validates a rule's input: the schema, then the rules the schema cannot say (an explicit route lists its servers,
 * listed servers are distinct, `max_parallel` only on parallel routes, weights not all zero). At most 10 problems.
 */
export function validateRoutingRule(
  id: string,
  value: unknown,
): { ok: true; rule: RoutingRule } | { ok: false; problems: RuleProblem[] } {
  if (!validator.Check(value)) {
    const problems: RuleProblem[] = [];
    for (const error of validator.Errors(value)) {
      problems.push({ path: error.instancePath || '/', message: `${error.instancePath || '/'} ${error.message}` });
      if (problems.length >= 10) break;
    }
    return { ok: false, problems };
  }
  const input = value as RoutingRuleInput;
  const problems: RuleProblem[] = [];
  if (input.strategy === 'explicit' && !input.servers) {
    problems.push({ path: '/servers', message: '/servers is required for an explicit route' });
  }
  if (input.servers && new Set(input.servers).size !== input.servers.length) {
    problems.push({ path: '/servers', message: '/servers must not list a server twice' });
  }
  if (input.max_parallel !== undefined && input.strategy !== 'parallel') {
    problems.push({ path: '/max_parallel', message: '/max_parallel applies only to a parallel route' });
  }
  if (input.weights) {
    const w = input.weights;
    const total = (w.health ?? 0.4) + (w.latency ?? 0.25) + (w.error_rate ?? 0.25) + (w.cost ?? 0.1);
    if (total <= 0) problems.push({ path: '/weights', message: '/weights must not all be zero' });
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, rule: { id, ...input } };
}
