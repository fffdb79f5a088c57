import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decideRoute,
  ROUTE_LIMITS,
  type RouteCandidate,
  type RoutingRule,
  scoreComponents,
  selectRule,
} from '../src/toolservers/routing/index.ts';

const TOOL = 'search_products';

function server(id: string, extra: Partial<RouteCandidate> = {}): RouteCandidate {
  return {
    server_id: id,
    enabled: true,
    tool_approved: true,
    region: 'eu',
    data_handling: ['no_retention'],
    estimated_cost: 1000,
    stats: { health: 'healthy', latency_ms: 50, error_rate: 0 },
    ...extra,
  };
}

const rule = (id: string, strategy: RoutingRule['strategy'], extra: Partial<RoutingRule> = {}): RoutingRule => ({
  id,
  tool_name: TOOL,
  strategy,
  ...extra,
});

describe('route decision: filters', () => {
  test('each filter leaves its reason in the trace and never chooses the server', () => {
    const candidates = [
      server('srv_ok'),
      server('srv_disabled', { enabled: false }),
      server('srv_unapproved', { tool_approved: false }),
      server('srv_unhealthy', { stats: { health: 'unhealthy', latency_ms: 1, error_rate: 0.9 } }),
      server('srv_us', { region: 'us' }),
      server('srv_retains', { data_handling: [] }),
      server('srv_foreign'),
    ];
    const decision = decideRoute([], candidates, {
      tool_name: TOOL,
      region: 'eu',
      data_handling: 'no_retention',
      allowed_servers: ['srv_ok', 'srv_disabled', 'srv_unapproved', 'srv_unhealthy', 'srv_us', 'srv_retains'],
    });
    assert.equal(decision.ok, true);
    assert.equal(decision.chosen, 'srv_ok');
    assert.deepEqual(decision.fallbacks, []);
    const reasons = Object.fromEntries(decision.candidates.map((c) => [c.server_id, c.reasons]));
    assert.deepEqual(reasons, {
      srv_ok: [],
      srv_disabled: ['SERVER_DISABLED'],
      srv_unapproved: ['TOOL_NOT_APPROVED'],
      srv_unhealthy: ['SERVER_UNHEALTHY'],
      srv_us: ['REGION_MISMATCH'],
      srv_retains: ['DATA_HANDLING_MISMATCH'],
      srv_foreign: ['SERVER_NOT_ATTACHED'],
    });
    assert.equal(decision.candidates.filter((c) => c.score !== undefined).length, 1);
  });

  test("the rule's region, data-handling policy and cost cap filter too", () => {
    const decision = decideRoute(
      [rule('r1', 'registry', { region: 'eu', data_handling: 'eu_only', max_cost: 5000 })],
      [
        server('srv_a', { data_handling: ['eu_only'] }),
        server('srv_b', { data_handling: ['eu_only'], region: 'us' }),
        server('srv_c'),
        server('srv_d', { data_handling: ['eu_only'], estimated_cost: 6000 }),
        server('srv_e', { data_handling: ['eu_only'], estimated_cost: undefined }),
      ],
      { tool_name: TOOL },
    );
    assert.equal(decision.chosen, 'srv_a');
    assert.deepEqual(
      decision.candidates.map((c) => c.reasons),
      [[], ['REGION_MISMATCH'], ['DATA_HANDLING_MISMATCH'], ['COST_OVER_LIMIT'], ['COST_OVER_LIMIT']],
    );
  });

  test('a candidate with no region fails a required region', () => {
    const decision = decideRoute([], [server('srv_a', { region: undefined })], { tool_name: TOOL, region: 'eu' });
    assert.equal(decision.ok, false);
    assert.deepEqual(decision.candidates[0]?.reasons, ['REGION_MISMATCH']);
  });

  test('degraded servers stay eligible unless the rule requires healthy ones', () => {
    const degraded = server('srv_a', { stats: { health: 'degraded', latency_ms: 10, error_rate: 0.3 } });
    assert.equal(decideRoute([], [degraded], { tool_name: TOOL }).chosen, 'srv_a');
    const strict = decideRoute([rule('r1', 'registry', { require_healthy: true })], [degraded], { tool_name: TOOL });
    assert.equal(strict.ok, false);
    assert.deepEqual(strict.candidates[0]?.reasons, ['SERVER_DEGRADED']);
  });

  test('a server with no observation yet (unknown) is eligible but ranks below an equal healthy one', () => {
    const decision = decideRoute([], [server('srv_a', { stats: undefined }), server('srv_b')], { tool_name: TOOL });
    assert.deepEqual([decision.chosen, ...decision.fallbacks], ['srv_b', 'srv_a']);
    assert.equal(decision.candidates[0]?.health, 'unknown');
  });
});

