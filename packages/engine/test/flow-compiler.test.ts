import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ACTION_TYPES,
  approvalGatedNodes,
  compareContracts,
  compileFlow,
  type FlowPlan,
  type FlowProblemCode,
  FlowRejected,
  NODE_TYPES,
} from '../src/flows/index.ts';

const base = {
  schema_version: '2026-08-22',
  orchestration_mode: 'deterministic',
  permissions: { allowed_actions: ['RESPOND', 'DATA_RESULT'] },
};
const flow = (nodes: unknown[], extra: Record<string, unknown> = {}) => ({ ...base, ...extra, nodes });
const out = (id = 'out', action = 'RESPOND') => ({ id, type: 'output', action });

/** Compiles and expects a rejection carrying `code` for `nodeId`; returns the problems. */
function rejects(config: unknown, code: FlowProblemCode, nodeId: string | null, options = {}) {
  try {
    compileFlow(config, options);
  } catch (error) {
    assert.ok(error instanceof FlowRejected, String(error));
    const match = error.problems.find((problem) => problem.code === code);
    assert.ok(match, `expected ${code}, got ${JSON.stringify(error.problems)}`);
    assert.equal(match.node_id, nodeId);
    assert.ok(match.path.startsWith('/'));
    assert.ok(match.message.length > 0);
    return error;
  }
  assert.fail(`expected ${code}`);
}

/** A config that uses every node type once. */
function everyNodeType() {
  return flow(
    [
      { id: 'in', type: 'input', next: 'think' },
      { id: 'think', type: 'ai', instructions: 'Summarize', next: 'route' },
      {
        id: 'route',
        type: 'ai_decision',
        instructions: 'Pick',
        minimum_confidence: 0.6,
        fallback_choice: 'other',
        choices: [
          { key: 'search', description: 'a search' },
          { key: 'other', description: 'anything else' },
        ],
        branches: { search: 'find', other: 'out' },
      },
      { id: 'find', type: 'tool', tool: 'catalog_search', effect: 'read', assign: 'found', next: 'docs' },
      { id: 'docs', type: 'resource', resource: 'kb://faq', assign: 'faq', next: 'check' },
      {
        id: 'check',
        type: 'condition',
        when: { '>': [{ var: 'vars.found.count' }, 0] },
        on_true: 'shape',
        on_false: 'out',
      },
      { id: 'shape', type: 'transform', expression: { var: 'vars.found' }, assign: 'shaped', next: 'fan' },
      { id: 'fan', type: 'parallel', branches: ['p1', 'p2'], next: 'each' },
      { id: 'p1', type: 'tool', tool: 'stock', effect: 'read' },
      { id: 'p2', type: 'transform', expression: 1, assign: 'two' },
      { id: 'each', type: 'loop', max_iterations: 5, over: { var: 'vars.shaped.items' }, body: 'reserve', next: 'ok' },
      { id: 'reserve', type: 'tool', tool: 'cart_add_item', compensation: 'unreserve', next: 'each' },
      { id: 'unreserve', type: 'compensation', tool: 'cart_remove_item' },
      { id: 'ok', type: 'approval', message: 'Approve the cart', on_deny: 'out', next: 'pause' },
      { id: 'pause', type: 'delay', duration_ms: 1000, next: 'hear' },
      {
        id: 'hear',
        type: 'event_wait',
        event: 'payment.confirmed',
        timeout_ms: 60_000,
        on_timeout: 'out',
        next: 'sub',
      },
      { id: 'sub', type: 'subflow', flow_id: 'child', version: 2, next: 'boss' },
      {
        id: 'boss',
        type: 'supervisor',
        mode: 'adaptive',
        instructions: 'Coordinate',
        specialists: ['expert'],
        max_rounds: 3,
        next: 'solo',
      },
      { id: 'expert', type: 'specialist', agent_id: 'agent-1', instructions: 'Advise' },
      { id: 'solo', type: 'specialist', agent_id: 'agent-2', instructions: 'Check', next: 'out' },
      out(),
    ],
    { contract: { input: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } } },
  );
}

const child = compileFlow(flow([out()]), { flowId: 'child', version: 2 });
const resolveSubflow = (flowId: string, version: number) => (flowId === 'child' && version === 2 ? child : undefined);

