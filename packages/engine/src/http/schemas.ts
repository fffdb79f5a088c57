import { commonErrorResponses, errorBodySchema } from '@keel/core';
import { type TSchema, Type } from 'typebox';
import { UUID_PATTERN } from '../ids.ts';

/** The REST error body every engine endpoint uses; registered once per app (`addSharedSchemas`) and referenced. */
export const ErrorBodySchema = errorBodySchema({ $id: 'EngineError', title: 'Error' });

export const ErrorSchema = Type.Unsafe<{ error: { code: string; message: string; traceId: string } }>({
  $ref: 'EngineError#',
});

/** Registers the shared schemas on an app (before its routes). */
export function addSharedSchemas(app: { addSchema(schema: unknown): unknown }): void {
  app.addSchema(ErrorBodySchema);
}

/** Error responses shared by every authenticated route. */
export const commonErrors = commonErrorResponses(ErrorSchema);

export const Uuid = (description?: string) =>
  Type.String({ pattern: UUID_PATTERN, ...(description ? { description } : {}) });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A free-form JSON object (metadata, otherDetails). */
export const JsonObject = (description: string) =>
  Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description });

export const Timestamp = Type.String({ format: 'date-time' });

export const Scope = Type.Object({ merchantId: Type.String(), storeId: Type.String() });

/** Every documented way to present a merchant key. */
export const merchantKeySecurity: Record<string, string[]>[] = [
  { bearerAuth: [] },
  { apiKey: [] },
  { catalogApiKey: [] },
];

export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size (1–100, default 20)' }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'The `nextCursor` of the previous page' })),
};

export const IdempotencyKeyHeader = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7E]+$',
  description: '1 to 255 printable ASCII characters; a retry with the same key and body replays the first answer',
});

export const IdempotencyHeaders = Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKeyHeader) });
export const RequiredIdempotencyHeaders = Type.Object({ 'idempotency-key': IdempotencyKeyHeader });
