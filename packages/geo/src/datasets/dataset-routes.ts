import { type App, checkIdempotencyKey, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoContext } from '../context.ts';
import { Cursor, commonErrors, ErrorSchema, IdempotencyHeaders, keySecurity, Nullable, Uuid } from '../http-schemas.ts';
import { authenticated, principalOf } from '../routes-auth.ts';
import { DatasetEnum, DatasetRecordSchema, SignalRecordInput, TrackingEventSchema } from './dataset-schemas.ts';
import { queryAnalyticsJson, writeSignals } from './dataset-service.ts';

export const AnalyticsPage = Type.Object({
  workspaceId: Type.String(),
  dataset: Type.String(),
  limit: Type.Integer(),
  mode: Type.Optional(Type.String({ description: 'experiments only: which kind this page lists' })),
  items: Type.Array(Type.Union([DatasetRecordSchema, TrackingEventSchema])),
  nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' })),
});

export function registerDatasetRoutes(app: App, ctx: GeoContext): void {
  app.get(
    '/api/v1/geo/analytics',
    {
      schema: {
        tags: ['analytics'],
        security: keySecurity,
        summary: 'One page of a dataset',
        description:
          'Needs `geo:read`. Records come newest first with their version context (definition version, run or import id, computed-at); metrics carry a confidence (value and interval) and evidence references; recommendations reference their evidence. `limit` is 1–500 (default 100; out of range is a 400). Pagination is keyset: pass `nextCursor` back as `cursor` (a cursor of another dataset or workspace is a 400). Experiments are listed apart by `mode` (`observed`, the default, or `simulated`). `tracking_events` rows are the stored, pseudonymous events.',
        querystring: Type.Object({
          workspaceId: Uuid('The workspace'),
          dataset: DatasetEnum,
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
          cursor: Type.Optional(Cursor),
          mode: Type.Optional(
            Type.Union([Type.Literal('observed'), Type.Literal('simulated')], {
              description: 'experiments only; default observed',
            }),
          ),
        }),
        response: { 200: AnalyticsPage, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request, reply) => {
      const workspaceId = await requireWorkspace(ctx, principalOf(request), request.query.workspaceId);
      // The hot read path: JSON text built straight from the rows (same shape as the schema above).
      const json = await queryAnalyticsJson(ctx, { ...request.query, limit: request.query.limit ?? 100, workspaceId });
      return reply
        .header('content-type', 'application/json; charset=utf-8')
        .serializer((payload: unknown) => payload as string)
        .send(json as never);
    },
  );

  app.post(
    '/api/v1/geo/signals',
    {
      schema: {
        tags: ['analytics'],
        security: keySecurity,
        summary: 'Write a batch of signal records',
        description:
          'Needs `geo:signals:write` and an `Idempotency-Key`: the same key and body replays the first receipt (`Idempotent-Replayed: true`), a different body is a 409, a key still in flight a 409 with `Retry-After`. 1–500 records, all written or none (a bad record is a 400 naming its index). Every dataset except `actions`, `tracking_events` and `saved_views` (written through `/api/v1/geo/saved-views`) is writable. Rules: metrics need `confidence`; recommendations need at least one `evidence`; experiments need `mode`; `status` is for content (default `draft`). `subject` is hashed with the workspace secret on arrival and never stored in clear.',
        headers: IdempotencyHeaders(true),
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            records: Type.Array(SignalRecordInput, { minItems: 1, maxItems: 500 }),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ workspaceId: Type.String(), accepted: Type.Integer(), ids: Type.Array(Type.String()) }),
          409: ErrorSchema,
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:signals:write'),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const key = checkIdempotencyKey(request.headers['idempotency-key'], true)!;
      const workspaceId = await requireWorkspace(ctx, principal, request.body.workspaceId);
      const outcome = await writeSignals(ctx, principal, { ...request.body, workspaceId }, key, request.body);
      return sendIdempotent(request, reply, outcome);
    },
  );
}
