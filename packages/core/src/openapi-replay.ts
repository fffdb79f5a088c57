import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** One operation of a served OpenAPI document with its examples resolved. */
export interface ExampleOperation {
  /** `METHOD /path`, the path as OpenAPI writes it (`DELETE /patterns/{id}`). */
  key: string;
  method: string;
  path: string;
  /** JSON pointer of the operation in the document. */
  pointer: string;
  body: { example: unknown; pointer: string } | undefined;
  parameters: { name: string; in: string; example: unknown; pointer: string }[];
  /** What the operation would need an example for and has none. */
  missing: string[];
  /** Its security requirements (the document's when it states none); `[]` for a public operation. */
  security: Record<string, string[]>[];
}

export interface ReplayRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface ReplayOptions {
  /** The served OpenAPI document (`GET /openapi.json`). */
  document: Json;
  /** Sends one request; the status and the parsed body (or the text when it is not JSON). */
  send(request: ReplayRequest): Promise<{ status: number; body: any }>;
  /** Example value → the value to send instead (ids of resources the test created), exact string leaves only. */
  ids: Map<string, string>;
  /** Headers (credentials) for an operation. */
  headers?(operation: ExampleOperation): Record<string, string>;
  /** Operations sent before every other one, in this order. */
  first?: string[];
  /** Operations sent after every other one, in this order (DELETEs are sent last anyway, in reverse order). */
  last?: string[];
  /** Operations not replayed, each with the reason. */
  exclude?: Record<string, string>;
  /** Runs after an operation answered 2xx, e.g. to map an example id to the id the service created. */
  after?: Record<string, (body: any, ids: Map<string, string>) => void | Promise<void>>;
  /** Runs before an operation is sent, e.g. to create what it needs. */
  before?: Record<string, (ids: Map<string, string>) => void | Promise<void>>;
}

export interface ReplayResult {
  key: string;
  status: number;
  body: unknown;
}

function pointerDecode(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function pointerEncode(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Follows a local `$ref` (`#/components/…`) once; returns the target and its pointer. */
function deref(document: Json, value: Json, pointer: string): { value: Json; pointer: string } {
  if (typeof value?.$ref !== 'string' || !value.$ref.startsWith('#/')) return { value, pointer };
  let target: any = document;
  for (const token of value.$ref.slice(2).split('/')) target = target?.[pointerDecode(token)];
  return { value: target as Json, pointer: value.$ref.slice(1) };
}

/** Every operation of a document with its body and parameter examples, and what lacks one. */
export function exampleOperations(document: Json): ExampleOperation[] {
  const operations: ExampleOperation[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const pointer = `/paths/${pointerEncode(path)}/${method}`;
      const key = `${method.toUpperCase()} ${path}`;
      const missing: string[] = [];
      let body: ExampleOperation['body'];
      if (operation.requestBody) {
        const requestBody = deref(document, operation.requestBody, `${pointer}/requestBody`);
        const media = requestBody.value.content?.['application/json'];
        if (media && 'example' in media)
          body = { example: media.example, pointer: `${requestBody.pointer}/content/application~1json/schema` };
        else missing.push('body');
      }
      const parameters: ExampleOperation['parameters'] = [];
      ((operation.parameters ?? []) as Json[]).forEach((raw, index) => {
        const parameter = deref(document, raw, `${pointer}/parameters/${index}`);
        const { name, in: place, required, example } = parameter.value;
        if (place !== 'path' && place !== 'query' && place !== 'header') return;
        if (example !== undefined)
          parameters.push({ name, in: place, example, pointer: `${parameter.pointer}/schema` });
        else if (place === 'path' || required) missing.push(`${place} parameter ${name}`);
      });
      const security = (operation.security ?? document.security ?? []) as Record<string, string[]>[];
      operations.push({ key, method: method.toUpperCase(), path, pointer, body, parameters, missing, security });
    }
  }
  return operations;
}

/**
 * Checks every example of a document against the schema it illustrates (the body's media-type schema, each
 * parameter's schema); returns one line per example that does not validate.
 */
export function invalidExamples(document: Json): string[] {
  // Bodies are JSON as sent; parameters arrive as text, which the services coerce like this.
  const validators = [false, true].map((coerceTypes) => {
    const ajv = new Ajv({ strict: false, validateSchema: false, coerceTypes });
    addFormats.default(ajv);
    ajv.addSchema(document, 'openapi');
    return ajv;
  });
  const problems: string[] = [];
  for (const operation of exampleOperations(document)) {
    const checks = [
      ...(operation.body
        ? [{ what: 'body', example: operation.body.example, pointer: operation.body.pointer, coerce: 0 }]
        : []),
      ...operation.parameters.map((p) => ({
        what: `${p.in} ${p.name}`,
        example: p.example,
        pointer: p.pointer,
        coerce: 1,
      })),
    ];
    for (const check of checks) {
      const ajv = validators[check.coerce]!;
      const validate = ajv.compile({ $ref: `openapi#${check.pointer}` });
      if (!validate(structuredClone(check.example)))
        problems.push(`${operation.key} ${check.what}: ${ajv.errorsText(validate.errors)}`);
    }
  }
  return problems;
}

const HOW_TO_ADD = "add the operation's entry to the service's src/openapi-examples.ts (root README, contributors)";

/** The line naming what an operation lacks. */
function missingLine(operation: ExampleOperation): string {
  return `${operation.key}: no example for ${operation.missing.join(', ')}`;
}

/**
 * Everything wrong with a document's examples, one line each: an operation without an example for its body, a
 * path parameter or a required query parameter, and an example that does not validate against its schema.
 */
export function exampleProblems(document: Json): string[] {
  const missing = exampleOperations(document)
    .filter((operation) => operation.missing.length > 0)
    .map((operation) => `${missingLine(operation)} (${HOW_TO_ADD})`);
  return [...missing, ...invalidExamples(document)];
}

function substitute(value: unknown, ids: Map<string, string>): unknown {
  if (typeof value === 'string') return ids.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => substitute(item, ids));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, ids)]));
  return value;
}