describe('route decision: fail closed', () => {
  test('nothing offers the tool: ROUTE_TOOL_UNAVAILABLE', () => {
    for (const candidates of [[], [server('srv_a', { tool_approved: false })]]) {
      const decision = decideRoute([], candidates, { tool_name: TOOL });
      assert.equal(decision.ok, false);
      assert.equal(decision.reason_code, 'ROUTE_TOOL_UNAVAILABLE');
      assert.equal(decision.chosen, null);
      assert.deepEqual(decision.fallbacks, []);
    }
  });

  test('every candidate filtered: ROUTE_NO_ELIGIBLE_SERVER, with each reason kept', () => {
    const decision = decideRoute(
      [],
      [
        server('srv_a', { enabled: false }),
        server('srv_b', { stats: { health: 'unhealthy', error_rate: 1, latency_ms: undefined } }),
      ],
      { tool_name: TOOL },
    );
    assert.equal(decision.ok, false);
    assert.equal(decision.reason_code, 'ROUTE_NO_ELIGIBLE_SERVER');
    assert.deepEqual(
      decision.candidates.map((c) => c.reasons),
      [['SERVER_DISABLED'], ['SERVER_UNHEALTHY']],
    );
  });

  test('an agent with no attached server reaches nothing', () => {
    const decision = decideRoute([], [server('srv_a')], { tool_name: TOOL, allowed_servers: [] });
    assert.equal(decision.ok, false);
    assert.equal(decision.reason_code, 'ROUTE_NO_ELIGIBLE_SERVER');
  });

  test('oversized input is refused', () => {
    const many = Array.from({ length: ROUTE_LIMITS.maxCandidates + 1 }, (_, i) => server(`srv_${i}`));
    const decision = decideRoute([], many, { tool_name: TOOL });
    assert.equal(decision.ok, false);
    assert.equal(decision.reason_code, 'ROUTE_INPUT_TOO_LARGE');
  });
});

