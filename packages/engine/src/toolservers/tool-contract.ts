// A discovered tool's contract: the checks it must pass before it can be enabled, its impact classes (which decide
// whether an explicit review is needed), its fingerprint (a change re-gates it) and its argument validator.
import { payloadHash, readableIssues, type SchemaIssue } from '@keel/core';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** Impact classes; every class but `read` needs an explicit review before the tool is enabled. */
export const IMPACTS = ['read', 'write', 'destructive', 'financial', 'external_message', 'sensitive'] as const;
export type Impact = (typeof IMPACTS)[number];

export const CONTRACT_LIMITS = Object.freeze({
  schemaBytes: 65_536,
  schemaDepth: 12,
  descriptionChars: 4000,
  patternChars: 200,
  argumentBytes: 262_144,
});

export interface DiscoveredContract {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown> | undefined;
}

const FINANCIAL = /\b(pay|payment|payout|refund|charge|invoice|billing|transfer|withdraw|deposit|wallet|purchase)s?\b/i;
const EXTERNAL =
  /\b(send|email|e-mail|sms|text message|notify|notification|message|post|tweet|publish|slack|webhook)s?\b/i;
const SENSITIVE =
  /\b(pii|personal|customer data|password|credential|secret|ssn|passport|health|medical|address|phone|dob|birth)s?\b/i;
const DESTRUCTIVE = /\b(delete|remove|drop|destroy|purge|erase|truncate|wipe|cancel)s?\b/i;

function words(contract: DiscoveredContract): string {
  return `${contract.name.replace(/[_.-]+/g, ' ')} ${contract.title ?? ''} ${contract.description ?? ''}`;
}

/**
 * The impact classes of a tool, from its annotations and its name and description. MCP's defaults apply: a tool
 * that does not declare `readOnlyHint: true` may write, and a writing tool is destructive unless it declares
 * `destructiveHint: false`. Words may add classes, never remove them.
 */
export function classifyImpact(contract: DiscoveredContract): Impact[] {
  const hints = contract.annotations ?? {};
  const text = words(contract);
  const classes = new Set<Impact>();
  const readOnly = hints.readOnlyHint === true;
  if (readOnly) classes.add('read');
  else {
    classes.add('write');
    if (hints.destructiveHint !== false || DESTRUCTIVE.test(text)) classes.add('destructive');
  }
  if (FINANCIAL.test(text)) classes.add('financial');
  if (EXTERNAL.test(text) || hints.openWorldHint === true) classes.add('external_message');
  if (SENSITIVE.test(text)) classes.add('sensitive');
  return IMPACTS.filter((impact) => classes.has(impact));
}

/** True when a tool of these classes needs an explicit review (anything beyond `read`). */
export function needsReview(impact: readonly Impact[]): boolean {
  return impact.some((c) => c !== 'read');
}

/** The fingerprint of what a caller relies on: name, description, schemas and annotations. */
export function contractHash(contract: DiscoveredContract): string {
  return payloadHash({
    name: contract.name,
    description: contract.description ?? null,
    input: contract.inputSchema ?? null,
    output: contract.outputSchema ?? null,
    annotations: contract.annotations ?? null,
  });
}

function depthOf(value: unknown, level = 1): number {
  if (Array.isArray(value)) return Math.max(level, ...value.map((v) => depthOf(v, level + 1)));
  if (value && typeof value === 'object')
    return Math.max(level, ...Object.values(value).map((v) => depthOf(v, level + 1)));
  return level;
}

/** A regular expression is refused when it is long or nests quantifiers (catastrophic backtracking). */
function unsafePattern(pattern: string): boolean {
  if (pattern.length > CONTRACT_LIMITS.patternChars) return true;
  return /\([^)]*[+*][^)]*\)[+*{]/.test(pattern) || /\\\d/.test(pattern);
}

function patterns(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) patterns(v, found);
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'pattern' && typeof v === 'string') found.push(v);
      else if (key === 'patternProperties' && v && typeof v === 'object') found.push(...Object.keys(v));
      patterns(v, found);
    }
  }
  return found;
}

const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: false, useDefaults: false, validateSchema: true });
addFormats.default(ajv);
const validators = new Map<string, ValidateFunction>();

function compile(hash: string, schema: unknown): ValidateFunction {
  let validate = validators.get(hash);
  if (!validate) {
    if (validators.size >= 5000) validators.clear();
    validate = ajv.compile(schema as object);
    validators.set(hash, validate);
  }
  return validate;
}

/** Checks a contract; the problems (at most 10, readable) or an empty list when it passes. */
export function checkContract(contract: DiscoveredContract): string[] {
  const problems: string[] = [];
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(contract.name))
    problems.push('the name must be 1-128 letters, digits, _, . or -');
  if ((contract.description ?? '').length > CONTRACT_LIMITS.descriptionChars)
    problems.push(`the description is longer than ${CONTRACT_LIMITS.descriptionChars} characters`);
  const schema = contract.inputSchema as Record<string, unknown> | null;
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || schema.type !== 'object') {
    problems.push('inputSchema must be a JSON Schema of type object');
    return problems;
  }
  const text = JSON.stringify(schema);
  if (Buffer.byteLength(text) > CONTRACT_LIMITS.schemaBytes)
    problems.push(`inputSchema is larger than ${CONTRACT_LIMITS.schemaBytes} bytes`);
  if (depthOf(schema) > CONTRACT_LIMITS.schemaDepth)
    problems.push(`inputSchema nests deeper than ${CONTRACT_LIMITS.schemaDepth} levels`);
  if (patterns(schema).some(unsafePattern))
    problems.push('inputSchema has a pattern that is too long or may backtrack catastrophically');
  if (text.includes('"$ref":"http') || text.includes('"$ref":"//'))
    problems.push('inputSchema refers to remote schemas');
  if (problems.length > 0) return problems;
  try {
    compile(contractHash(contract), schema);
  } catch (error) {
    problems.push(`inputSchema does not compile: ${(error as Error).message.slice(0, 200)}`);
  }
  return problems;
}

/**
 * Validates call arguments against the stored input schema: an argument the schema does not declare is refused
 * (even when the schema would allow extra properties), then the schema decides. Readable problems, at most 10.
 */
export function argumentProblems(
  hash: string,
  schema: Record<string, unknown>,
  args: Record<string, unknown>,
): { path: string; message: string }[] {
  if (Buffer.byteLength(JSON.stringify(args)) > CONTRACT_LIMITS.argumentBytes)
    return [{ path: 'arguments', message: `arguments exceed ${CONTRACT_LIMITS.argumentBytes} bytes` }];
  const declared = new Set(Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {}));
  const unknown = Object.keys(args).filter((key) => !declared.has(key));
  if (unknown.length > 0)
    return unknown
      .slice(0, 10)
      .map((key) => ({ path: `arguments/${key}`, message: `arguments/${key} is not an argument of this tool` }));
  const validate = compile(hash, schema);
  if (validate(args)) return [];
  return readableIssues((validate.errors ?? []) as SchemaIssue[], 'arguments', args)
    .slice(0, 10)
    .map((issue) => ({ path: issue.path, message: issue.text }));
}
