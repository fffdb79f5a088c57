// SCHEMA validators: a user's JSON Schema compiled with ajv, its `pattern`/`patternProperties` regexes run by
// RE2 (re2js, linear time, the same bounds as user patterns) instead of V8's backtracking RegExp, and the schema
// itself bounded in size and depth.
import { Ajv, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import addFormats from 'ajv-formats';
import { compileUserRegex } from '../detect/user-patterns.ts';

/** Longest schema document accepted (characters of its JSON; also the `rule` field's own limit). */
export const MAX_SCHEMA_CHARS = 20_000;
/** Deepest nesting of objects and arrays in a schema document. */
export const MAX_SCHEMA_DEPTH = 32;
/** Most objects, arrays and values a schema document may hold in all. */
export const MAX_SCHEMA_NODES = 2000;

/** ajv's regex engine, backed by RE2: a pattern that RE2 refuses (lookaround, backreference, too costly) is refused. */
const re2Engine: RegExpEngine = Object.assign(
  (pattern: string) => {
    const re = compileUserRegex(pattern);
    return { test: (s: string) => re.matcher(s).find() };
  },
  { code: 'RE2' },
);

function createSchemaAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: false, code: { regExp: re2Engine } });
  addFormats.default(ajv);
  return ajv;
}

const ajv = createSchemaAjv();

function checkShape(value: unknown): void {
  let nodes = 0;
  const walk = (node: unknown, depth: number) => {
    if (++nodes > MAX_SCHEMA_NODES) throw new Error(`the schema is too large (more than ${MAX_SCHEMA_NODES} values)`);
    if (node === null || typeof node !== 'object') return;
    if (depth > MAX_SCHEMA_DEPTH)
      throw new Error(`the schema is nested too deeply (more than ${MAX_SCHEMA_DEPTH} levels)`);
    for (const child of Array.isArray(node) ? node : Object.values(node)) walk(child, depth + 1);
  };
  walk(value, 1);
}

/**
 * Parses and compiles a SCHEMA validator's rule, or throws an Error whose message says why it cannot run
 * (not JSON, not an object, over a size bound, not a valid schema, a `pattern` RE2 refuses).
 */
export function compileSchemaRule(rule: string): ValidateFunction {
  if (rule.length > MAX_SCHEMA_CHARS) {
    throw new Error(`the schema is too long: ${rule.length} characters (at most ${MAX_SCHEMA_CHARS})`);
  }
  let schema: unknown;
  try {
    schema = JSON.parse(rule);
  } catch {
    throw new Error('rule must be a JSON Schema document (it is not valid JSON)');
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new Error('rule must be a JSON Schema object');
  }
  checkShape(schema);
  // Without its $id the same rule compiles again without clashing; removed after compiling, ajv keeps nothing.
  const { $id: _id, ...anonymous } = schema as Record<string, unknown>;
  try {
    return ajv.compile(anonymous);
  } catch (error) {
    throw new Error(`rule is not a valid JSON Schema: ${(error as Error).message.slice(0, 200)}`);
  } finally {
    ajv.removeSchema(anonymous);
  }
}

/** Runs a compiled SCHEMA rule on a text: it passes when the text is JSON that satisfies the schema. */
export function validateAgainstSchema(validate: ValidateFunction, text: string): { passed: boolean; reason?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { passed: false, reason: 'text is not valid JSON' };
  }
  return validate(value) ? { passed: true } : { passed: false, reason: 'text does not satisfy the schema' };
}
