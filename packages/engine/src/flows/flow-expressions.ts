/**
 * Transform and condition expressions of a flow: a small JSON expression language (data, not code). It is
 * evaluated by a plain interpreter (no `eval`, no `new Function`), bounded in size, depth, evaluation steps and
 * output size, and it never reads or writes `__proto__`, `constructor` or `prototype`.
 *
 * Forms: a JSON scalar is itself; a JSON array evaluates each element (array construction); an object has exactly
 * one key, the operator, whose value is its argument (an array of operands, or one operand).
 */

/** Static and run-time bounds of one expression. */
export const EXPRESSION_LIMITS = {
  /** Serialized size of an expression, in characters. */
  maxChars: 16_384,
  /** Nesting of operators and arrays. */
  maxDepth: 24,
  /** Operators, literals and array elements in one expression. */
  maxNodes: 1_000,
  /** Evaluation steps (every operator application and every iteration of map/filter/some/all). */
  maxSteps: 20_000,
  /** Serialized size of a result (and of any string or array built on the way), in characters. */
  maxOutputChars: 262_144,
  /** Elements of an array built by an expression. */
  maxArrayItems: 10_000,
  /** Segments of a `var` path. */
  maxPathSegments: 16,
} as const;

export type ExpressionErrorCode = 'EXPRESSION_INVALID' | 'EXPRESSION_LIMIT' | 'EXPRESSION_TYPE' | 'EXPRESSION_FAILED';

/** A rejected or failed expression: `code` says why, `path` where (JSON pointer into the expression). */
export class ExpressionError extends Error {
  override name = 'ExpressionError';
  readonly code: ExpressionErrorCode;
  readonly path: string;
  constructor(code: ExpressionErrorCode, message: string, path: string) {
    super(`${message} (at ${path || '/'})`);
    this.code = code;
    this.path = path;
  }
}

