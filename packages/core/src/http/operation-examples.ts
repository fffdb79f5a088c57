import type { RouteOptions } from 'fastify';

/** The example request of one operation: what the docs page's "Try it out" sends as is. */
export interface OperationExample {
  /** The JSON body. */
  body?: unknown;
  /** Query-string parameters, by name. */
  query?: Record<string, unknown>;
  /** Path parameters, by name. */
  params?: Record<string, unknown>;
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

/** A copy of an object schema whose named properties carry `examples: [value]`. */
function withPropertyExamples(
  schema: Schema | undefined,
  values: Record<string, unknown> | undefined,
): Schema | undefined {
  if (!schema || !values) return schema;
  const properties = { ...((schema.properties ?? {}) as Record<string, Schema>) };
  for (const [name, value] of Object.entries(values)) {
    const property = properties[name];
    if (!property) throw new Error(`example names a parameter the route does not have: ${name}`);
    properties[name] = { ...property, examples: [value] };
  }
  return { ...schema, properties };
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
  const example = examples[operationKey(method, route.url)];
  if (!example) return;
  const schema = { ...route.schema } as Record<string, unknown>;
  if (example.body !== undefined) {
    if (!schema.body) throw new Error(`${operationKey(method, route.url)}: an example body for a route without one`);
    schema.body = { ...(schema.body as Schema), examples: [example.body] };
  }
  schema.querystring = withPropertyExamples(schema.querystring as Schema | undefined, example.query);
  schema.params = withPropertyExamples(schema.params as Schema | undefined, example.params);
  if (schema.querystring === undefined) delete schema.querystring;
  if (schema.params === undefined) delete schema.params;
  route.schema = schema as RouteOptions['schema'];
}
