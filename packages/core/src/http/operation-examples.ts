import type { RouteOptions } from 'fastify';

/** The example request of one operation: what the docs page's "Try it out" sends as is. */
export interface OperationExample {
  /** The JSON body. */
  body?: unknown;
  /** Query-string parameters, by name. */
  query?: Record<string, unknown>;
  /** Path parameters, by name. */
  params?: Record<string, unknown>;
  /** Request headers the route documents (lower-case names), e.g. a share token. */
  headers?: Record<string, string>;
}

/**
 * A service's examples, one per operation, keyed `METHOD /path` with the path as OpenAPI writes it
 * (`DELETE /patterns/{id}`).
 */
export type OperationExamples = Readonly<Record<string, OperationExample>>;

type Schema = Record<string | symbol, unknown>;

/** The table key of a route: `POST /patterns/{id}` for Fastify's `/patterns/:id`. */
export function operationKey(method: string, fastifyUrl: string): string {
  return `${method.toUpperCase()} ${fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
}

/** A copy of `schema` whose property `name` carries `examples: [value]`, looking into `allOf` members too. */
function withPropertyExample(schema: Schema, name: string, value: unknown): Schema | undefined {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (properties?.[name])
    return { ...schema, properties: { ...properties, [name]: { ...properties[name], examples: [value] } } };
  const members = schema.allOf as Schema[] | undefined;
  if (!members) return undefined;
  for (const [index, member] of members.entries()) {
    const next = withPropertyExample(member, name, value);
    if (next) return { ...schema, allOf: members.map((m, i) => (i === index ? next : m)) };
  }
  return undefined;
}

/** A copy of an object schema whose named properties carry `examples: [value]`. */
function withPropertyExamples(
  key: string,
  schema: Schema | undefined,
  values: Record<string, unknown> | undefined,
): Schema | undefined {
  if (!schema || !values) return schema;
  let next = schema;
  for (const [name, value] of Object.entries(values)) {
    const updated = withPropertyExample(next, name, value);
    if (!updated) throw new Error(`${key}: the example names a parameter the route does not declare: ${name}`);
    next = updated;
  }
  return next;
}

/**
 * Writes a route's example into its schemas with the JSON Schema `examples` keyword, before the OpenAPI
 * generator reads them: the body schema's `examples: [body]` becomes the media type's `example` (the body
 * Swagger UI's "Try it out" starts from), each query and path property's `examples: [value]` the parameter's
 * `example` (the value the field is filled with). The route's own schema objects are not changed (they may be
 * shared by several routes); annotations do not change validation.
 */
export function attachOperationExample(route: RouteOptions, examples: OperationExamples): void {
  if (!route.schema) return;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const method = methods.find((m) => m !== 'HEAD');
  if (!method) return;
  const key = operationKey(method, route.url);
  const example = examples[key];
  if (!example) return;
  const schema = { ...route.schema } as Record<string, unknown>;
  // A route that reads its body itself (an MCP endpoint) gets the empty schema, which accepts any JSON: the
  // document then shows the example without the route validating anything it did not before.
  if (example.body !== undefined) schema.body = { ...((schema.body as Schema) ?? {}), examples: [example.body] };
  for (const [part, values] of [
    ['querystring', example.query],
    ['params', example.params],
    ['headers', example.headers],
  ] as const) {
    const next = withPropertyExamples(key, schema[part] as Schema | undefined, values);
    if (next === undefined) delete schema[part];
    else schema[part] = next;
  }
  route.schema = schema as RouteOptions['schema'];
}
