import type { FastifyInstance } from 'fastify';

type Json = Record<string, unknown>;

/** One part of a listener's OpenAPI document: the operations under `prefix`, minus those under `exclude`. */
export interface OpenApiPart {
  prefix: string;
  exclude?: readonly string[];
}

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** The `#/components/...` references reachable from `value`, followed transitively through `components`. */
function reachableComponents(value: unknown, components: Json): Json {
  const kept: Record<string, Json> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) for (const item of node) visit(item);
    else if (node && typeof node === 'object') {
      const ref = (node as Json).$ref;
      if (typeof ref === 'string' && ref.startsWith('#/components/')) {
        const [kind, name] = ref.slice('#/components/'.length).split('/') as [string, string];
        const section = components[kind] as Json | undefined;
        if (section && name in section && !(kept[kind] && name in kept[kind])) {
          kept[kind] ??= {};
          kept[kind][name] = section[name] as Json;
          visit(section[name]);
        }
      }
      for (const child of Object.values(node as Json)) visit(child);
    }
  };
  visit(value);
  // Security schemes are named by operations' `security`, not referenced with $ref: keep them all.
  return { ...kept, ...(components.securitySchemes ? { securitySchemes: components.securitySchemes } : {}) };
}

/**
 * The part of an OpenAPI document under `prefix`: its operations with paths relative to the prefix, `servers` set to
 * the prefix, and only the components they reach. A tool that reads `<base>/openapi.json` and sends `<base><path>`
 * (the fuzzer, a client generator) then sees one area of a large listener.
 */
export function openApiPart(document: Json, part: OpenApiPart): Json {
  const paths: Json = {};
  for (const [path, item] of Object.entries((document.paths ?? {}) as Json))
    if (under(path, part.prefix) && !(part.exclude ?? []).some((x) => under(path, x)))
      paths[path.slice(part.prefix.length) || '/'] = item;
  const components = reachableComponents(paths, (document.components ?? {}) as Json);
  return { ...document, servers: [{ url: part.prefix }], paths, components };
}

/**
 * Serves `GET <prefix>/openapi.json` for each part (hidden from the full document, computed once from it). The full
 * document stays at `/openapi.json` and behind `/docs`.
 */
export function serveOpenApiParts(app: FastifyInstance, parts: readonly OpenApiPart[]): void {
  for (const part of parts) {
    let cached: Json | undefined;
    app.get(`${part.prefix}/openapi.json`, { schema: { hide: true }, config: { rateLimit: false } }, async () => {
      cached ??= openApiPart(app.swagger() as unknown as Json, part);
      return cached;
    });
  }
}
