import type { App } from '@keel/core';
import { Type } from 'typebox';
import { requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoContext } from '../context.ts';
import { commonErrors, ErrorSchema, keySecurity, Nullable, Timestamp, Uuid } from '../http-schemas.ts';
import { authenticated, principalOf } from '../routes-auth.ts';
import { SHARE_PAGE_CSS, SHARE_PAGE_HTML, SHARE_PAGE_JS } from './share-page.ts';
import { createShare, listShares, readSharedDashboard, revokeShare } from './share-service.ts';

const tags = ['shares'];
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const ShareSchema = Type.Object({
  id: Type.String(),
  workspaceId: Type.String(),
  dashboardId: Type.String(),
  status: Type.String({ description: '`active`, `expired` or `revoked`' }),
  expiresAt: Timestamp,
  revokedAt: Nullable(Timestamp),
  createdAt: Timestamp,
});
const DashboardParams = Type.Object({
  dashboardId: Type.String({
    maxLength: 64,
    description: 'A record of the `dashboards` dataset: its id, or its `key` (the newest record with that key)',
  }),
});
const Point = Type.Object({
  at: Nullable(Timestamp),
  label: Type.String({ description: 'The x value as text (the date of a metric point, a group, a bucket)' }),
  value: Type.Number(),
});
export const SharedDashboard = Type.Object({
  dashboard: Type.Object({
    id: Type.String(),
    title: Type.String(),
    description: Nullable(Type.String()),
    version: Type.Object({
      definitionVersion: Type.String(),
      runId: Nullable(Type.String()),
      importId: Nullable(Type.String()),
      computedAt: Timestamp,
    }),
    widgets: Type.Array(
      Type.Object({
        id: Type.String(),
        title: Type.String(),
        type: Type.String(),
        source: Type.Union([Type.Literal('metric'), Type.Literal('view')], {
          description: '`metric`: the metrics series named by `metric`; `view`: the chart of the saved view `viewId`',
        }),
        metric: Nullable(Type.String()),
        viewId: Nullable(Type.String()),
        points: Type.Array(Point),
      }),
    ),
  }),
  expiresAt: Timestamp,
});

export function registerShareRoutes(app: App, ctx: GeoContext): void {
  // The OpenAPI bound is the one the service enforces (GEO_SHARE_MAX_DAYS), and the default fits inside it.
  const maxHours = ctx.config.shares.maxDays * 24;
  const defaultHours = Math.min(168, maxHours);
  app.post(
    '/api/v1/geo/dashboards/:dashboardId/shares',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Share a dashboard read-only',
        description: `Needs \`geo:write\`. Creates a share of exactly one dashboard (a record of the \`dashboards\` dataset, named by its record id or its \`key\`) with an expiry (\`expiresInHours\`, 1 to \`GEO_SHARE_MAX_DAYS\`×24, default 168). The token (~190 bits) is in the response once and stored only as a SHA-256 hash. \`url\` is the web page (the token travels in the URL fragment, so it never reaches server logs or Referer headers); \`GET /api/v1/geo/shared-dashboard\` with header \`x-share-token\` returns the same data as JSON.`,
        params: DashboardParams,
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            expiresInHours: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: maxHours,
                default: defaultHours,
                description: `Hours until the share expires: 1 to ${maxHours} (GEO_SHARE_MAX_DAYS × 24)`,
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Intersect([
            ShareSchema,
            Type.Object({ token: Type.String({ description: 'Shown once' }), url: Type.String() }),
          ]),
          404: ErrorSchema,
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const workspaceId = await requireWorkspace(ctx, principal, request.body.workspaceId);
      const share = await createShare(ctx, principal, {
        workspaceId,
        dashboardId: request.params.dashboardId,
        expiresInHours: request.body.expiresInHours ?? defaultHours,
      });
      return reply.status(201).send(share);
    },
  );

  app.get(
    '/api/v1/geo/dashboards/:dashboardId/shares',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "List a dashboard's shares",
        description: 'Needs `geo:read`. At most 100, newest first; tokens are never shown again.',
        params: DashboardParams,
        querystring: Type.Object({ workspaceId: Uuid('The workspace') }),
        response: { 200: Type.Object({ items: Type.Array(ShareSchema) }), 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await requireWorkspace(ctx, principalOf(request), request.query.workspaceId);
      return listShares(ctx, workspaceId, request.params.dashboardId);
    },
  );

  app.delete(
    '/api/v1/geo/dashboards/:dashboardId/shares/:shareId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Revoke a share',
        description: 'Needs `geo:write`. Takes effect at once; revoking twice is a 204 too.',
        params: Type.Object({ dashboardId: Type.String({ maxLength: 64 }), shareId: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({ workspaceId: Uuid('The workspace') }),
        response: { 204: Type.Null({ description: 'Revoked' }), 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const workspaceId = await requireWorkspace(ctx, principalOf(request), request.query.workspaceId);
      await revokeShare(ctx, workspaceId, request.params.dashboardId, request.params.shareId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/api/v1/geo/shared-dashboard',
    {
      schema: {
        tags,
        summary: 'Read a shared dashboard by token (no API key)',
        description:
          'Header `x-share-token`. Read-only, one dashboard: its title and widgets. A widget `{title, type, metric}` charts the `metrics` records whose `data.metric` is `metric` (one point per record, in time order); a widget `{title, type?, view}` charts the saved view `view` (an id) of the same workspace with its `chart` (x, y) — at most 200 points; a deleted view or one of another workspace draws nothing. Unknown, revoked and expired tokens all get the same 404 `GEO_SHARE_NOT_FOUND`.',
        headers: Type.Object({ 'x-share-token': Type.Optional(Type.String({ maxLength: 200 })) }),
        response: { 200: SharedDashboard, 404: ErrorSchema, 400: ErrorSchema, 429: ErrorSchema },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const token = request.headers['x-share-token'];
      return readSharedDashboard(ctx, typeof token === 'string' ? token : undefined);
    },
  );

  const page = (path: string, type: string, body: string) =>
    app.get(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .header('content-type', type)
        .header('content-security-policy', PAGE_CSP)
        .header('cache-control', 'no-cache')
        .send(body),
    );
  page('/shared/dashboard', 'text/html; charset=utf-8', SHARE_PAGE_HTML);
  page('/shared/dashboard.js', 'text/javascript; charset=utf-8', SHARE_PAGE_JS);
  page('/shared/dashboard.css', 'text/css; charset=utf-8', SHARE_PAGE_CSS);
}
