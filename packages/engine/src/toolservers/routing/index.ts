// The tool-server routing core: observed server stats, route decisions, retries and parallel aggregation (pure; see README.md).

export * from './retry-policy.ts';
export * from './route-decision.ts';
export * from './routing-rule.ts';
export * from './server-stats.ts';
