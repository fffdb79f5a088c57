import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({
    removeAdditional: true,
    useDefaults: true,
    allErrors: false,
    strict: false,
    // Errors carry the offending value, so a message can say what was given (bounded, see readableIssues).
    verbose: true,
    ...options,
  });
  addFormats.default(ajv);
  return ajv;
}

/**
 * Two validators: path, query and header values arrive as text, so they are coerced to the declared type
 * (`?limit=20` is the number 20); JSON bodies are not coerced, so `"1"` is not accepted where a number is due.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<any> {
  const coercing = makeAjv({ coerceTypes: 'array' });
  const strict = makeAjv({ coerceTypes: false });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(schema as object);
  };
}

/** One problem a JSON-Schema validator (ajv, or TypeBox's compiler) reports. */
export interface SchemaIssue {
  keyword?: string;
  instancePath?: string;
  params?: Record<string, unknown>;
  message?: string;
  /** The offending value (ajv with `verbose`). */
  data?: unknown;
}

/** A readable problem: the field, the sentence about it, and the machine path of the detail entry. */
export interface ReadableIssue {
  /** e.g. `querystring/dataset`, `body/items/0/sku` */
  path: string;
  /** e.g. `query parameter dataset must be one of metrics, alerts (got "nope")` */
  text: string;
  /** The sentence without the field name: `must be one of metrics, alerts (got "nope")` */
  message: string;
}

const PARTS: Record<string, string> = {
  body: 'body field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};
const SECRET_NAME = /pass(word)?|secret|token|api.?key|authorization|credential|cookie/i;
const MAX_ISSUES = 20;
const MAX_LISTED = 20;

function pointerSegments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function valueAt(input: unknown, segments: readonly string[]): unknown {
  let value = input;
  for (const segment of segments) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** `items.0.sku` → `items[0].sku` */
function fieldName(segments: readonly string[]): string {
  return segments.reduce((name, s) => (/^\d+$/.test(s) ? `${name}[${s}]` : name ? `${name}.${s}` : s), '');
}

/** What was given, bounded: short plain values only; long or key-like strings and secret-named fields are not echoed. */
function given(value: unknown, segments: readonly string[]): string | undefined {
  if (value === undefined) return undefined;
  if (segments.some((s) => SECRET_NAME.test(s))) return undefined;
  if (typeof value === 'string') {
    const keyLike = value.length >= 16 && /^[\w+/=.-]+$/.test(value) && /\d/.test(value) && /[A-Za-z]/.test(value);
    return value.length > 32 || keyLike ? `a string of ${value.length} characters` : JSON.stringify(value);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? '' : 's'}`;
  return 'an object';
}

function list(values: readonly unknown[]): string {
  const shown = values.slice(0, MAX_LISTED).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return values.length > MAX_LISTED ? `${shown.join(', ')} … (${values.length} in all)` : shown.join(', ');
}

/** The sentence for one keyword (without the field name and the given value). */
function sentence(issue: SchemaIssue): string {
  const p = issue.params ?? {};
  switch (issue.keyword) {
    case 'type':
      return `must be ${String(p.type).replace(/,/g, ' or ')}`;
    case 'maximum':
      return `must be at most ${p.limit}`;
    case 'minimum':
      return `must be at least ${p.limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${p.limit}`;
    case 'exclusiveMinimum':
      return `must be more than ${p.limit}`;
    case 'maxLength':
      return `must be at most ${p.limit} characters long`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters long`;
    case 'maxItems':
      return `must have at most ${p.limit} items`;
    case 'minItems':
      return `must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`;
    case 'maxProperties':
      return `must have at most ${p.limit} entries`;
    case 'minProperties':
      return `must have at least ${p.limit} entr${p.limit === 1 ? 'y' : 'ies'}`;
    case 'pattern':
      return `must match the pattern ${p.pattern}`;
    case 'format':
      return `must be a valid ${p.format}`;
    case 'uniqueItems':
      return 'must not repeat items';
    default:
      return issue.message ?? 'is invalid';
  }
}

/**
 * Turns a validator's raw issues into one readable problem per field: which field (`body field items[0].sku`,
 * `query parameter dataset`, or `argument q` for tool calls), what is allowed (the enum or const values of every
 * alternative, the type, the bound), and what was given (bounded; never a long or key-like value). `part` is the
 * request part (`body`, `querystring`, `params`, `headers`) or `argument` for tool arguments.
 */
export function readableIssues(issues: readonly SchemaIssue[], part: string, input?: unknown): ReadableIssue[] {
  const groups = new Map<string, SchemaIssue[]>();
  const unknown = new Set<string>();
  const missing = new Set<string>();
  for (const issue of issues) {
    const at = issue.instancePath ?? '';
    if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
      missing.add(`${at}/${issue.params.missingProperty.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      continue;
    }
    if (issue.keyword === 'boolean' || issue.keyword === 'additionalProperties') {
      const extra = issue.params?.additionalProperty ?? issue.params?.additionalProperties;
      for (const name of [extra].flat()) if (typeof name === 'string') unknown.add(`${at}/${name}`);
      if (issue.keyword === 'boolean') unknown.add(at);
      continue;
    }
    groups.set(at, [...(groups.get(at) ?? []), issue]);
  }
  const label = (segments: string[]) =>
    part === 'argument'
      ? `argument ${fieldName(segments) || '(arguments)'}`
      : `${PARTS[part] ?? part} ${fieldName(segments)}`.trim();
  const out: ReadableIssue[] = [];
  const add = (pointer: string, message: string) => {
    const segments = pointerSegments(pointer);
    out.push({
      path: `${part === 'argument' ? '' : part}${pointer}` || '/',
      text: `${label(segments)} ${message}`,
      message,
    });
  };
  for (const pointer of missing) add(pointer, 'is required');
  for (const pointer of unknown) {
    const segments = pointerSegments(pointer);
    out.push({
      path: `${part === 'argument' ? '' : part}${pointer}` || '/',
      text: `unknown ${part === 'argument' ? 'argument' : (PARTS[part] ?? part)} ${fieldName(segments)}`,
      message: 'is not allowed',
    });
  }
  for (const [pointer, group] of groups) {
    const segments = pointerSegments(pointer);
    const value = group.find((i) => 'data' in i)?.data ?? valueAt(input, segments);
    const allowed = group.flatMap((i) =>
      i.keyword === 'const' ? [i.params?.allowedValue] : i.keyword === 'enum' ? [i.params?.allowedValues].flat() : [],
    );
    const types = [...new Set(group.filter((i) => i.keyword === 'type').map((i) => String(i.params?.type)))];
    const specific = group.find((i) => !['const', 'enum', 'type', 'anyOf', 'oneOf'].includes(i.keyword ?? ''));
    let message: string;
    if (allowed.length > 0 && !specific) {
      const nullable = types.includes('null') ? ' (or null)' : '';
      message = `must be one of ${list([...new Set(allowed)])}${nullable}`;
    } else if (specific) message = sentence(specific);
    else if (types.length > 0) message = `must be ${types.join(' or ')}`;
    else
      message = group.some((i) => i.keyword === 'anyOf' || i.keyword === 'oneOf')
        ? 'does not match any allowed form'
        : sentence(group[0]!);
    const shown = given(value, segments);
    add(pointer, shown === undefined ? message : `${message} (got ${shown})`);
    if (out.length >= MAX_ISSUES) break;
  }
  return out.slice(0, MAX_ISSUES);
}