function order(operations: ExampleOperation[], first: string[], last: string[]): ExampleOperation[] {
  const byKey = new Map(operations.map((operation) => [operation.key, operation]));
  const pick = (keys: string[]) =>
    keys.map((key) => {
      const operation = byKey.get(key);
      if (!operation) throw new Error(`replay order names an operation the document does not have: ${key}`);
      return operation;
    });
  const named = new Set([...first, ...last]);
  const rest = operations.filter((operation) => !named.has(operation.key));
  return [
    ...pick(first),
    ...rest.filter((operation) => operation.method !== 'DELETE'),
    ...rest.filter((operation) => operation.method === 'DELETE').reverse(),
    ...pick(last),
  ];
}

/**
 * Sends every operation's example request as a docs page's "Try it out" would (path and query parameters filled
 * with their examples, the example body as JSON), after replacing example ids by the ids in `ids`. Returns every
 * answer; throws one error listing each operation that lacks an example or did not answer 2xx.
 */
export async function replayExamples(options: ReplayOptions): Promise<ReplayResult[]> {
  const { ids, exclude = {} } = options;
  const operations = exampleOperations(options.document);
  const known = new Set(operations.map((operation) => operation.key));
  for (const key of Object.keys(exclude))
    if (!known.has(key)) throw new Error(`replay excludes an operation the document does not have: ${key}`);
  const failures: string[] = [];
  for (const operation of operations)
    if (operation.missing.length > 0 && !(operation.key in exclude)) failures.push(missingLine(operation));
  if (failures.length > 0) throw new Error(`operations without examples (${HOW_TO_ADD}):\n${failures.join('\n')}`);

  const results: ReplayResult[] = [];
  for (const operation of order(operations, options.first ?? [], options.last ?? [])) {
    if (operation.key in exclude) continue;
    await options.before?.[operation.key]?.(ids);
    let url = operation.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = { ...options.headers?.(operation) };
    for (const parameter of operation.parameters) {
      const value = substitute(parameter.example, ids);
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(text));
      else if (parameter.in === 'query') query.set(parameter.name, text);
      else headers[parameter.name] = text;
    }
    if (query.size > 0) url += `?${query}`;
    const request: ReplayRequest = { method: operation.method, url, headers };
    if (operation.body) {
      headers['content-type'] = 'application/json';
      request.body = JSON.stringify(substitute(operation.body.example, ids));
    }
    const answer = await options.send(request);
    results.push({ key: operation.key, status: answer.status, body: answer.body });
    if (answer.status < 200 || answer.status > 299) {
      const detail = JSON.stringify(answer.body)?.slice(0, 400);
      failures.push(`${operation.key} (${request.method} ${url}) answered ${answer.status}: ${detail}`);
      continue;
    }
    await options.after?.[operation.key]?.(answer.body, ids);
  }
  if (failures.length > 0) throw new Error(`example requests that did not succeed:\n${failures.join('\n')}`);
  return results;
}

/** Sends replayed requests over HTTP to a listening service at `base` (`http://127.0.0.1:port`). */
export function httpSender(base: string): ReplayOptions['send'] {
  return async ({ method, url, headers, body }) => {
    const response = await fetch(`${base}${url}`, { method, headers, body });
    const text = await response.text();
    try {
      return { status: response.status, body: JSON.parse(text) };
    } catch {
      return { status: response.status, body: text };
    }
  };
}