describe('route decision: rules', () => {
  test('an explicit rule is exclusive: it wins over other matching rules and never leaves its list', () => {
    const rules = [
      rule('r_registry', 'registry', { priority: 100 }),
      rule('r_explicit', 'explicit', { servers: ['srv_slow', 'srv_b'], tool_name: '*' }),
    ];
    assert.equal(selectRule(rules, TOOL)?.id, 'r_explicit');
    const decision = decideRoute(
      rules,
      [
        server('srv_fast', { stats: { health: 'healthy', latency_ms: 1, error_rate: 0 } }),
        server('srv_slow', { stats: { health: 'healthy', latency_ms: 900, error_rate: 0.1 } }),
        server('srv_b'),
      ],
      { tool_name: TOOL },
    );
    assert.equal(decision.rule_id, 'r_explicit');
    assert.equal(decision.strategy, 'explicit');
    // The list order, not the score: srv_slow first although srv_fast and srv_b score higher.
    assert.deepEqual([decision.chosen, ...decision.fallbacks], ['srv_slow', 'srv_b']);
    assert.deepEqual(decision.candidates[0]?.reasons, ['NOT_IN_RULE']);
  });

  test('an explicit rule whose servers are all down fails closed instead of using another server', () => {
    const decision = decideRoute(
      [rule('r1', 'explicit', { servers: ['srv_a'] })],
      [server('srv_a', { stats: { health: 'unhealthy', latency_ms: 1, error_rate: 1 } }), server('srv_b')],
      { tool_name: TOOL, strategy: 'first_healthy' },
    );
    assert.equal(decision.ok, false);
    assert.equal(decision.reason_code, 'ROUTE_NO_ELIGIBLE_SERVER');
    assert.deepEqual(decision.candidates[1]?.reasons, ['NOT_IN_RULE']);
  });

  test('an explicit rule without a server list reaches no server', () => {
    const decision = decideRoute([rule('r1', 'explicit')], [server('srv_a')], { tool_name: TOOL });
    assert.equal(decision.ok, false);
    assert.equal(decision.reason_code, 'ROUTE_NO_ELIGIBLE_SERVER');
    assert.deepEqual(decision.candidates[0]?.reasons, ['NOT_IN_RULE']);
  });

  test('rule selection: exact tool before *, then priority, then id; disabled rules ignored', () => {
    const rules = [
      rule('r_any', 'parallel', { tool_name: '*', priority: 99 }),
      rule('r_low', 'registry', { priority: 1 }),
      rule('r_high_b', 'first_healthy', { priority: 5 }),
      rule('r_high_a', 'first_healthy', { priority: 5 }),
      rule('r_off', 'explicit', { enabled: false, servers: ['x'] }),
    ];
    assert.equal(selectRule(rules, TOOL)?.id, 'r_high_a');
    assert.equal(selectRule(rules, 'other_tool')?.id, 'r_any');
    assert.equal(selectRule([rule('x', 'registry')], 'other_tool'), undefined);
  });

  test("the caller's strategy applies only when no rule matches", () => {
    const candidates = [
      server('srv_b', { stats: { health: 'healthy', latency_ms: 1, error_rate: 0 } }),
      server('srv_a', { stats: { health: 'healthy', latency_ms: 400, error_rate: 0 } }),
    ];
    const free = decideRoute([], candidates, { tool_name: TOOL, strategy: 'first_healthy' });
    assert.equal(free.strategy, 'first_healthy');
    assert.equal(free.chosen, 'srv_a');
    const ruled = decideRoute([rule('r1', 'registry')], candidates, { tool_name: TOOL, strategy: 'first_healthy' });
    assert.equal(ruled.strategy, 'registry');
    assert.equal(ruled.chosen, 'srv_b');
  });

  test('a rule listing servers restricts registry routes to them', () => {
    const decision = decideRoute([rule('r1', 'registry', { servers: ['srv_b'] })], [server('srv_a'), server('srv_b')], {
      tool_name: TOOL,
    });
    assert.equal(decision.chosen, 'srv_b');
    assert.deepEqual(decision.candidates[0]?.reasons, ['NOT_IN_RULE']);
  });

  test('the rule timeout and retries travel with the decision', () => {
    const decision = decideRoute([rule('r1', 'registry', { timeout_ms: 1500, max_retries: 2 })], [server('srv_a')], {
      tool_name: TOOL,
    });
    assert.equal(decision.timeout_ms, 1500);
    assert.equal(decision.max_retries, 2);
  });
});

