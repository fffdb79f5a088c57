import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  compileFlow,
  EXPRESSION_OPERATORS,
  ExpressionError,
  evaluateExpression,
  FlowRejected,
  NODE_TYPES,
} from '../src/flows/index.ts';
import { memoryPort, runOnce, settings } from './flow-helper.ts';

/** A small seeded PRNG (mulberry32), so every run checks the same cases. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * max);
  const pick = <T>(items: readonly T[]) => items[int(items.length)]!;
  return { next, int, pick };
}

const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'a', 'b', 'item', 'vars'];
const PATHS = ['a', 'a.b', 'vars.x', 'list.0', 'list.1.a', '', 'constructor', '__proto__.x', 'a.__proto__', 'item'];

function randomValue(rng: ReturnType<typeof random>, depth: number): unknown {
  const kind = rng.int(depth > 3 ? 5 : 8);
  if (kind === 0) return null;
  if (kind === 1) return rng.next() < 0.5;
  if (kind === 2) return rng.pick([0, 1, -1, 2.5, 1e308, -1e308, 42]);
  if (kind === 3) return rng.pick(['', 'a', 'abc', 'x'.repeat(50), '0x10', '12']);
  if (kind === 4) return rng.pick(HOSTILE_KEYS);
  if (kind === 5) return Array.from({ length: rng.int(4) }, () => randomValue(rng, depth + 1));
  const object: Record<string, unknown> = {};
  for (let index = rng.int(4); index > 0; index--)
    Object.defineProperty(object, rng.pick(HOSTILE_KEYS), {
      value: randomValue(rng, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return object;
}

function randomExpression(rng: ReturnType<typeof random>, depth: number): unknown {
  if (depth > 5 || rng.next() < 0.25) return rng.next() < 0.5 ? randomValue(rng, 4) : { var: rng.pick(PATHS) };
  const op =
    rng.next() < 0.05 ? rng.pick(['eval', '__proto__', 'constructor', 'Function']) : rng.pick(EXPRESSION_OPERATORS);
  if (op === 'object') {
    const built: Record<string, unknown> = {};
    for (let index = rng.int(3); index > 0; index--)
      Object.defineProperty(built, rng.pick(HOSTILE_KEYS), {
        value: randomExpression(rng, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return { object: built };
  }
  const operands = Array.from({ length: rng.int(4) }, () => randomExpression(rng, depth + 1));
  return { [op]: rng.next() < 0.1 ? operands[0] : operands };
}

describe('flow engine under random input', () => {
  test('5,000 random expressions over hostile data: a JSON result or an ExpressionError, never another error or a polluted prototype', () => {
    const rng = random(13);
    let results = 0;
    let rejected = 0;
    for (let index = 0; index < 5_000; index++) {
      const expression = randomExpression(rng, 0);
      const scope = { a: randomValue(rng, 0), vars: { x: randomValue(rng, 1) }, list: [randomValue(rng, 1), { a: 1 }] };
      try {
        const value = evaluateExpression(expression, scope);
        assert.doesNotThrow(() => JSON.stringify(value));
        results++;
      } catch (error) {
        assert.ok(error instanceof ExpressionError, `${JSON.stringify(expression)} threw ${error}`);
        rejected++;
      }
    }
    assert.ok(results > 500 && rejected > 500, `results ${results}, rejected ${rejected}`);
    assert.equal(Object.getOwnPropertyNames(Object.prototype).includes('polluted'), false);
    assert.equal(({} as Record<string, unknown>).a, undefined);
    assert.equal(Object.keys(Object.prototype).length, 0);
  });

  test('2,000 random graphs: a frozen plan that runs to an outcome, or FlowRejected, never another error', async () => {
    const rng = random(2026);
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'constructor', 'out'];
    let compiled = 0;
    let runs = 0;
    for (let index = 0; index < 2_000; index++) {
      const count = 2 + rng.int(6);
      const nodes = Array.from({ length: count }, (_, position) => {
        // Mostly forward references (the chain keeps nodes reachable), sometimes any node (cycles, dangling ids).
        const chain = () => (position + 1 < count ? ids[position + 1]! : 'out');
        const forward = () => (rng.next() < 0.5 ? chain() : rng.pick([...ids.slice(position + 1, count), 'out']));
        const type = rng.next() < 0.02 ? 'bogus' : rng.pick(NODE_TYPES.filter((name) => name !== 'output'));
        const ref = () => (rng.next() < 0.85 ? forward() : rng.pick(ids));
        const maybe = (field: string, value: () => unknown, chance = 0.5) =>
          rng.next() < chance ? { [field]: value() } : {};
        const fields: Record<string, () => Record<string, unknown>> = {
          input: () => ({ next: chain() }),
          ai: () => ({ instructions: 'x', next: chain(), ...maybe('on_error', ref, 0.2) }),
          ai_decision: () => ({
            instructions: 'x',
            choices: [
              { key: 'x', description: 'x' },
              { key: 'y', description: 'y' },
            ],
            minimum_confidence: 0.5,
            fallback_choice: rng.pick(['x', 'y', 'z']),
            branches: { x: chain(), y: ref(), ...maybe('z', ref, 0.1) },
          }),
          tool: () => ({
            tool: 'tool_a',
            ...maybe('next', chain, 0.85),
            ...maybe('compensation', ref, 0.3),
            ...maybe('on_error', ref, 0.2),
          }),
          resource: () => ({ resource: 'r', ...maybe('next', chain, 0.85) }),
          condition: () => ({ when: randomExpression(rng, 3), on_true: chain(), on_false: ref() }),
          transform: () => ({ expression: randomExpression(rng, 3), assign: 'v', ...maybe('next', chain, 0.85) }),
          parallel: () => ({ branches: [ref(), ref()], next: chain() }),
          loop: () => ({
            max_iterations: rng.pick([1, 3, 5000]),
            body: chain(),
            next: rng.pick(ids),
            ...maybe('over', () => ({ literal: [1, 2] }), 0.5),
          }),
          approval: () => ({ message: 'ok?', next: chain(), ...maybe('on_deny', ref, 0.3) }),
          delay: () => ({ duration_ms: 10, next: chain() }),
          event_wait: () => ({ event: 'ev', next: chain() }),
          subflow: () => ({ flow_id: 'missing', version: 1, next: ref() }),
          supervisor: () => ({
            mode: 'deterministic',
            instructions: 'x',
            specialists: [ref()],
            max_rounds: 1,
            next: chain(),
          }),
          specialist: () => ({ agent_id: 'agent', instructions: 'x', ...maybe('next', chain, 0.7) }),
          compensation: () => ({ tool: 'tool_a' }),
          output: () => ({ action: rng.pick(['RESPOND', 'RESPOND', 'DATA_RESULT', 'NOPE']) }),
        };
        const node: Record<string, unknown> = {
          id: rng.next() < 0.97 ? ids[position] : rng.pick(ids),
          type,
          ...(fields[type]?.() ?? { next: chain() }),
        };
        return node;
      });
      nodes.push({ id: 'out', type: 'output', action: 'RESPOND' });
      const config = {
        schema_version: '2026-08-22',
        orchestration_mode: 'deterministic',
        permissions: { allowed_actions: ['RESPOND'] },
        nodes,
      };
      let plan: ReturnType<typeof compileFlow>;
      try {
        plan = compileFlow(config);
      } catch (error) {
        assert.ok(error instanceof FlowRejected, `${JSON.stringify(config)} threw ${error}`);
        assert.ok(error.problems.length > 0 && error.problems.every((problem) => problem.path.startsWith('/')));
        continue;
      }
      compiled++;
      assert.ok(Object.isFrozen(plan.nodes));
      if (plan.canWait) continue;
      const port = memoryPort({ tools: { tool_a: () => 1 }, resources: { r: () => 1 } });
      const outcome = await runOnce(port, plan, {
        executionId: `fuzz-${index}`,
        settings: settings({ max_node_retries: 0 }),
      });
      assert.ok(
        ['succeeded', 'terminal_failure', 'retryable_failure'].includes(outcome.status),
        JSON.stringify(outcome),
      );
      runs++;
    }
    assert.ok(compiled > 100, `only ${compiled} graphs compiled`);
    assert.ok(runs > 40, `only ${runs} graphs ran`);
  });
});
