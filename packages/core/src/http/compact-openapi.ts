type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Rewrites an OpenAPI document so that response objects, parameters and request bodies repeated across
 * operations are written once under `components.responses` / `parameters` / `requestBodies` and referenced (`$ref`) everywhere
 * else. The meaning is unchanged; the document shrinks by a third or more (a listener with many operations
 * shares one error body). Pass it as `transformOpenApi` to createApp.
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
  return document;
}
