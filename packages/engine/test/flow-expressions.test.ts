import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  EXPRESSION_LIMITS,
  EXPRESSION_OPERATORS,
  type ExpressionErrorCode,
  evaluateExpression,
  prepareExpression,
  truthy,
  validateExpression,
} from '../src/flows/index.ts';

const scope = {
  input: { message: 'Red shoes', qty: 3, tags: ['a', 'b'] },
  vars: {
    price: 12.5,
    items: [
      { sku: 'A', price: 5 },
      { sku: 'B', price: 20 },
    ],
    empty: [],
    none: null,
    zero: 0,
  },
};
const run = (expression: unknown, data: unknown = scope) => evaluateExpression(expression, data);

function fails(expression: unknown, code: ExpressionErrorCode, data: unknown = scope) {
  assert.throws(
    () => evaluateExpression(expression, data),
    (error: Error & { code?: string }) => {
      assert.equal(error.name, 'ExpressionError', error.message);
      assert.equal(error.code, code, error.message);
      return true;
    },
  );
}

describe('flow expressions', () => {
  test('scalars are themselves, arrays are built element by element', () => {
    assert.equal(run(1), 1);
    assert.equal(run('x'), 'x');
    assert.equal(run(null), null);
    assert.equal(run(true), true);
    assert.deepEqual(run([1, { var: 'input.qty' }, [2]]), [1, 3, [2]]);
  });

  test('var: dotted paths, array indexes, defaults, the whole scope', () => {
    assert.equal(run({ var: 'input.message' }), 'Red shoes');
    assert.equal(run({ var: 'vars.items.1.sku' }), 'B');
    assert.equal(run({ var: ['vars.missing', 'dflt'] }), 'dflt');
    assert.equal(run({ var: 'vars.missing' }), null);
    assert.equal(run({ var: 'vars.none.deeper' }), null);
    assert.equal(run({ var: 'input.tags.length' }), null, 'only data is read, not array properties');
    assert.equal(run({ var: 'input.message.length' }), null, 'only data is read, not string properties');
    assert.deepEqual(run({ var: '' }, { a: 1 }), { a: 1 });
    assert.equal(run({ var: [{ cat: ['input.', 'qty'] }] }), 3, 'a computed path');
  });

  test('literal returns its argument unevaluated', () => {
    assert.deepEqual(run({ literal: { var: 'x' } }), { var: 'x' });
  });

  test('get reads a key of a computed value, with a default', () => {
    assert.equal(run({ get: [{ var: 'vars.items.0' }, 'sku'] }), 'A');
    assert.deepEqual(run({ get: [{ var: 'vars.items' }, 1] }), { sku: 'B', price: 20 });
    assert.equal(run({ get: [{ var: 'vars.items.0' }, 'nope', 'd'] }), 'd');
  });

  test('comparison: == and != without coercion, ordering of numbers and strings only', () => {
    assert.equal(run({ '==': [1, 1] }), true);
    assert.equal(run({ '==': [1, '1'] }), false);
    assert.equal(run({ '==': [{ literal: [1, { a: 2 }] }, [1, { object: { a: 2 } }]] }), true);
    assert.equal(run({ '==': [{ var: 'vars.missing' }, null] }), true);
    assert.equal(run({ '!=': [1, 2] }), true);
    assert.equal(run({ '!=': ['a', 'a'] }), false);
    assert.equal(run({ '<': [1, 2] }), true);
    assert.equal(run({ '<=': [2, 2] }), true);
    assert.equal(run({ '>': ['b', 'a'] }), true);
    assert.equal(run({ '>=': [1, 2] }), false);
    assert.equal(run({ '<': [1, '2'] }), false, 'mixed types never compare');
    assert.equal(run({ '>': [null, -1] }), false);
  });

  test('boolean operators short-circuit; if chains condition/value pairs', () => {
    assert.equal(run({ and: [true, 1, 'x'] }), true);
    assert.equal(run({ and: [true, 0] }), false);
    assert.equal(run({ and: [false, { '/': [1, 0] }] }), false, 'short-circuit: the division never runs');
    assert.equal(run({ or: [0, '', { var: 'input.qty' }] }), true);
    assert.equal(run({ or: [true, { '/': [1, 0] }] }), true);
    assert.equal(run({ or: [0, []] }), false);
    assert.equal(run({ not: [[]] }), true);
    assert.equal(run({ not: 1 }), false);
    assert.equal(run({ if: [false, 'a', true, 'b', 'c'] }), 'b');
    assert.equal(run({ if: [false, 'a', 'c'] }), 'c');
    assert.equal(run({ if: [true, 'a', { '/': [1, 0] }] }), 'a');
    assert.deepEqual([false, null, 0, '', []].map(truthy), [false, false, false, false, false]);
    assert.deepEqual([true, 1, 'a', [0], {}].map(truthy), [true, true, true, true, true]);
  });

  test('arithmetic on finite numbers; division by zero and overflow fail', () => {
    assert.equal(run({ '+': [1, 2, 3] }), 6);
    assert.equal(run({ '-': [5, 2] }), 3);
    assert.equal(run({ '-': [5] }), -5);
    assert.equal(run({ '*': [{ var: 'vars.price' }, 2] }), 25);
    assert.equal(run({ '/': [7, 2] }), 3.5);
    assert.equal(run({ '%': [7, 2] }), 1);
    assert.equal(run({ min: [3, 1, 2] }), 1);
    assert.equal(run({ max: [3, 1, 2] }), 3);
    assert.equal(run({ abs: -4 }), 4);
    assert.equal(run({ round: [2.345, 2] }), 2.35);
    assert.equal(run({ round: 2.5 }), 3);
    fails({ '/': [1, 0] }, 'EXPRESSION_FAILED');
    fails({ '%': [1, 0] }, 'EXPRESSION_FAILED');
    fails({ '*': [1e308, 10] }, 'EXPRESSION_FAILED');
    fails({ '+': [1, 'x'] }, 'EXPRESSION_TYPE');
    fails({ '+': [1, { var: 'vars.none' }] }, 'EXPRESSION_TYPE');
    fails({ round: [1, 11] }, 'EXPRESSION_TYPE');
    fails({ round: [1, 0.5] }, 'EXPRESSION_TYPE');
  });

  test('string operators', () => {
    assert.equal(run({ cat: ['a', 1, null, true] }), 'a1true');
    assert.equal(run({ lower: { var: 'input.message' } }), 'red shoes');
    assert.equal(run({ upper: 'abc' }), 'ABC');
    assert.equal(run({ trim: '  x ' }), 'x');
    assert.equal(run({ length: 'abc' }), 3);
    assert.equal(run({ length: { var: 'vars.items' } }), 2);
    assert.equal(run({ substr: ['abcdef', 1, 3] }), 'bcd');
    assert.equal(run({ substr: ['abcdef', -2] }), 'ef');
    assert.equal(run({ starts_with: ['abc', 'ab'] }), true);
    assert.equal(run({ ends_with: ['abc', 'bc'] }), true);
    assert.equal(run({ string: 12 }), '12');
    assert.equal(run({ string: null }), '');
    assert.equal(run({ number: '12.5' }), 12.5);
    assert.equal(run({ number: true }), 1);
    assert.equal(run({ number: 'abc' }), null);
    assert.equal(run({ number: '0x10' }), null, 'only decimal text converts');
    fails({ cat: [{ literal: { a: 1 } }] }, 'EXPRESSION_TYPE');
    fails({ lower: 1 }, 'EXPRESSION_TYPE');
    fails({ length: 1 }, 'EXPRESSION_TYPE');
    fails({ substr: ['abc', 0.5] }, 'EXPRESSION_TYPE');
    fails({ string: { literal: [1] } }, 'EXPRESSION_TYPE');
  });

  test('in: substring of a string, member of an array', () => {
    assert.equal(run({ in: ['Red', { var: 'input.message' }] }), true);
    assert.equal(run({ in: ['b', { var: 'input.tags' }] }), true);
    assert.equal(run({ in: [{ literal: { sku: 'A', price: 5 } }, { var: 'vars.items' }] }), true);
    assert.equal(run({ in: ['z', { var: 'input.tags' }] }), false);
    assert.equal(run({ in: ['z', 5] }), false);
  });

  test('coalesce returns the first non-null value', () => {
    assert.equal(run({ coalesce: [{ var: 'vars.none' }, { var: 'vars.missing' }, 0, 1] }), 0);
    assert.equal(run({ coalesce: [null] }), null);
  });

  test('object construction, merge and keys', () => {
    assert.deepEqual(run({ object: { q: { var: 'input.message' }, n: { '+': [1, 1] } } }), { q: 'Red shoes', n: 2 });
    assert.deepEqual(run({ merge: [{ var: 'vars.items.0' }, null, { object: { price: 6 } }] }), { sku: 'A', price: 6 });
    assert.deepEqual(run({ keys: { var: 'vars.items.0' } }), ['sku', 'price']);
    fails({ merge: [1] }, 'EXPRESSION_TYPE');
    fails({ keys: 1 }, 'EXPRESSION_TYPE');
  });

  test('map, filter, some and all see item and index', () => {
    assert.deepEqual(run({ map: [{ var: 'vars.items' }, { var: 'item.sku' }] }), ['A', 'B']);
    assert.deepEqual(run({ map: [{ var: 'input.tags' }, { var: 'index' }] }), [0, 1]);
    assert.deepEqual(run({ filter: [{ var: 'vars.items' }, { '>': [{ var: 'item.price' }, 10] }] }), [
      { sku: 'B', price: 20 },
    ]);
    assert.equal(run({ some: [{ var: 'vars.items' }, { '==': [{ var: 'item.sku' }, 'B'] }] }), true);
    assert.equal(run({ all: [{ var: 'vars.items' }, { '>': [{ var: 'item.price' }, 10] }] }), false);
    assert.deepEqual(run({ map: [{ var: 'vars.none' }, 1] }), []);
    assert.equal(run({ some: [null, 1] }), false);
    assert.equal(run({ all: [null, 0] }), true);
    assert.equal(
      run({ map: [{ var: 'vars.items' }, { var: 'input.qty' }] })?.toString(),
      '3,3',
      'the outer scope stays visible',
    );
    fails({ map: [1, 1] }, 'EXPRESSION_TYPE');
  });

  test('every operator is covered by this suite', () => {
    const source = readFileSync(new URL(import.meta.url), 'utf8');
    for (const op of EXPRESSION_OPERATORS)
      assert.ok(source.includes(`{ ${JSON.stringify(op).replaceAll('"', op.match(/^[a-z_]+$/) ? '' : "'")}:`), op);
  });

  test('static validation: unknown operators, arity, object shape, non-JSON', () => {
    const invalid = (expression: unknown) =>
      assert.throws(
        () => validateExpression(expression),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'EXPRESSION_INVALID', error.message);
          return true;
        },
      );
    invalid({ eval: '1' });
    invalid({ Function: ['return 1'] });
    invalid({ constructor: 1 });
    invalid({ toString: [] });
    invalid({ a: 1, b: 2 });
    invalid({});
    invalid({ '==': [1] });
    invalid({ not: [1, 2] });
    invalid({ if: [true, 1] });
    invalid({ object: [1] });
    invalid({ '+': [Number.NaN] });
    invalid(() => 1);
    invalid(undefined);
    invalid(new Date());
    validateExpression({ '+': [1, 2] });
  });

  test('prototype pollution: forbidden names in paths, keys and objects are rejected or never read', () => {
    const invalid = (expression: unknown) =>
      assert.throws(
        () => validateExpression(expression),
        (error: Error & { code?: string }) => error.code === 'EXPRESSION_INVALID',
      );
    invalid({ var: '__proto__' });
    invalid({ var: 'vars.constructor.name' });
    invalid({ var: 'a.prototype' });
    invalid({ get: [{ var: 'vars' }, '__proto__'] });
    invalid(JSON.parse('{"object": {"__proto__": {"polluted": true}}}'));
    invalid(JSON.parse('{"literal": {"__proto__": {"polluted": true}}}'));
    invalid({ object: { constructor: 1 } });
    // Computed names are refused at run time.
    fails({ var: { cat: ['__pro', 'to__'] } }, 'EXPRESSION_INVALID');
    assert.equal(run({ get: [{ var: 'vars' }, { cat: ['__pro', 'to__'] }] }), null);
    assert.equal(run({ get: [{ literal: {} }, { cat: ['constr', 'uctor'] }] }), null);
    // Data carrying such keys is neither read nor copied.
    const hostile = JSON.parse('{"a": {"__proto__": {"polluted": true}, "ok": 1}}');
    assert.deepEqual(run({ merge: [{ var: 'a' }] }, hostile), { ok: 1 });
    assert.deepEqual(run({ keys: { var: 'a' } }, hostile), ['ok']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    // Inherited members are not data.
    assert.equal(run({ var: 'toString' }, {}), null);
    assert.equal(run({ get: [{ literal: {} }, 'hasOwnProperty'] }), null);
  });

  test('the scope is never modified', () => {
    const data = structuredClone(scope);
    run({ merge: [{ var: 'vars.items.0' }, { object: { price: 1 } }] }, data);
    run({ map: [{ var: 'vars.items' }, { var: 'item' }] }, data);
    assert.deepEqual(data, scope);
  });

  test('bounds: size, depth and node count of an expression', () => {
    const limit = (expression: unknown) =>
      assert.throws(
        () => validateExpression(expression),
        (error: Error & { code?: string }) => error.code === 'EXPRESSION_LIMIT',
      );
    limit({ literal: 'x'.repeat(EXPRESSION_LIMITS.maxChars) });
    let deep: unknown = 1;
    for (let index = 0; index < EXPRESSION_LIMITS.maxDepth; index++) deep = { not: deep };
    limit(deep);
    let shallowEnough: unknown = 1;
    for (let index = 0; index < EXPRESSION_LIMITS.maxDepth - 1; index++) shallowEnough = { not: shallowEnough };
    validateExpression(shallowEnough);
    limit({ '+': Array.from({ length: EXPRESSION_LIMITS.maxNodes }, () => 1) });
    validateExpression({ '+': Array.from({ length: EXPRESSION_LIMITS.maxNodes - 2 }, () => 1) });
    limit({ var: Array.from({ length: EXPRESSION_LIMITS.maxPathSegments + 1 }, () => 'a').join('.') });
  });

  test('bounds: evaluation steps, built strings and arrays, result size', () => {
    const big = Array.from({ length: 9_000 }, (_, index) => index);
    // Nested iteration multiplies: 9,000 × 9,000 steps stops at the bound, quickly.
    const started = performance.now();
    fails({ map: [{ var: 'big' }, { map: [{ var: 'big' }, 1] }] }, 'EXPRESSION_LIMIT', { big });
    assert.ok(performance.now() - started < 2_000);
    assert.throws(
      () => evaluateExpression({ map: [{ var: 'big' }, 1] }, { big }, { maxSteps: 100 }),
      (error: Error & { code?: string }) => error.code === 'EXPRESSION_LIMIT',
    );
    const long = 'x'.repeat(EXPRESSION_LIMITS.maxOutputChars / 2 + 1);
    fails({ cat: [{ var: 's' }, { var: 's' }] }, 'EXPRESSION_LIMIT', { s: long });
    fails({ var: 's' }, 'EXPRESSION_LIMIT', { s: 'x'.repeat(EXPRESSION_LIMITS.maxOutputChars + 1) });
    fails({ map: [{ var: 'many' }, 1] }, 'EXPRESSION_LIMIT', { many: Array.from({ length: 10_001 }, () => 0) });
    // A deep equality over large data is charged per compared node.
    fails({ '==': [{ var: 'big' }, { var: 'big2' }] }, 'EXPRESSION_LIMIT', {
      big: Array.from({ length: 30_000 }, () => 1),
      big2: Array.from({ length: 30_000 }, () => 1),
    });
  });

  test('prepared expressions are frozen copies that evaluate the same', () => {
    const source = { cat: ['a', { var: 'x' }] };
    const prepared = prepareExpression(source);
    assert.notEqual(prepared, source);
    assert.ok(Object.isFrozen(prepared) && Object.isFrozen(prepared.cat));
    assert.equal(evaluateExpression(prepared, { x: 'b' }), 'ab');
    assert.throws(() => prepareExpression({ nope: 1 }));
  });

  test('the evaluator never uses eval or new Function', () => {
    const source = readFileSync(new URL('../src/flows/flow-expressions.ts', import.meta.url), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    assert.doesNotMatch(source, /\beval\s*\(|\bnew\s+Function\b|\bFunction\s*\(/);
  });
});
