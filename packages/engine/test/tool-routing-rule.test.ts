import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decideRoute, validateRoutingRule } from '../src/toolservers/routing/index.ts';

const problems = (value: unknown) => {
  const result = validateRoutingRule('rule_1', value);
  assert.equal(result.ok, false, JSON.stringify(value));
  return result.ok ? [] : result.problems.map((p) => p.path);
};

describe('routing rule validation', () => {
  test('a valid rule becomes a RoutingRule the decision accepts', () => {
    const result = validateRoutingRule('rule_1', {
      tool_name: 'search_products',
      strategy: 'explicit',
      servers: ['srv_a', 'srv_b'],
      timeout_ms: 2000,
      max_retries: 1,
      weights: { cost: 1 },
    });
    assert.equal(result.ok, true);
    if (!result.ok) return;
    assert.equal(result.rule.id, 'rule_1');
    const decision = decideRoute([result.rule], [{ server_id: 'srv_b', enabled: true, tool_approved: true }], {
      tool_name: 'search_products',
    });
    assert.equal(decision.chosen, 'srv_b');
    assert.equal(decision.timeout_ms, 2000);
  });

  test('schema problems: unknown fields, unknown strategy, out-of-range settings, bad names', () => {
    assert.ok(problems({ tool_name: 'x', strategy: 'registry', extra: 1 }).length > 0);
    assert.ok(problems({ tool_name: 'x', strategy: 'round_robin' }).length > 0);
    assert.ok(problems({ tool_name: 'x', strategy: 'registry', timeout_ms: 50 }).length > 0);
    assert.ok(problems({ tool_name: 'x', strategy: 'registry', max_retries: 6 }).length > 0);
    assert.ok(problems({ tool_name: 'x', strategy: 'parallel', max_parallel: 17 }).length > 0);
    assert.ok(problems({ tool_name: 'bad name', strategy: 'registry' }).length > 0);
    assert.ok(problems({ tool_name: 'x', strategy: 'registry', weights: { speed: 1 } }).length > 0);
    assert.ok(problems({ tool_name: 'x', strategy: 'registry', servers: [] }).length > 0);
    assert.ok(problems(null).length > 0);
  });

  test('the rules the schema cannot say', () => {
    assert.deepEqual(problems({ tool_name: 'x', strategy: 'explicit' }), ['/servers']);
    assert.deepEqual(problems({ tool_name: 'x', strategy: 'registry', servers: ['a', 'a'] }), ['/servers']);
    assert.deepEqual(problems({ tool_name: 'x', strategy: 'registry', max_parallel: 2 }), ['/max_parallel']);
    assert.deepEqual(
      problems({ tool_name: '*', strategy: 'registry', weights: { health: 0, latency: 0, error_rate: 0, cost: 0 } }),
      ['/weights'],
    );
  });

  test('at most 10 problems are reported for a hostile rule', () => {
    const hostile = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, i]));
    const result = validateRoutingRule('rule_1', hostile);
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.problems.length <= 10);
  });
});
