import { type TSchema, Type } from 'typebox';
import { ErrorSchema } from '../http/schemas.ts';

/** The OpenAPI security requirement of runtime routes (bearer token from POST /api/v1/auth/token). */
export const runtimeSecurity: Record<string, string[]>[] = [{ runtimeToken: [] }];

/** Route config of a runtime route: authenticated by a runtime bearer token. */
export const runtimeConfig = { runtimeToken: true };

/** A `$ref` to a schema registered with `addRuntimeSchemas` (keeps the OpenAPI document small). */
export function ref<T>(id: string) {
  return Type.Unsafe<T>({ $ref: `${id}#` });
}

const shared: TSchema[] = [];

/** Declares a schema that is written once into the document's components and referenced by `ref(id)`. */
export function component<T extends TSchema>(id: string, schema: T): T {
  const registered = { ...schema, $id: id } as T;
  shared.push(registered);
  return registered;
}

/** Registers every runtime component schema on an app (before its routes). */
export function addRuntimeSchemas(app: { addSchema(schema: unknown): unknown }): void {
  for (const schema of shared) app.addSchema(schema);
}

/** Error answers of runtime routes: every 4xx and 5xx carries the one error body (status meanings in the API description). */
export const runtimeErrors = { '4xx': ErrorSchema, '5xx': ErrorSchema };

/** A runtime id (UUID). */
export function Uuid(options: Record<string, unknown> = {}) {
  return Type.String({ format: 'uuid', ...options });
}

export const IdParams = Type.Object({ id: Uuid() });

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(
    Type.String({
      maxLength: 512,
      description: '`next_cursor` of the previous page (opaque; an edited cursor is a 400)',
    }),
  ),
};

/** A free-form JSON object (typed as a record). */
export function JsonRecord(options: Record<string, unknown> = {}) {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });
}

/** One of a list of strings (an `enum` schema typed as the union). */
export function OneOf<const T extends string>(values: readonly T[], options: Record<string, unknown> = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

export const Metadata = Type.Union([JsonRecord({ maxProperties: 50 }), Type.Null()]);

/** A list page: `data` plus `next_cursor` (null on the last page). */
export function page<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) });
}

export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