/** Property names an expression may never read or create. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Whether a key may be read or written by an expression. */
export function isSafeKey(key: string): boolean {
  return !FORBIDDEN_KEYS.has(key);
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Arity of each operator: [minimum, maximum] operands (maximum -1 = no limit beyond the node bound). */
const ARITY: ReadonlyMap<string, readonly [number, number]> = new Map<string, readonly [number, number]>([
  ['var', [1, 2]],
  ['literal', [1, 1]],
  ['get', [2, 3]],
  ['==', [2, 2]],
  ['!=', [2, 2]],
  ['<', [2, 2]],
  ['<=', [2, 2]],
  ['>', [2, 2]],
  ['>=', [2, 2]],
  ['and', [1, -1]],
  ['or', [1, -1]],
  ['not', [1, 1]],
  ['if', [3, -1]],
  ['+', [1, -1]],
  ['-', [1, 2]],
  ['*', [1, -1]],
  ['/', [2, 2]],
  ['%', [2, 2]],
  ['min', [1, -1]],
  ['max', [1, -1]],
  ['abs', [1, 1]],
  ['round', [1, 2]],
  ['cat', [1, -1]],
  ['lower', [1, 1]],
  ['upper', [1, 1]],
  ['trim', [1, 1]],
  ['length', [1, 1]],
  ['substr', [2, 3]],
  ['starts_with', [2, 2]],
  ['ends_with', [2, 2]],
  ['in', [2, 2]],
  ['coalesce', [1, -1]],
  ['object', [1, 1]],
  ['merge', [1, -1]],
  ['keys', [1, 1]],
  ['map', [2, 2]],
  ['filter', [2, 2]],
  ['some', [2, 2]],
  ['all', [2, 2]],
  ['string', [1, 1]],
  ['number', [1, 1]],
]);

/** The operator names the language knows. */
export const EXPRESSION_OPERATORS: readonly string[] = [...ARITY.keys()];

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function operands(op: string, argument: unknown): unknown[] {
  // `object` and `literal` take their argument whole; every other operator reads an array as its operands.
  if (op === 'object' || op === 'literal') return [argument];
  return Array.isArray(argument) ? argument : [argument];
}

/**
 * Checks an expression statically: known operators with the right number of operands, static `var` paths and
 * object keys free of forbidden names, and the size, depth and node bounds. Throws an ExpressionError.
 */
export function validateExpression(expression: unknown): void {
  let text: string | undefined;
  try {
    text = JSON.stringify(expression);
  } catch {
    throw new ExpressionError('EXPRESSION_INVALID', 'the expression is not JSON', '');
  }
  if (text === undefined) throw new ExpressionError('EXPRESSION_INVALID', 'the expression is not JSON', '');
  if (text.length > EXPRESSION_LIMITS.maxChars)
    throw new ExpressionError(
      'EXPRESSION_LIMIT',
      `the expression exceeds ${EXPRESSION_LIMITS.maxChars} characters`,
      '',
    );
  let nodes = 0;
  const visit = (node: unknown, path: string, depth: number): void => {
    if (depth > EXPRESSION_LIMITS.maxDepth)
      throw new ExpressionError(
        'EXPRESSION_LIMIT',
        `the expression nests deeper than ${EXPRESSION_LIMITS.maxDepth}`,
        path,
      );
    if (++nodes > EXPRESSION_LIMITS.maxNodes)
      throw new ExpressionError(
        'EXPRESSION_LIMIT',
        `the expression has more than ${EXPRESSION_LIMITS.maxNodes} nodes`,
        path,
      );
    if (node === null || typeof node === 'boolean' || typeof node === 'string') return;
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) throw new ExpressionError('EXPRESSION_INVALID', 'numbers must be finite', path);
      return;
    }
    if (Array.isArray(node)) {
      for (const [index, child] of node.entries()) visit(child, `${path}/${index}`, depth + 1);
      return;
    }
    if (!isPlainObject(node)) throw new ExpressionError('EXPRESSION_INVALID', 'unsupported value', path);
    const keys = Object.keys(node);
    if (keys.length !== 1)
      throw new ExpressionError(
        'EXPRESSION_INVALID',
        'an operation is an object with exactly one key (the operator); build objects with {"object": {...}}',
        path,
      );
    const op = keys[0]!;
    const arity = ARITY.get(op);
    const opPath = `${path}/${op.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (!arity) throw new ExpressionError('EXPRESSION_INVALID', `unknown operator "${op.slice(0, 40)}"`, path);
    const argument = node[op];
    if (op === 'literal') {
      checkLiteral(argument, opPath);
      return;
    }
    if (op === 'object') {
      if (!isPlainObject(argument))
        throw new ExpressionError('EXPRESSION_INVALID', '"object" takes an object of key → expression', opPath);
      for (const [key, value] of Object.entries(argument)) {
        if (!isSafeKey(key)) throw new ExpressionError('EXPRESSION_INVALID', `the key "${key}" is not allowed`, opPath);
        visit(value, `${opPath}/${key}`, depth + 1);
      }
      return;
    }
    const args = operands(op, argument);
    const [min, max] = arity;
    if (args.length < min || (max >= 0 && args.length > max))
      throw new ExpressionError(
        'EXPRESSION_INVALID',
        `"${op}" takes ${max === min ? min : max < 0 ? `at least ${min}` : `${min} to ${max}`} operand(s)`,
        opPath,
      );
    if (op === 'var') {
      const [pathArg] = args;
      if (typeof pathArg === 'string') checkPath(pathArg, `${opPath}/0`);
      else if (pathArg !== null) visit(pathArg, `${opPath}/0`, depth + 1);
      if (args.length > 1) visit(args[1], `${opPath}/1`, depth + 1);
      return;
    }
    if (op === 'get' && typeof args[1] === 'string' && !isSafeKey(args[1]))
      throw new ExpressionError('EXPRESSION_INVALID', `the key "${args[1]}" is not allowed`, `${opPath}/1`);
    if (op === 'if' && args.length % 2 === 0)
      throw new ExpressionError(
        'EXPRESSION_INVALID',
        '"if" takes condition/value pairs and a final else value',
        opPath,
      );
    for (const [index, child] of args.entries()) visit(child, `${opPath}/${index}`, depth + 1);
  };
  visit(expression, '', 1);
}

function checkLiteral(value: unknown, path: string): void {
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) for (const [index, child] of node.entries()) walk(child, `${at}/${index}`);
    else if (isPlainObject(node))
      for (const [key, child] of Object.entries(node)) {
        if (!isSafeKey(key)) throw new ExpressionError('EXPRESSION_INVALID', `the key "${key}" is not allowed`, at);
        walk(child, `${at}/${key}`);
      }
    else if (typeof node === 'number' && !Number.isFinite(node))
      throw new ExpressionError('EXPRESSION_INVALID', 'numbers must be finite', at);
  };
  walk(value, path);
}

function splitPath(path: string): string[] {
  return path === '' ? [] : path.split('.');
}

function checkPath(path: string, at: string): void {
  const segments = splitPath(path);
  if (segments.length > EXPRESSION_LIMITS.maxPathSegments)
    throw new ExpressionError(
      'EXPRESSION_LIMIT',
      `a path has more than ${EXPRESSION_LIMITS.maxPathSegments} segments`,
      at,
    );
  for (const segment of segments)
    if (!isSafeKey(segment))
      throw new ExpressionError('EXPRESSION_INVALID', `the path segment "${segment}" is not allowed`, at);
}

/** JSONLogic truthiness: false, null, 0, "" and [] are false; everything else is true. */
export function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}

interface Evaluation {
  steps: number;
  readonly maxSteps: number;
}

/** Reads an own property of plain data; anything else (a missing key, a forbidden name, a non-object) is undefined. */
function readKey(container: unknown, key: string): unknown {
  if (!isSafeKey(key)) return undefined;
  if (Array.isArray(container)) {
    return /^(?:0|[1-9]\d{0,8})$/.test(key) ? container[Number(key)] : undefined;
  }
  if (isPlainObject(container) && Object.hasOwn(container, key)) return container[key];
  return undefined;
}

function lookup(scope: unknown, path: string): unknown {
  let current: unknown = scope;
  for (const segment of splitPath(path)) {
    current = readKey(current, segment);
    if (current === undefined) return undefined;
  }
  return current;
}

/** Size of a value once serialized, in characters, stopping early once past `limit`. */
export function jsonSize(value: unknown, limit: number): number {
  let size = 0;
  const walk = (node: unknown): void => {
    if (size > limit) return;
    if (node === null || node === undefined) size += 4;
    else if (typeof node === 'string') size += node.length + 2;
    else if (typeof node === 'number' || typeof node === 'boolean') size += String(node).length;
    else if (Array.isArray(node)) {
      size += 2;
      for (const child of node) {
        walk(child);
        size++;
        if (size > limit) return;
      }
    } else if (typeof node === 'object') {
      size += 2;
      for (const [key, child] of Object.entries(node)) {
        size += key.length + 4;
        walk(child);
        if (size > limit) return;
      }
    } else size += 4;
  };
  walk(value);
  return size;
}

function number(value: unknown, op: string, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new ExpressionError('EXPRESSION_TYPE', `"${op}" needs finite numbers`, path);
  return value;
}

function string(value: unknown, op: string, path: string): string {
  if (typeof value !== 'string') throw new ExpressionError('EXPRESSION_TYPE', `"${op}" needs a string`, path);
  return value;
}

function finite(value: number, op: string, path: string): number {
  if (!Number.isFinite(value))
    throw new ExpressionError('EXPRESSION_FAILED', `"${op}" produced a non-finite number`, path);
  return value;
}

function boundedString(value: string, path: string): string {
  if (value.length > EXPRESSION_LIMITS.maxOutputChars)
    throw new ExpressionError(
      'EXPRESSION_LIMIT',
      `a string exceeds ${EXPRESSION_LIMITS.maxOutputChars} characters`,
      path,
    );
  return value;
}

function boundedArray<T>(value: T[], path: string): T[] {
  if (value.length > EXPRESSION_LIMITS.maxArrayItems)
    throw new ExpressionError('EXPRESSION_LIMIT', `an array exceeds ${EXPRESSION_LIMITS.maxArrayItems} items`, path);
  return value;
}

/** Structural equality of JSON values, without coercion; each compared node costs a step. */
function equal(a: unknown, b: unknown, run: Evaluation, path: string): boolean {
  step(run, path);
  if (a === b) return true;
  if (a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => equal(item, b[index], run, path));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && equal(a[key], b[key], run, path));
  }
  return false;
}

function step(run: Evaluation, path: string): void {
  if (++run.steps > run.maxSteps)
    throw new ExpressionError('EXPRESSION_LIMIT', `evaluation exceeds ${run.maxSteps} steps`, path);
}

function compare(op: string, a: unknown, b: unknown): boolean {
  const comparable =
    (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
  if (!comparable) return false;
  const x = a as number | string;
  const y = b as number | string;
  if (op === '<') return x < y;
  if (op === '<=') return x <= y;
  if (op === '>') return x > y;
  return x >= y;
}

function evaluateNode(node: unknown, scope: unknown, run: Evaluation, path: string): unknown {
  if (node === null || typeof node !== 'object') return node;
  step(run, path);
  if (Array.isArray(node))
    return boundedArray(
      node.map((child, index) => evaluateNode(child, scope, run, `${path}/${index}`)),
      path,
    );
  const op = Object.keys(node)[0]!;
  const argument = (node as Record<string, unknown>)[op];
  const at = `${path}/${op}`;
  const args = operands(op, argument);
  const value = (index: number) => evaluateNode(args[index], scope, run, `${at}/${index}`);
  const all = () => args.map((_, index) => value(index));
  switch (op) {
    case 'literal':
      return argument;
    case 'var': {
      const rawPath = value(0);
      const fallback = args.length > 1 ? value(1) : null;
      if (rawPath === null || rawPath === '') return scope ?? fallback;
      const pathText = typeof rawPath === 'number' ? String(rawPath) : string(rawPath, op, at);
      checkPath(pathText, at);
      const found = lookup(scope, pathText);
      return found === undefined || found === null ? fallback : found;
    }
    case 'get': {
      const container = value(0);
      const key = value(1);
      const keyText = typeof key === 'number' ? String(key) : string(key, op, at);
      const found = readKey(container, keyText);
      return found === undefined || found === null ? (args.length > 2 ? value(2) : null) : found;
    }
    case '==':
      return equal(value(0), value(1), run, at);
    case '!=':
      return !equal(value(0), value(1), run, at);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return compare(op, value(0), value(1));
    case 'and': {
      for (let index = 0; index < args.length; index++) if (!truthy(value(index))) return false;
      return true;
    }
    case 'or': {
      for (let index = 0; index < args.length; index++) if (truthy(value(index))) return true;
      return false;
    }
    case 'not':
      return !truthy(value(0));
    case 'if': {
      let index = 0;
      for (; index + 1 < args.length; index += 2) if (truthy(value(index))) return value(index + 1);
      return value(index);
    }
    case '+':
      return finite(
        all().reduce<number>((sum, item, index) => sum + number(item, op, `${at}/${index}`), 0),
        op,
        at,
      );
    case '*':
      return finite(
        all().reduce<number>((product, item, index) => product * number(item, op, `${at}/${index}`), 1),
        op,
        at,
      );
    case '-': {
      const first = number(value(0), op, at);
      return finite(args.length === 1 ? -first : first - number(value(1), op, at), op, at);
    }
    case '/':
    case '%': {
      const dividend = number(value(0), op, at);
      const divisor = number(value(1), op, at);
      if (divisor === 0) throw new ExpressionError('EXPRESSION_FAILED', `"${op}" by zero`, at);
      return finite(op === '/' ? dividend / divisor : dividend % divisor, op, at);
    }
    case 'min':
    case 'max': {
      const numbers = all().map((item, index) => number(item, op, `${at}/${index}`));
      return op === 'min' ? Math.min(...numbers) : Math.max(...numbers);
    }
    case 'abs':
      return Math.abs(number(value(0), op, at));
    case 'round': {
      const input = number(value(0), op, at);
      const digits = args.length > 1 ? number(value(1), op, at) : 0;
      if (!Number.isInteger(digits) || digits < 0 || digits > 10)
        throw new ExpressionError('EXPRESSION_TYPE', '"round" takes 0 to 10 decimal digits', at);
      const factor = 10 ** digits;
      return finite(Math.round(input * factor) / factor, op, at);
    }
    case 'cat': {
      let text = '';
      for (let index = 0; index < args.length; index++) {
        const item = value(index);
        if (item !== null && typeof item === 'object')
          throw new ExpressionError('EXPRESSION_TYPE', '"cat" joins scalars only', `${at}/${index}`);
        text += item === null || item === undefined ? '' : String(item);
        boundedString(text, at);
      }
      return text;
    }
    case 'lower':
      return string(value(0), op, at).toLowerCase();
    case 'upper':
      return boundedString(string(value(0), op, at).toUpperCase(), at);
    case 'trim':
      return string(value(0), op, at).trim();
    case 'length': {
      const item = value(0);
      if (typeof item === 'string' || Array.isArray(item)) return item.length;
      throw new ExpressionError('EXPRESSION_TYPE', '"length" needs a string or an array', at);
    }
    case 'substr': {
      const text = string(value(0), op, at);
      const start = number(value(1), op, at);
      const length = args.length > 2 ? number(value(2), op, at) : undefined;
      if (!Number.isInteger(start) || (length !== undefined && (!Number.isInteger(length) || length < 0)))
        throw new ExpressionError('EXPRESSION_TYPE', '"substr" takes an integer start and a non-negative length', at);
      const from = start < 0 ? Math.max(0, text.length + start) : start;
      return length === undefined ? text.slice(from) : text.slice(from, from + length);
    }
    case 'starts_with':
      return string(value(0), op, at).startsWith(string(value(1), op, at));
    case 'ends_with':
      return string(value(0), op, at).endsWith(string(value(1), op, at));
    case 'in': {
      const needle = value(0);
      const haystack = value(1);
      if (typeof haystack === 'string') return typeof needle === 'string' && haystack.includes(needle);
      if (Array.isArray(haystack)) return haystack.some((item) => equal(item, needle, run, at));
      return false;
    }
    case 'coalesce': {
      for (let index = 0; index < args.length; index++) {
        const item = value(index);
        if (item !== null && item !== undefined) return item;
      }
      return null;
    }
    case 'object': {
      const built: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(argument as Record<string, unknown>)) {
        if (!isSafeKey(key)) throw new ExpressionError('EXPRESSION_INVALID', `the key "${key}" is not allowed`, at);
        built[key] = evaluateNode(child, scope, run, `${at}/${key}`);
      }
      return built;
    }
    case 'merge': {
      const built: Record<string, unknown> = {};
      all().forEach((item, index) => {
        if (item === null) return;
        if (!isPlainObject(item))
          throw new ExpressionError('EXPRESSION_TYPE', '"merge" joins objects (or null)', `${at}/${index}`);
        for (const [key, child] of Object.entries(item)) {
          step(run, at);
          if (isSafeKey(key)) built[key] = child;
        }
      });
      return built;
    }
    case 'keys': {
      const item = value(0);
      if (!isPlainObject(item)) throw new ExpressionError('EXPRESSION_TYPE', '"keys" needs an object', at);
      return boundedArray(Object.keys(item).filter(isSafeKey), at);
    }
    case 'map':
    case 'filter':
    case 'some':
    case 'all': {
      const items = value(0);
      if (items === null) return op === 'some' ? false : op === 'all' ? true : [];
      if (!Array.isArray(items)) throw new ExpressionError('EXPRESSION_TYPE', `"${op}" needs an array`, at);
      const outer = isPlainObject(scope) ? scope : {};
      const each = (item: unknown, index: number) => {
        step(run, at);
        return evaluateNode(args[1], { ...outer, item, index }, run, `${at}/1`);
      };
      if (op === 'map') return boundedArray(items.map(each), at);
      if (op === 'filter') return items.filter((item, index) => truthy(each(item, index)));
      if (op === 'some') return items.some((item, index) => truthy(each(item, index)));
      return items.every((item, index) => truthy(each(item, index)));
    }
    case 'string': {
      const item = value(0);
      if (item === null || item === undefined) return '';
      if (typeof item === 'object') throw new ExpressionError('EXPRESSION_TYPE', '"string" converts scalars only', at);
      return String(item);
    }
    case 'number': {
      const item = value(0);
      if (typeof item === 'number') return item;
      if (typeof item === 'boolean') return item ? 1 : 0;
      if (typeof item === 'string' && /^\s*-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/.test(item)) {
        return finite(Number(item), op, at);
      }
      return null;
    }
    default:
      throw new ExpressionError('EXPRESSION_INVALID', `unknown operator "${op.slice(0, 40)}"`, path);
  }
}

/** Expressions validated and deep-frozen by prepareExpression: evaluation skips validating them again. */
const prepared = new WeakSet<object>();

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Validates an expression and returns a deep-frozen copy that later evaluations trust. Throws an ExpressionError. */
export function prepareExpression<T>(expression: T): T {
  validateExpression(expression);
  const copy = deepFreeze(structuredClone(expression));
  if (copy !== null && typeof copy === 'object') prepared.add(copy);
  return copy;
}

export interface EvaluateOptions {
  /** Step bound for this evaluation (at most EXPRESSION_LIMITS.maxSteps). */
  maxSteps?: number;
}

/**
 * Evaluates a validated expression against `scope` (plain JSON data). The result is JSON (undefined becomes
 * null) no larger than EXPRESSION_LIMITS.maxOutputChars; the scope is never modified. Throws an ExpressionError.
 */
export function evaluateExpression(expression: unknown, scope: unknown, options: EvaluateOptions = {}): Json {
  if (!(typeof expression === 'object' && expression !== null && prepared.has(expression)))
    validateExpression(expression);
  const run: Evaluation = {
    steps: 0,
    maxSteps: Math.min(options.maxSteps ?? EXPRESSION_LIMITS.maxSteps, EXPRESSION_LIMITS.maxSteps),
  };
  const result = evaluateNode(expression, scope, run, '') ?? null;
  if (jsonSize(result, EXPRESSION_LIMITS.maxOutputChars) > EXPRESSION_LIMITS.maxOutputChars)
    throw new ExpressionError(
      'EXPRESSION_LIMIT',
      `the result exceeds ${EXPRESSION_LIMITS.maxOutputChars} characters`,
      '',
    );
  return result as Json;
}