describe('flow compiler', () => {
  test('a config using every node type compiles to a frozen plan with resolved structure', () => {
    const config = everyNodeType();
    const types = new Set(config.nodes.map((node) => (node as { type: string }).type));
    assert.deepEqual([...types].sort(), [...NODE_TYPES].sort());
    const plan = compileFlow(config, { resolveSubflow });
    assert.equal(plan.start, 'in');
    assert.deepEqual(plan.loopBodies.each, ['reserve']);
    assert.equal(plan.owners.p1, 'fan');
    assert.equal(plan.owners.expert, 'boss');
    assert.equal(plan.subflowDepth, 1);
    assert.deepEqual(plan.subflowRefs, ['child@2']);
    assert.deepEqual(plan.allowedActions, ['RESPOND', 'DATA_RESULT']);
    assert.ok(Object.isFrozen(plan) && Object.isFrozen(plan.nodes) && Object.isFrozen(plan.nodes.check));
    assert.throws(() => {
      (plan.nodes.check as { on_true: string }).on_true = 'out';
    }, TypeError);
    assert.throws(() => {
      (plan.order as string[]).push('x');
    }, TypeError);
    // The plan's node record has no prototype: a node id such as "constructor" cannot hit Object.prototype.
    assert.equal(Object.getPrototypeOf(plan.nodes), null);
  });

  test('the plan hash is deterministic and ignores key order, and changes with the config', () => {
    const one = compileFlow(everyNodeType(), { resolveSubflow });
    const reordered = JSON.parse(JSON.stringify(everyNodeType()), (_key, value) =>
      value && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).reverse())
        : value,
    );
    assert.equal(compileFlow(reordered, { resolveSubflow }).hash, one.hash);
    assert.match(one.hash, /^[0-9a-f]{64}$/);
    const changed = everyNodeType();
    (changed.nodes[0] as { label?: string }).label = 'Start';
    assert.notEqual(compileFlow(changed, { resolveSubflow }).hash, one.hash);
  });

  test('compiling does not modify the caller config', () => {
    const config = everyNodeType();
    const copy = structuredClone(config);
    compileFlow(config, { resolveSubflow });
    assert.deepEqual(config, copy);
    assert.ok(!Object.isFrozen(config.nodes[0]));
  });

  test('schema violations name the node and the path', () => {
    rejects(flow([{ id: 'a', type: 'ai', next: 'out' }, out()]), 'FLOW_NODE_INVALID', 'a');
    rejects(flow([{ id: 'a', type: 'input', next: 'out', extra: 1 }, out()]), 'FLOW_NODE_INVALID', 'a');
    rejects(flow([{ id: '1bad', type: 'input', next: 'out' }, out()]), 'FLOW_NODE_INVALID', '1bad');
    rejects({ ...flow([out()]), orchestration_mode: 'chaotic' }, 'FLOW_CONFIG_INVALID', null);
    rejects({ ...flow([out()]), schema_version: 'v2' }, 'FLOW_CONFIG_INVALID', null);
    rejects({ ...flow([out()]), unknown_field: true }, 'FLOW_CONFIG_INVALID', null);
    rejects(flow([]), 'FLOW_CONFIG_INVALID', null);
    rejects({ ...base, nodes: 'x' }, 'FLOW_CONFIG_INVALID', null);
    rejects(null, 'FLOW_CONFIG_INVALID', null);
    rejects(
      flow([{ id: 'a', type: 'ai', instructions: 'x'.repeat(8001), next: 'out' }, out()]),
      'FLOW_NODE_INVALID',
      'a',
    );
  });

  test('bounded sizes: node count, config size, loop bound, choices, parallel branches', () => {
    const many = Array.from({ length: 201 }, (_, index) => ({ id: `n${index}`, type: 'input', next: `n${index + 1}` }));
    rejects(flow(many), 'FLOW_CONFIG_INVALID', null);
    rejects(
      flow([{ id: 'a', type: 'ai', instructions: 'x', next: 'out', label: 'y'.repeat(300_000) }, out()]),
      'FLOW_CONFIG_TOO_LARGE',
      null,
    );
    rejects(
      flow([
        { id: 'l', type: 'loop', max_iterations: 1001, body: 'b', next: 'out' },
        { id: 'b', type: 'input', next: 'l' },
        out(),
      ]),
      'FLOW_NODE_INVALID',
      'l',
    );
    rejects(
      flow([{ id: 'l', type: 'loop', body: 'b', next: 'out' }, { id: 'b', type: 'input', next: 'l' }, out()]),
      'FLOW_NODE_INVALID',
      'l',
    );
    const choices = (count: number) =>
      Array.from({ length: count }, (_, index) => ({ key: `c${index}`, description: 'd' }));
    const decision = (count: number) =>
      flow([
        {
          id: 'd',
          type: 'ai_decision',
          instructions: 'x',
          minimum_confidence: 0.5,
          fallback_choice: 'c0',
          choices: choices(count),
          branches: Object.fromEntries(choices(count).map((choice) => [choice.key, 'out'])),
        },
        out(),
      ]);
    rejects(decision(1), 'FLOW_NODE_INVALID', 'd');
    rejects(decision(21), 'FLOW_NODE_INVALID', 'd');
    assert.equal(compileFlow(decision(2)).start, 'd');
    assert.equal(compileFlow(decision(20)).start, 'd');
    const branches = Array.from({ length: 17 }, (_, index) => `b${index}`);
    rejects(
      flow([
        { id: 'p', type: 'parallel', branches, next: 'out' },
        ...branches.map((id) => ({ id, type: 'transform', expression: 1, assign: 'x' })),
        out(),
      ]),
      'FLOW_NODE_INVALID',
      'p',
    );
  });

  test('an unknown node type is rejected with its node id', () => {
    rejects(flow([{ id: 'x', type: 'shell', next: 'out' }, out()]), 'FLOW_NODE_TYPE_UNKNOWN', 'x');
    rejects(flow([{ id: 'x', type: 'constructor' }, out()]), 'FLOW_NODE_TYPE_UNKNOWN', 'x');
  });

  test('duplicate ids, dangling references and unreachable nodes are rejected', () => {
    rejects(
      flow([{ id: 'a', type: 'input', next: 'out' }, { id: 'a', type: 'input', next: 'out' }, out()]),
      'FLOW_NODE_DUPLICATE',
      'a',
    );
    rejects(flow([{ id: 'a', type: 'input', next: 'nowhere' }, out()]), 'FLOW_REFERENCE_DANGLING', 'a');
    rejects(
      flow([{ id: 'c', type: 'condition', when: true, on_true: 'out', on_false: 'ghost' }, out()]),
      'FLOW_REFERENCE_DANGLING',
      'c',
    );
    rejects(flow([out()], { start: 'ghost' }), 'FLOW_REFERENCE_DANGLING', null);
    rejects(
      flow([{ id: 'a', type: 'input', next: 'out' }, out(), { id: 'island', type: 'input', next: 'out' }]),
      'FLOW_NODE_UNREACHABLE',
      'island',
    );
    rejects(
      flow([{ id: 'a', type: 'input', next: 'out' }, out(), { id: 'comp', type: 'compensation', tool: 'undo' }]),
      'FLOW_NODE_UNREACHABLE',
      'comp',
    );
    // A node id that is an Object.prototype name is just an id.
    const plan = compileFlow(flow([{ id: 'constructor', type: 'input', next: 'toString' }, out('toString')]));
    const id: string = 'constructor';
    assert.equal(plan.nodes[id]?.type, 'input');
    rejects(flow([{ id: 'a', type: 'input', next: 'hasOwnProperty' }, out()]), 'FLOW_REFERENCE_DANGLING', 'a');
  });

  test('references must fit the edge: compensation targets, members, start, missing next', () => {
    rejects(
      flow([{ id: 't', type: 'tool', tool: 'x', compensation: 'out', next: 'out' }, out()]),
      'FLOW_REFERENCE_INVALID',
      't',
    );
    rejects(
      flow([
        { id: 't', type: 'tool', tool: 'x', compensation: 'c', next: 'c' },
        { id: 'c', type: 'compensation', tool: 'undo' },
        out(),
      ]),
      'FLOW_REFERENCE_INVALID',
      't',
    );
    rejects(
      flow([
        { id: 'p', type: 'parallel', branches: ['a', 'b'], next: 'out' },
        { id: 'a', type: 'approval', message: 'x', next: 'out' },
        { id: 'b', type: 'transform', expression: 1, assign: 'b' },
        out(),
      ]),
      'FLOW_MEMBER_INVALID',
      'p',
    );
    rejects(
      flow([
        { id: 'p', type: 'parallel', branches: ['a', 'b'], next: 'out' },
        { id: 'a', type: 'transform', expression: 1, assign: 'a', next: 'out' },
        { id: 'b', type: 'transform', expression: 1, assign: 'b' },
        out(),
      ]),
      'FLOW_MEMBER_INVALID',
      'p',
    );
    rejects(
      flow([
        { id: 'p', type: 'parallel', branches: ['a', 'a'], next: 'out' },
        { id: 'a', type: 'transform', expression: 1, assign: 'a' },
        out(),
      ]),
      'FLOW_MEMBER_INVALID',
      'p',
    );
    rejects(
      flow([
        {
          id: 's',
          type: 'supervisor',
          mode: 'deterministic',
          instructions: 'x',
          specialists: ['t'],
          max_rounds: 1,
          next: 'out',
        },
        { id: 't', type: 'tool', tool: 'x' },
        out(),
      ]),
      'FLOW_MEMBER_INVALID',
      's',
    );
    rejects(
      flow([
        { id: 'p', type: 'parallel', branches: ['a', 'b'], next: 'a2' },
        { id: 'a', type: 'transform', expression: 1, assign: 'a' },
        { id: 'b', type: 'transform', expression: 1, assign: 'b' },
        { id: 'a2', type: 'condition', when: true, on_true: 'a', on_false: 'out' },
        out(),
      ]),
      'FLOW_MEMBER_INVALID',
      'a2',
    );
    rejects(flow([{ id: 't', type: 'tool', tool: 'x' }, out()]), 'FLOW_NEXT_MISSING', 't');
    rejects(flow([{ id: 'c', type: 'compensation', tool: 'x' }, out()]), 'FLOW_REFERENCE_INVALID', 'c');
  });

  test('ai_decision: every choice wired, no unknown branch, fallback among the choices, no duplicate keys', () => {
    const decision = (patch: Record<string, unknown>) =>
      flow([
        {
          id: 'd',
          type: 'ai_decision',
          instructions: 'Pick',
          minimum_confidence: 0.5,
          fallback_choice: 'b',
          choices: [
            { key: 'a', description: 'A' },
            { key: 'b', description: 'B' },
          ],
          branches: { a: 'out', b: 'out' },
          ...patch,
        },
        out(),
      ]);
    assert.equal(compileFlow(decision({})).start, 'd');
    rejects(decision({ branches: { a: 'out' } }), 'FLOW_CHOICE_NOT_WIRED', 'd');
    rejects(decision({ branches: { a: 'out', b: 'out', c: 'out' } }), 'FLOW_CHOICE_UNKNOWN', 'd');
    rejects(decision({ fallback_choice: 'z' }), 'FLOW_FALLBACK_UNKNOWN', 'd');
    rejects(
      decision({
        choices: [
          { key: 'a', description: 'A' },
          { key: 'a', description: 'again' },
        ],
        fallback_choice: 'a',
        branches: { a: 'out' },
      }),
      'FLOW_CHOICE_DUPLICATE',
      'd',
    );
    rejects(decision({ minimum_confidence: 1.5 }), 'FLOW_NODE_INVALID', 'd');
  });

  test('output actions must be normalized and in permissions.allowed_actions', () => {
    rejects(flow([out('out', 'LAUNCH_MISSILES')]), 'FLOW_ACTION_NOT_NORMALIZED', 'out');
    rejects(flow([out('out', 'CHECKOUT_HANDOFF')]), 'FLOW_ACTION_NOT_ALLOWED', 'out');
    rejects(
      { ...flow([out()]), permissions: { allowed_actions: ['RESPOND', 'WHATEVER'] } },
      'FLOW_ACTION_NOT_NORMALIZED',
      null,
    );
    for (const action of ACTION_TYPES)
      assert.deepEqual(
        compileFlow({ ...flow([out('out', action)]), permissions: { allowed_actions: [action] } }).allowedActions,
        [action],
      );
  });

  test('cycles are allowed only through a bounded loop body', () => {
    rejects(
      flow([
        { id: 'a', type: 'transform', expression: 1, assign: 'x', next: 'b' },
        { id: 'b', type: 'condition', when: true, on_true: 'a', on_false: 'out' },
        out(),
      ]),
      'FLOW_CYCLE_UNBOUNDED',
      'a',
    );
    rejects(flow([{ id: 'a', type: 'input', next: 'a' }, out()]), 'FLOW_CYCLE_UNBOUNDED', 'a');
    // Re-entering a loop from after its exit is a cycle outside the body.
    rejects(
      flow([
        { id: 'l', type: 'loop', max_iterations: 3, body: 'b', next: 'after' },
        { id: 'b', type: 'transform', expression: 1, assign: 'x', next: 'l' },
        { id: 'after', type: 'condition', when: true, on_true: 'l', on_false: 'out' },
        out(),
      ]),
      'FLOW_CYCLE_UNBOUNDED',
      'l',
    );
    // A cycle inside the body that skips the loop node is unbounded.
    rejects(
      flow([
        { id: 'l', type: 'loop', max_iterations: 3, body: 'b', next: 'out' },
        { id: 'b', type: 'transform', expression: 1, assign: 'x', next: 'c' },
        { id: 'c', type: 'condition', when: true, on_true: 'b', on_false: 'l' },
        out(),
      ]),
      'FLOW_CYCLE_UNBOUNDED',
      'b',
    );
    rejects(
      flow([
        { id: 'l', type: 'loop', max_iterations: 3, body: 'b', next: 'out' },
        { id: 'b', type: 'transform', expression: 1, assign: 'x', next: 'out' },
        out(),
      ]),
      'FLOW_LOOP_BODY_OPEN',
      'l',
    );
    rejects(
      flow([{ id: 'l', type: 'loop', max_iterations: 3, body: 'l', next: 'out' }, out()]),
      'FLOW_REFERENCE_INVALID',
      'l',
    );
    // Nested loops and an early exit from a body compile.
    const plan = compileFlow(
      flow([
        { id: 'outer', type: 'loop', max_iterations: 3, body: 'inner', next: 'out' },
        { id: 'inner', type: 'loop', max_iterations: 2, body: 'work', next: 'outer' },
        { id: 'work', type: 'condition', when: false, on_true: 'early', on_false: 'inner' },
        out('early'),
        out(),
      ]),
    );
    assert.deepEqual(plan.loopBodies.outer, ['inner', 'work', 'early']);
    assert.deepEqual(plan.loopBodies.inner, ['work', 'early']);
  });

  test('expressions are checked at compile time', () => {
    rejects(
      flow([{ id: 't', type: 'transform', expression: { eval: 'x' }, assign: 'x', next: 'out' }, out()]),
      'FLOW_EXPRESSION_INVALID',
      't',
    );
    rejects(
      flow([{ id: 'c', type: 'condition', when: { var: 'vars.__proto__.x' }, on_true: 'out', on_false: 'out' }, out()]),
      'FLOW_EXPRESSION_INVALID',
      'c',
    );
    const error = rejects(
      flow([{ id: 'o', type: 'output', action: 'RESPOND', content: { cat: [{ nope: 1 }] } }]),
      'FLOW_EXPRESSION_INVALID',
      'o',
    );
    assert.equal(error.problems[0]!.path, '/nodes/0/content/cat/0');
  });

  test('subflows: resolved, pinned, not cyclic, nesting bounded', () => {
    const withSub = (flowId: string, version: number) =>
      flow([{ id: 's', type: 'subflow', flow_id: flowId, version, next: 'out' }, out()]);
    rejects(withSub('child', 2), 'FLOW_SUBFLOW_UNRESOLVED', 's');
    rejects(withSub('child', 3), 'FLOW_SUBFLOW_UNRESOLVED', 's', { resolveSubflow });
    rejects(withSub('me', 1), 'FLOW_SUBFLOW_CYCLE', 's', { flowId: 'me', version: 1, resolveSubflow });
    rejects(flow([{ id: 's', type: 'subflow', flow_id: 'child', next: 'out' }, out()]), 'FLOW_NODE_INVALID', 's');
    // A chain child ← l1 ← l2 … : depth grows by one per level and stops at the bound.
    const plans = new Map<string, FlowPlan>([['child@2', child]]);
    const resolve = (flowId: string, version: number) => plans.get(`${flowId}@${version}`);
    let previous = 'child';
    for (let level = 1; level <= 5; level++) {
      const plan = compileFlow(withSub(previous, previous === 'child' ? 2 : 1), {
        flowId: `l${level}`,
        version: 1,
        resolveSubflow: resolve,
      });
      assert.equal(plan.subflowDepth, level);
      plans.set(`l${level}@1`, plan);
      previous = `l${level}`;
    }
    rejects(withSub('l5', 1), 'FLOW_SUBFLOW_TOO_DEEP', 's', { resolveSubflow: resolve });
    rejects(withSub('l2', 1), 'FLOW_SUBFLOW_TOO_DEEP', 's', { resolveSubflow: resolve, maxSubflowDepth: 2 });
    // A subflow that (through its own subflows) runs this flow again.
    const looping = compileFlow(withSub('l1', 1), { flowId: 'x', version: 1, resolveSubflow: resolve });
    plans.set('x@1', looping);
    rejects(withSub('x', 1), 'FLOW_SUBFLOW_CYCLE', 's', { flowId: 'l1', version: 1, resolveSubflow: resolve });
  });

  test('a subflow that can wait cannot be a parallel branch; canWait follows subflows', () => {
    const waiting = compileFlow(flow([{ id: 'ok', type: 'approval', message: 'Sure?', next: 'out' }, out()]), {
      flowId: 'w',
      version: 1,
    });
    assert.equal(waiting.canWait, true);
    assert.equal(child.canWait, false);
    const resolve = (flowId: string) => (flowId === 'w' ? waiting : child);
    const fan = (target: string) =>
      flow([
        { id: 'fan', type: 'parallel', branches: ['s', 't'], next: 'out' },
        { id: 's', type: 'subflow', flow_id: target, version: target === 'w' ? 1 : 2 },
        { id: 't', type: 'transform', expression: 1, assign: 't' },
        out(),
      ]);
    rejects(fan('w'), 'FLOW_MEMBER_INVALID', 's', { resolveSubflow: resolve });
    assert.equal(compileFlow(fan('child'), { resolveSubflow: resolve }).canWait, false);
    const outer = compileFlow(flow([{ id: 's', type: 'subflow', flow_id: 'w', version: 1, next: 'out' }, out()]), {
      resolveSubflow: resolve,
    });
    assert.equal(outer.canWait, true);
  });

  test('a contract must name required fields among its properties', () => {
    rejects(
      flow([out()], { contract: { input: { type: 'object', properties: {}, required: ['message'] } } }),
      'FLOW_CONTRACT_INVALID',
      null,
    );
  });

  test('incompatible contract changes are found, and rejected at compile time against the previous plan', () => {
    const contract = (input: unknown, output: unknown) => ({ input, output }) as FlowPlan['contract'];
    const obj = (properties: Record<string, string>, required: string[] = []) => ({
      type: 'object' as const,
      properties: Object.fromEntries(Object.entries(properties).map(([key, type]) => [key, { type }])),
      required,
    });
    const prior = contract(
      obj({ message: 'string', limit: 'integer' }, ['message']),
      obj({ total: 'number', note: 'string' }, ['total']),
    );
    const codes = (next: FlowPlan['contract']) => compareContracts(prior, next).map((change) => change.path);
    // Compatible: an optional input field, a new output field, an input field no longer required.
    assert.deepEqual(
      codes(
        contract(
          obj({ message: 'string', limit: 'integer', page: 'integer' }),
          obj({ total: 'number', note: 'string', extra: 'string' }, ['total']),
        ),
      ),
      [],
    );
    assert.deepEqual(
      codes(contract(obj({ message: 'string', limit: 'integer' }, ['message', 'limit']), prior.output)),
      ['/contract/input/properties/limit'],
    );
    assert.deepEqual(codes(contract(obj({ message: 'string', limit: 'string' }, ['message']), prior.output)), [
      '/contract/input/properties/limit',
    ]);
    assert.deepEqual(codes(contract(prior.input, obj({ total: 'number' }, ['total']))), [
      '/contract/output/properties/note',
    ]);
    assert.deepEqual(codes(contract(prior.input, obj({ total: 'string', note: 'string' }, ['total']))), [
      '/contract/output/properties/total',
    ]);
    assert.deepEqual(codes(contract(prior.input, obj({ total: 'number', note: 'string' }))), [
      '/contract/output/properties/total',
    ]);
    assert.deepEqual(codes(contract(prior.input, null)), [
      '/contract/output/properties/total',
      '/contract/output/properties/note',
    ]);
    assert.deepEqual(compareContracts(contract(null, null), contract(obj({ a: 'string' }, ['a']), null)).length, 1);
    assert.deepEqual(compareContracts(contract(null, null), contract(obj({ a: 'string' }), obj({ b: 'string' }))), []);

    const v1 = compileFlow(flow([out()], { contract: { input: obj({ q: 'string' }) } }));
    const breaking = flow([out()], { contract: { input: obj({ q: 'string' }, ['q']) } });
    try {
      compileFlow(breaking, { previous: v1 });
      assert.fail('expected a rejection');
    } catch (error) {
      assert.ok(error instanceof FlowRejected);
      assert.equal(error.code, 'FLOW_INCOMPATIBLE');
      assert.equal(error.statusCode, 409);
      assert.equal(error.problems[0]!.code, 'FLOW_CONTRACT_INCOMPATIBLE');
    }
    assert.ok(compileFlow(flow([out()], { contract: { input: obj({ q: 'string', r: 'number' }) } }), { previous: v1 }));
  });

  test('hostile configs are bounded: deep nesting, maximal graphs and expressions compile or fail fast with FlowRejected', () => {
    const started = performance.now();
    const deep = JSON.parse(`${'['.repeat(1_000)}1${']'.repeat(1_000)}`);
    rejects(
      flow([{ id: 't', type: 'transform', expression: deep, assign: 'x', next: 'out' }, out()]),
      'FLOW_EXPRESSION_INVALID',
      't',
    );
    let nested: unknown = 1;
    for (let index = 0; index < 50_000; index++) nested = [nested];
    assert.throws(
      () => compileFlow(flow([{ id: 't', type: 'transform', expression: nested, assign: 'x', next: 'out' }, out()])),
      FlowRejected,
    );
    const chain = Array.from({ length: 199 }, (_, index) => ({
      id: `n${index}`,
      type: 'transform',
      expression: { '+': Array.from({ length: 60 }, () => ({ var: 'vars.x' })) },
      assign: 'x',
      next: index === 198 ? 'out' : `n${index + 1}`,
    }));
    const plan = compileFlow(flow([...chain, out()]));
    assert.equal(plan.order.length, 200);
    // A wide fan of conditions (every node reaches every later one) checks cycles and reachability quickly.
    const fan = Array.from({ length: 199 }, (_, index) => ({
      id: `c${index}`,
      type: 'condition',
      when: true,
      on_true: index === 198 ? 'out' : `c${index + 1}`,
      on_false: 'out',
    }));
    assert.equal(compileFlow(flow([...fan, out()])).order.length, 200);
    assert.ok(performance.now() - started < 3_000);
  });

  test('a rejection is a 400 FLOW_INVALID AppError whose details carry each problem', () => {
    try {
      compileFlow(flow([{ id: 'a', type: 'input', next: 'ghost' }, out(), { id: 'b', type: 'nope' }]));
      assert.fail('expected a rejection');
    } catch (error) {
      assert.ok(error instanceof FlowRejected);
      assert.equal(error.code, 'FLOW_INVALID');
      assert.equal(error.statusCode, 400);
      assert.match(error.message, /FLOW_NODE_TYPE_UNKNOWN \(node b\)/);
      assert.deepEqual(error.details?.[0], {
        path: '/nodes/2/type',
        message: error.details?.[0]?.message,
      });
    }
  });
});

describe('approvalGatedNodes', () => {
  test('only nodes every path reaches through an approved edge; denial and error paths do not count', () => {
    const tool = (id: string, next: string, extra: Record<string, unknown> = {}) => ({
      id,
      type: 'tool',
      tool: 'delete_sku',
      next,
      ...extra,
    });
    const plan = compileFlow(
      flow([
        tool('before', 'check'),
        { id: 'check', type: 'approval', message: 'Go?', next: 'pair', on_deny: 'denied' },
        { id: 'pair', type: 'parallel', branches: ['left', 'right'], next: 'after' },
        { id: 'left', type: 'tool', tool: 'delete_sku' },
        { id: 'right', type: 'tool', tool: 'delete_sku' },
        tool('after', 'out', { on_error: 'shared' }),
        tool('denied', 'shared'),
        tool('shared', 'out'),
        out(),
      ]),
    );
    assert.deepEqual([...approvalGatedNodes(plan)].sort(), ['after', 'left', 'pair', 'right']);
  });
});