describe('route decision: scoring and order', () => {
  test('registry: lower latency, lower error rate, lower cost and better health each rank first', () => {
    const pairs: [Partial<RouteCandidate>, Partial<RouteCandidate>][] = [
      [
        { stats: { health: 'healthy', latency_ms: 20, error_rate: 0 } },
        { stats: { health: 'healthy', latency_ms: 800, error_rate: 0 } },
      ],
      [
        { stats: { health: 'healthy', latency_ms: 50, error_rate: 0 } },
        { stats: { health: 'healthy', latency_ms: 50, error_rate: 0.15 } },
      ],
      [{ estimated_cost: 10 }, { estimated_cost: 10_000_000 }],
      [
        { stats: { health: 'healthy', latency_ms: 50, error_rate: 0 } },
        { stats: { health: 'degraded', latency_ms: 50, error_rate: 0 } },
      ],
    ];
    for (const [better, worse] of pairs) {
      // The better server has the larger id, so the order is not the id tie-break.
      const decision = decideRoute([], [server('srv_a', worse), server('srv_z', better)], { tool_name: TOOL });
      assert.deepEqual([decision.chosen, ...decision.fallbacks], ['srv_z', 'srv_a'], JSON.stringify(better));
      const [a, z] = decision.candidates;
      assert.ok((z?.score ?? 0) > (a?.score ?? 0));
    }
  });

  test('equal scores tie by id, whatever the input order', () => {
    const ids = ['srv_c', 'srv_a', 'srv_b'];
    for (const order of [ids, [...ids].reverse()]) {
      const decision = decideRoute(
        [],
        order.map((id) => server(id)),
        { tool_name: TOOL },
      );
      assert.deepEqual([decision.chosen, ...decision.fallbacks], ['srv_a', 'srv_b', 'srv_c']);
    }
  });

  test('rule weights change the ranking (cost only: the cheapest wins although slowest)', () => {
    const candidates = [
      server('srv_fast', { estimated_cost: 900_000, stats: { health: 'healthy', latency_ms: 5, error_rate: 0 } }),
      server('srv_cheap', { estimated_cost: 1, stats: { health: 'healthy', latency_ms: 2000, error_rate: 0 } }),
    ];
    assert.equal(decideRoute([], candidates, { tool_name: TOOL }).chosen, 'srv_fast');
    const costOnly = rule('r1', 'registry', { weights: { health: 0, latency: 0, error_rate: 0, cost: 1 } });
    assert.equal(decideRoute([costOnly], candidates, { tool_name: TOOL }).chosen, 'srv_cheap');
  });

  test('score components are in [0, 1] and neutral for unknown latency and cost', () => {
    const c = scoreComponents(server('x', { estimated_cost: undefined, stats: undefined }), undefined);
    assert.deepEqual(c, { health: 0.6, latency: 0.5, error_rate: 1, cost: 0.5 });
    const hostile = scoreComponents(
      server('x', { estimated_cost: -5, stats: { health: 'healthy', latency_ms: -1, error_rate: 7 } }),
      undefined,
    );
    for (const v of Object.values(hostile)) assert.ok(v >= 0 && v <= 1);
  });

  test('first_healthy: the approved order, healthy servers before unknown or degraded ones, no score reordering', () => {
    const decision = decideRoute(
      [rule('r1', 'first_healthy', { servers: ['srv_c', 'srv_b', 'srv_a', 'srv_d'] })],
      [
        server('srv_a'),
        server('srv_b', { stats: { health: 'degraded', latency_ms: 1, error_rate: 0.3 } }),
        server('srv_c', { stats: { health: 'unhealthy', latency_ms: 1, error_rate: 1 } }),
        server('srv_d', { stats: { health: 'healthy', latency_ms: 3000, error_rate: 0 } }),
      ],
      { tool_name: TOOL },
    );
    assert.deepEqual([decision.chosen, ...decision.fallbacks], ['srv_a', 'srv_d', 'srv_b']);
  });

  test('first_healthy without a list orders by id', () => {
    const decision = decideRoute(
      [rule('r1', 'first_healthy')],
      [server('srv_b'), server('srv_a', { stats: { health: 'healthy', latency_ms: 999, error_rate: 0.1 } })],
      {
        tool_name: TOOL,
      },
    );
    assert.deepEqual([decision.chosen, ...decision.fallbacks], ['srv_a', 'srv_b']);
  });

  test('parallel: every eligible server up to max_parallel, in score order, no fallbacks', () => {
    const candidates = Array.from({ length: 6 }, (_, i) =>
      server(`srv_${i}`, { stats: { health: 'healthy', latency_ms: 100 * (6 - i), error_rate: 0 } }),
    );
    candidates.push(server('srv_down', { stats: { health: 'unhealthy', latency_ms: 1, error_rate: 1 } }));
    const decision = decideRoute([rule('r1', 'parallel', { max_parallel: 3 })], candidates, { tool_name: TOOL });
    assert.deepEqual(decision.parallel, ['srv_5', 'srv_4', 'srv_3']);
    assert.equal(decision.chosen, 'srv_5');
    assert.deepEqual(decision.fallbacks, []);
    const capped = decideRoute([rule('r1', 'parallel', { max_parallel: 1000 })], candidates, { tool_name: TOOL });
    assert.equal(capped.parallel.length, 6);
  });

  test('the same input always gives the same decision, and the trace is plain JSON', () => {
    const candidates = Array.from({ length: 20 }, (_, i) =>
      server(`srv_${i}`, { stats: { health: 'healthy', latency_ms: (i * 37) % 11, error_rate: (i % 3) / 10 } }),
    );
    const a = decideRoute([], candidates, { tool_name: TOOL });
    const b = decideRoute([], [...candidates].reverse(), { tool_name: TOOL });
    assert.deepEqual([a.chosen, ...a.fallbacks], [b.chosen, ...b.fallbacks]);
    assert.deepEqual(JSON.parse(JSON.stringify(a)), a);
  });

  test('a server listed twice is considered once', () => {
    const decision = decideRoute([], [server('srv_a'), server('srv_a', { enabled: false })], { tool_name: TOOL });
    assert.equal(decision.candidates.length, 1);
    assert.equal(decision.chosen, 'srv_a');
  });
});
