type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Rewrites an OpenAPI document so that response objects, parameters and request bodies repeated across
 * operations are written once under `components.responses` / `parameters` / `requestBodies` and referenced (`$ref`) everywhere
 * else, and so are schemas repeated inside them (under `components.schemas`, see `shareRepeatedSchemas`). The meaning
 * is unchanged; the document shrinks by a third or more (a listener with many operations shares one error body).
 * Pass it as `transformOpenApi` to createApp.
 */
export function compactOpenApi(document: Json): Json {
  const paths = (document.paths ?? {}) as Record<string, Json>;
  const operations: Json[] = [];
  for (const item of Object.values(paths))
    for (const method of METHODS)
      if (item[method] && typeof item[method] === 'object') operations.push(item[method] as Json);

  const count = new Map<string, number>();
  const tally = (value: unknown) => {
    const key = JSON.stringify(value);
    count.set(key, (count.get(key) ?? 0) + 1);
  };
  for (const op of operations) {
    for (const response of Object.values((op.responses ?? {}) as Json)) tally(response);
    for (const parameter of (op.parameters ?? []) as unknown[]) tally(parameter);
    if (op.requestBody) tally(op.requestBody);
  }

  const components = (document.components ?? {}) as Json;
  const responses = { ...((components.responses ?? {}) as Json) };
  const parameters = { ...((components.parameters ?? {}) as Json) };
  const requestBodies = { ...((components.requestBodies ?? {}) as Json) };
  const names = new Map<string, string>();
  const targets = { responses, parameters, requestBodies };
  const prefixes = { responses: 'R', parameters: 'P', requestBodies: 'B' };
  const shared = (value: unknown, kind: keyof typeof targets): unknown => {
    const key = JSON.stringify(value);
    // Only parts that repeat and are longer than their reference are worth sharing.
    if ((count.get(key) ?? 0) < 2 || key.length < 64) return value;
    let name = names.get(key);
    if (!name) {
      const target = targets[kind];
      name = `${prefixes[kind]}${Object.keys(target).length}`;
      target[name] = value;
      names.set(key, name);
    }
    return { $ref: `#/components/${kind}/${name}` };
  };
  for (const op of operations) {
    if (op.responses) {
      const next: Json = {};
      for (const [status, response] of Object.entries(op.responses as Json))
        next[status] = shared(response, 'responses');
      op.responses = next;
    }
    if (Array.isArray(op.parameters)) op.parameters = op.parameters.map((p) => shared(p, 'parameters'));
    if (op.requestBody) op.requestBody = shared(op.requestBody, 'requestBodies');
  }
  document.components = {
    ...components,
    ...(Object.keys(responses).length > 0 ? { responses } : {}),
    ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
    ...(Object.keys(requestBodies).length > 0 ? { requestBodies } : {}),
  };
  return shareRepeatedSchemas(document);
}

/** Subschemas shorter than this (as JSON) stay inline: a reference would save little or nothing. */
const MIN_SHARED_SCHEMA_CHARS = 120;
/** Keywords whose value is one subschema, and those whose value is a list or a map of subschemas (JSON Schema 2020-12). */
const ONE_SCHEMA = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'];
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs'];

/**
 * Visits every schema position of a schema top-down: `visit` returns the value to keep there (the schema itself, or
 * a `$ref` to a shared copy) and whether to descend into it.
 */
function eachSubschema(schema: unknown, visit: (node: Json) => { keep: unknown; descend: boolean }): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const { keep, descend } = visit(schema as Json);
  if (!descend || keep !== schema) return keep;
  const node = schema as Json;
  for (const key of ONE_SCHEMA) if (key in node) node[key] = eachSubschema(node[key], visit);
  for (const key of SCHEMA_LISTS)
    if (Array.isArray(node[key])) node[key] = (node[key] as unknown[]).map((x) => eachSubschema(x, visit));
  for (const key of SCHEMA_MAPS) {
    const map = node[key];
    if (map && typeof map === 'object' && !Array.isArray(map))
      for (const name of Object.keys(map)) (map as Json)[name] = eachSubschema((map as Json)[name], visit);
  }
  return node;
}

/** Every top-level schema of the document: parameters', media types' (bodies and responses) and components' schemas. */
function rootSchemas(document: Json): Array<{ holder: Json; key: string }> {
  const roots: Array<{ holder: Json; key: string }> = [];
  const fromMediaOwner = (owner: unknown) => {
    const content = (owner as Json | undefined)?.content as Record<string, Json> | undefined;
    for (const media of Object.values(content ?? {})) if (media?.schema) roots.push({ holder: media, key: 'schema' });
  };
  const fromParameter = (parameter: unknown) => {
    if ((parameter as Json | undefined)?.schema) roots.push({ holder: parameter as Json, key: 'schema' });
  };
  const components = (document.components ?? {}) as Record<string, Json | undefined>;
  for (const item of Object.values((document.paths ?? {}) as Record<string, Json>))
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op || typeof op !== 'object') continue;
      for (const parameter of (op.parameters ?? []) as unknown[]) fromParameter(parameter);
      fromMediaOwner(op.requestBody);
      for (const response of Object.values((op.responses ?? {}) as Json)) fromMediaOwner(response);
    }
  for (const response of Object.values(components.responses ?? {})) fromMediaOwner(response);
  for (const body of Object.values(components.requestBodies ?? {})) fromMediaOwner(body);
  for (const parameter of Object.values(components.parameters ?? {})) fromParameter(parameter);
  for (const name of Object.keys(components.schemas ?? {}))
    roots.push({ holder: components.schemas as Json, key: name });
  return roots;
}

/**
 * Writes a subschema that occurs more than once in the document (an address, a money amount, a product's fields in a
 * create and an update body) once under `components.schemas` and references it everywhere, the outermost repeated one
 * first. Only whole schema positions are shared, so validation means the same.
 */
export function shareRepeatedSchemas(document: Json): Json {
  const count = new Map<string, number>();
  const tally = (node: Json) => {
    const key = JSON.stringify(node);
    if (key.length >= MIN_SHARED_SCHEMA_CHARS) count.set(key, (count.get(key) ?? 0) + 1);
    return { keep: node, descend: true };
  };
  for (const { holder, key } of rootSchemas(document)) eachSubschema(holder[key], tally);

  const components = (document.components ?? {}) as Json;
  const schemas = (components.schemas ?? {}) as Json;
  const names = new Map<string, string>();
  const share = (node: Json, isRoot: boolean) => {
    const key = JSON.stringify(node);
    if (isRoot || (count.get(key) ?? 0) < 2 || '$id' in node) return { keep: node, descend: true };
    let name = names.get(key);
    if (!name) {
      name = `S${names.size}`;
      while (name in schemas) name = `${name}_`;
      names.set(key, name);
      // The shared copy is itself shared where it repeats something else.
      const copy = structuredClone(node);
      schemas[name] = eachSubschema(copy, (inner) => share(inner, inner === copy));
    }
    return { keep: { $ref: `#/components/schemas/${name}` }, descend: false };
  };
  for (const { holder, key } of rootSchemas(document)) {
    const root = holder[key];
    holder[key] = eachSubschema(root, (node) => share(node, node === root && holder === components.schemas));
  }
  document.components = { ...components, ...(Object.keys(schemas).length > 0 ? { schemas } : {}) };
  return document;
}
