import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * A test-only switch (`reuseCompiledSchemas()` in `@keel/core/testing`): while it is on, every app this process
 * builds compiles a route schema once. Building an app compiles a validator (ajv) and a response serializer
 * (fast-json-stringify) for every route, most of the cost of a build; a test suite builds the same apps many
 * times from the same schema objects. Off by default: services in production build each app once and never take
 * this path.
 */
let reuse = false;

export function setSchemaReuse(on: boolean): void {
  reuse = on;
}

export function schemaReuseEnabled(): boolean {
  return reuse;
}

let sharedValidator: FastifySchemaCompiler<any> | undefined;

/**
 * The process-wide validator compiler while reuse is on (`make` builds it once): its ajv instances keep each
 * compiled schema by object identity, so the next app built from the same route schemas compiles nothing.
 */
export function reusedValidatorCompiler(make: () => FastifySchemaCompiler<any>): FastifySchemaCompiler<any> {
  sharedValidator ??= make();
  return sharedValidator;
}

type Serializer = SerializerSelector.Serializer;

const serializers = new WeakMap<object, Map<string, Serializer>>();
const defaultSerializerFactory = SerializerSelector();

/**
 * Fastify's own serializer factory, remembering what it compiled per response schema object and per set of
 * shared schemas (`app.addSchema`) and options: a serializer is reused only where it would be compiled the same.
 */
export const reusingSerializerFactory: SerializerSelector.SerializerFactory = (externalSchemas, options) => {
  const compile = defaultSerializerFactory(externalSchemas, options);
  const context = JSON.stringify([externalSchemas ?? null, options ?? null]);
  return (route) => {
    if (typeof route.schema !== 'object' || route.schema === null) return compile(route);
    let bySchema = serializers.get(route.schema);
    if (!bySchema) {
      bySchema = new Map();
      serializers.set(route.schema, bySchema);
    }
    let serializer = bySchema.get(context);
    if (!serializer) {
      serializer = compile(route);
      bySchema.set(context, serializer);
    }
    return serializer;
  };
};
