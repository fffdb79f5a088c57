import { type App, checkIdempotencyKey, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoContext } from '../context.ts';
import {
  Cursor,
  commonErrors,
  ErrorSchema,
  IdempotencyHeaders,
  keySecurity,
  Nullable,
  Timestamp,
  Uuid,
} from '../http-schemas.ts';
import { authenticated, principalOf } from '../routes-auth.ts';
import { listPrivacyRequests, submitPrivacyRequest } from './privacy-service.ts';

const tags = ['privacy'];
export const PrivacyRequestSchema = Type.Object({
  id: Type.String(),
  workspaceId: Type.String(),
  type: Type.Union([Type.Literal('access'), Type.Literal('deletion')]),
  status: Type.String({ description: '`pending`, `processing`, `completed` or `failed`' }),
  subjectHash: Type.String({ description: 'Redacted: the first 8 hex digits of the HMAC, then …' }),
  result: Nullable(
    Type.Record(Type.String(), Type.Unknown(), { description: 'What was done: counts of deleted or exported rows' }),
  ),
  exportId: Nullable(
    Type.String({ description: 'Access requests: the personal-data export (download needs geo:write)' }),
  ),
  createdAt: Timestamp,
  completedAt: Nullable(Timestamp),
});

export function registerPrivacyRoutes(app: App, ctx: GeoContext): void {
  app.get(
    '/api/v1/geo/privacy',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'List privacy requests',
        description: 'Needs `geo:read`. Newest first, keyset-paginated; subjects appear only as redacted hashes.',
        querystring: Type.Object({
          workspaceId: Uuid('The workspace'),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
          cursor: Type.Optional(Cursor),
        }),
        response: {
          200: Type.Object({ items: Type.Array(PrivacyRequestSchema), nextCursor: Nullable(Type.String()) }),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await requireWorkspace(ctx, principalOf(request), request.query.workspaceId);
      return listPrivacyRequests(ctx, workspaceId, request.query.limit ?? 50, request.query.cursor);
    },
  );

  app.post(
    '/api/v1/geo/privacy',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Submit a pseudonymous access or deletion request',
        description:
          "Needs `geo:write`. `subject` is the identifier the site used as `userId` in tracking events (or as `subject` in signals); it is hashed on arrival with the workspace's secret (HMAC-SHA256 over the trimmed, lower-cased value) and never stored or logged in clear. 202: processed in the background — an access request produces a personal-data export (NDJSON) of the subject's events, a deletion removes the subject's tracking events, the rows derived from them and earlier access exports; both record completion and counts. An optional `Idempotency-Key` makes a retry safe: the same key and body answers the first receipt (`Idempotent-Replayed: true`) without queueing a second request; the same key with another body is a 409.",
        headers: IdempotencyHeaders(false),
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            type: Type.Union([Type.Literal('access'), Type.Literal('deletion')]),
            subject: Type.String({ minLength: 1, maxLength: 256 }),
          },
          { additionalProperties: false },
        ),
        response: { 202: PrivacyRequestSchema, 409: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const key = checkIdempotencyKey(request.headers['idempotency-key'], false);
      const workspaceId = await requireWorkspace(ctx, principal, request.body.workspaceId);
      const outcome = await submitPrivacyRequest(ctx, principal, { ...request.body, workspaceId }, key);
      return sendIdempotent(request, reply, outcome);
    },
  );
}
