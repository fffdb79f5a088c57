import { type App, checkIdempotencyKey, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoContext } from '../context.ts';
import { DatasetEnum } from '../datasets/dataset-schemas.ts';
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
import { createExport, listExports, openExport } from './export-service.ts';
import { EXPORT_FORMATS } from './export-writers.ts';

const tags = ['exports'];
export const ExportSchema = Type.Object({
  id: Type.String(),
  workspaceId: Type.String(),
  source: Type.String({ description: '`dataset`, `report` or `privacy_access`' }),
  dataset: Nullable(Type.String()),
  reportId: Nullable(Type.String()),
  format: Type.String(),
  status: Type.String({ description: '`pending`, `processing`, `ready`, `failed` or `expired`' }),
  rowCount: Nullable(Type.Integer()),
  byteSize: Nullable(Type.Integer()),
  createdAt: Timestamp,
  completedAt: Nullable(Timestamp),
  expiresAt: Timestamp,
  downloadUrl: Type.String(),
});

export function registerExportRoutes(app: App, ctx: GeoContext): void {
  app.post(
    '/api/v1/geo/exports',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Request an export',
        description: `Needs \`geo:read\`. A dataset (\`source: "dataset"\`, \`dataset\`) or one report run (\`source: "report"\`, \`reportId\`) as JSON, CSV, NDJSON, XLSX or PDF. Generated in the background (202); poll \`GET /api/v1/geo/exports/{exportId}\`. Large exports stream page by page into storage with flat memory; rows are capped at \`GEO_EXPORT_MAX_ROWS\` (PDF: \`GEO_EXPORT_MAX_PDF_ROWS\`). CSV and XLSX cells that start like a formula (\`=\`, \`+\`, \`-\`, \`@\`, tab, CR) are prefixed with \`'\`. Exports expire after \`GEO_EXPORT_TTL_HOURS\` (default 24). An optional \`Idempotency-Key\` makes a retry safe: the same key and body answers the first receipt (\`Idempotent-Replayed: true\`) without queueing a second export; the same key with another body is a 409.`,
        headers: IdempotencyHeaders(false),
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            source: Type.Union([Type.Literal('dataset'), Type.Literal('report')]),
            dataset: Type.Optional(DatasetEnum),
            reportId: Type.Optional(Uuid('A report run of the workspace')),
            format: Type.Union(EXPORT_FORMATS.map((f) => Type.Literal(f))),
          },
          { additionalProperties: false },
        ),
        response: { 202: ExportSchema, 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const key = checkIdempotencyKey(request.headers['idempotency-key'], false);
      const workspaceId = await requireWorkspace(ctx, principal, request.body.workspaceId);
      const outcome = await createExport(ctx, principal, { ...request.body, workspaceId }, key);
      if (outcome.statusCode === 202) reply.header('location', (outcome.body as { downloadUrl: string }).downloadUrl);
      return sendIdempotent(request, reply, outcome);
    },
  );

  app.get(
    '/api/v1/geo/exports',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "List the workspace's exports",
        description:
          'Needs `geo:read`. Newest first, keyset-paginated (personal-data exports of privacy requests are not listed).',
        querystring: Type.Object({
          workspaceId: Uuid('The workspace'),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
          cursor: Type.Optional(Cursor),
        }),
        response: {
          200: Type.Object({ items: Type.Array(ExportSchema), nextCursor: Nullable(Type.String()) }),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await requireWorkspace(ctx, principalOf(request), request.query.workspaceId);
      return listExports(ctx, workspaceId, request.query.limit ?? 50, request.query.cursor);
    },
  );

  app.get(
    '/api/v1/geo/exports/:exportId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Download an export',
        description:
          "Needs `geo:read` (personal-data exports of privacy requests: also `geo:write`) and the export's workspace in the key's scope. 200 streams the file with its content type and a `Content-Disposition` file name. 202 with `Retry-After` and the export's status while it is being generated. 403 `GEO_EXPORT_FORBIDDEN` when it is expired, not the caller's, or does not exist (one answer for all three). 422 `GEO_EXPORT_FAILED` when generation failed. 400 when `exportId` is not a UUID. Takes no workspaceId.",
        params: Type.Object({ exportId: Uuid('The export (a malformed id is a 400: it cannot exist)') }),
        response: {
          200: Type.String({ description: 'The export file (JSON, CSV, NDJSON, XLSX or PDF)' }),
          202: ExportSchema,
          422: ErrorSchema,
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx),
    },
    async (request, reply) => {
      const opened = await openExport(ctx, principalOf(request), request.params.exportId);
      if (!opened.ready) {
        if (opened.summary.status === 'failed') {
          return reply.status(422).send({
            error: {
              code: 'GEO_EXPORT_FAILED',
              message: 'The export could not be generated; request a new one',
              traceId: request.id,
            },
          });
        }
        return reply.status(202).header('retry-after', '2').send(opened.summary);
      }
      return reply
        .status(200)
        .header('content-type', opened.contentType)
        .header('content-disposition', `attachment; filename="${opened.filename}"`)
        .header('cache-control', 'private, no-store')
        .send(opened.stream as never);
    },
  );
}
