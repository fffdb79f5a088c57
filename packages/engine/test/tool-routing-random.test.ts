// Seeded random checks of the routing core's invariants over many generated registries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decideRoute,
  type RouteCandidate,
  type RoutingRule,
  type ServerHealth,
  ServerStats,
} from '../src/toolservers/routing/index.ts';

/** Mulberry32: a small deterministic generator. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEALTHS: ServerHealth[] = ['healthy', 'degraded', 'unhealthy', 'unknown'];

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

test('2,000 random registries: the chosen servers always pass every filter, explicit never leaves its list, order is input-independent', () => {
  const random = rng(14);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T;
  for (let round = 0; round < 2000; round++) {
    const ids = Array.from({ length: 1 + Math.floor(random() * 12) }, (_, i) => `srv_${i}`);
    const candidates: RouteCandidate[] = ids.map((id) => ({
      server_id: id,
      enabled: random() > 0.15,
      tool_approved: random() > 0.15,
      region: pick(['eu', 'us', undefined]),
      data_handling: random() > 0.5 ? ['no_retention'] : [],
      estimated_cost: random() > 0.2 ? Math.floor(random() * 3_000_000) : undefined,
      stats:
        random() > 0.1
          ? { health: pick(HEALTHS), latency_ms: random() > 0.2 ? random() * 2000 : undefined, error_rate: random() }
          : undefined,
    }));
    const strategy = pick(['explicit', 'registry', 'first_healthy', 'parallel'] as const);
    const rule: RoutingRule = {
      id: 'r1',
      tool_name: pick(['tool', '*']),
      strategy,
      servers: strategy === 'explicit' || random() > 0.6 ? shuffle(ids, random).slice(0, 3) : undefined,
      region: random() > 0.7 ? 'eu' : undefined,
      max_cost: random() > 0.7 ? 1_500_000 : undefined,
      require_healthy: random() > 0.8,
      max_parallel: 1 + Math.floor(random() * 5),
    };
    const request = {
      tool_name: 'tool',
      allowed_servers: random() > 0.5 ? ids.filter(() => random() > 0.2) : undefined,
      data_handling: random() > 0.7 ? 'no_retention' : undefined,
    };
    const rules = random() > 0.2 ? [rule] : [];
    const decision = decideRoute(rules, candidates, request);
    const again = decideRoute(rules, shuffle(candidates, random), request);
    const route = (d: typeof decision) => [d.chosen, ...d.fallbacks, '|', ...d.parallel];
    assert.deepEqual(route(again), route(decision), `round ${round}`);

    const chosen =
      decision.parallel.length > 0
        ? decision.parallel
        : decision.chosen
          ? [decision.chosen, ...decision.fallbacks]
          : [];
    assert.equal(decision.ok, chosen.length > 0);
    if (!decision.ok) assert.ok(decision.reason_code);
    for (const id of chosen) {
      const c = candidates.find((x) => x.server_id === id) as RouteCandidate;
      const applied = rules[0];
      assert.ok(c.enabled && c.tool_approved, `round ${round}: ${id} disabled or unapproved`);
      assert.notEqual(c.stats?.health, 'unhealthy');
      if (request.allowed_servers) assert.ok(request.allowed_servers.includes(id));
      if (request.data_handling) assert.ok(c.data_handling?.includes(request.data_handling));
      if (applied?.servers) assert.ok(applied.servers.includes(id), `round ${round}: ${id} outside the rule`);
      if (applied?.region) assert.equal(c.region, applied.region);
      if (applied?.max_cost !== undefined) assert.ok((c.estimated_cost ?? Infinity) <= applied.max_cost);
      if (applied?.require_healthy) assert.notEqual(c.stats?.health, 'degraded');
      const trace = decision.candidates.find((t) => t.server_id === id);
      assert.ok(trace?.eligible && trace.reasons.length === 0);
    }
    for (const t of decision.candidates) {
      assert.equal(t.eligible, t.reasons.length === 0);
      if (t.eligible) assert.ok(t.score !== undefined && t.score >= 0 && t.score <= 1);
      else assert.ok(!chosen.includes(t.server_id));
    }
    if (decision.strategy === 'parallel') assert.ok(decision.parallel.length <= (rule.max_parallel ?? 4));
  }
});

test('500 random exchanges: instances merging snapshots in any order converge to the same view', () => {
  const random = rng(7);
  for (let round = 0; round < 500; round++) {
    let t = 1_000_000;
    const now = () => t;
    const instances = Array.from(
      { length: 3 },
      (_, i) => new ServerStats({ instanceId: `i${i}`, now, halfLifeMs: 60_000 }),
    );
    for (let n = 0; n < 30; n++) {
      const inst = instances[Math.floor(random() * 3)] as ServerStats;
      inst.record({
        server_id: `srv_${Math.floor(random() * 3)}`,
        kind: random() > 0.5 ? 'probe' : 'call',
        ok: random() > 0.3,
        latency_ms: random() * 500,
        auth_failure: random() > 0.9,
      });
      t += Math.floor(random() * 20_000);
    }
    const snapshots = instances.map((s) => s.snapshot());
    const x = new ServerStats({ instanceId: 'x', now, halfLifeMs: 60_000 });
    const y = new ServerStats({ instanceId: 'y', now, halfLifeMs: 60_000 });
    for (const s of snapshots) x.merge(s);
    for (const s of shuffle(snapshots, random)) {
      y.merge(s);
      y.merge(s);
    }
    assert.deepEqual(x.views(), y.views(), `round ${round}`);
    assert.deepEqual(x.snapshot(), y.snapshot());
  }
});
