import { commonErrorResponses, errorBodySchema } from '@keel/core';
import { type TSchema, Type } from 'typebox';
import { UUID_PATTERN } from './ids.ts';

/** The REST error body of every geo endpoint. */
export const ErrorSchema = errorBodySchema({
  description: 'Error: `{"error":{"code","message","traceId","details"?}}`',
});

/** Error responses shared by every key-authenticated route. */
export const commonErrors = commonErrorResponses(ErrorSchema);

export const Uuid = (description: string) =>
  Type.String({ pattern: UUID_PATTERN, description, examples: ['0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77'] });

export const WorkspaceQuery = Type.Object({
  workspaceId: Uuid("The workspace (must be in the key's tenant and scope)"),
});

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const IdempotencyHeaders = (required: boolean) =>
  Type.Object({
    'idempotency-key': required
      ? Type.String({
          minLength: 1,
          maxLength: 255,
          description: '1–255 printable ASCII characters; the same key and body replays the first answer',
        })
      : Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 255,
            description: 'Optional: the same key and body replays the first answer',
          }),
        ),
  });

type SecurityRequirement = Record<string, string[]>;
/** Every key-authenticated route: `Authorization: Bearer <key>` or `x-api-key`. */
export const keySecurity: SecurityRequirement[] = [{ bearerAuth: [] }, { apiKey: [] }];

export const Cursor = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'The `nextCursor` of the previous page',
});

/** The query of a keyset-paginated list: the workspace, `limit` 1–500 (default 100) and the previous `nextCursor`. */
export const PageQuery = Type.Object({
  workspaceId: Uuid('The workspace'),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  cursor: Type.Optional(Cursor),
});
