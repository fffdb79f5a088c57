import { type App, checkIdempotencyKey, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoContext } from '../context.ts';
import {
  commonErrors,
  ErrorSchema,
  IdempotencyHeaders,
  keySecurity,
  Nullable,
  PageQuery,
  Timestamp,
  Uuid,
} from '../http-schemas.ts';
import { authenticated, principalOf } from '../routes-auth.ts';
import {
  AGGREGATE_FNS,
  BUCKETS,
  EVENT_FIELDS,
  FILTER_OPS,
  RECORD_FIELDS,
  VIEW_LIMITS,
  VIEWABLE_DATASETS,
} from './view-definition.ts';
import {
  createView,
  getView,
  listViews,
  MAX_GROUPS,
  MAX_SCAN,
  MAX_WINDOW,
  removeView,
  updateView,
  viewRows,
} from './view-service.ts';

const tags = ['saved-views'];
const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

const FieldName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: `A field of the view's dataset. Records: ${Object.keys(RECORD_FIELDS).join(', ')}, or \`data.<name>[.<name>…]\` (up to 3 levels). tracking_events: ${Object.keys(EVENT_FIELDS).join(', ')}, or \`properties.<name>\`.`,
});
const ScalarValue = Type.Union([
  Type.String({ maxLength: VIEW_LIMITS.stringValue }),
  Type.Number(),
  Type.Boolean(),
  Type.Null(),
]);
const Filter = Type.Object(
  {
    field: FieldName,
    op: literals(
      FILTER_OPS,
      '`eq`, `ne`, `gt`, `gte`, `lt`, `lte` (numbers, times as ISO 8601, text), `in`/`not_in` (1–100 values), `contains` (text, case-insensitive), `exists` (true/false)',
    ),
    value: Type.Optional(Type.Union([ScalarValue, Type.Array(ScalarValue, { maxItems: VIEW_LIMITS.inValues })])),
  },
  { additionalProperties: false },
);
const Sort = Type.Object(
  {
    field: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'A dataset field; in a grouped view a group field or an aggregate name (`count`, `avg(data.value)`)',
    }),
    direction: literals(['asc', 'desc'] as const),
  },
  { additionalProperties: false },
);
const Group = Type.Object(
  {
    field: FieldName,
    bucket: Type.Optional(
      literals(
        BUCKETS,
        "Time fields only: hour, day, week (ISO, Monday) or month, in the workspace's reporting time zone",
      ),
    ),
  },
  { additionalProperties: false },
);
const Aggregate = Type.Object(
  {
    fn: literals(AGGREGATE_FNS),
    field: Type.Optional(FieldName),
  },
  { additionalProperties: false, description: 'Named `count` or `fn(field)` in the rows' },
);
const Chart = Type.Object(
  {
    type: literals(['line', 'bar'] as const),
    x: Type.String({ minLength: 1, maxLength: 200, description: 'The category or time axis' }),
    y: Type.String({ minLength: 1, maxLength: 200, description: 'A numeric field or aggregate' }),
  },
  { additionalProperties: false },
);

const definitionProperties = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  dataset: literals(VIEWABLE_DATASETS, 'Any dataset except saved_views'),
  mode: Type.Optional(
    Nullable(literals(['observed', 'simulated'] as const, 'experiments only: which kind; default observed')),
  ),
  filters: Type.Optional(Type.Array(Filter, { maxItems: VIEW_LIMITS.filters, description: 'All must hold' })),
  sort: Type.Optional(Nullable(Sort)),
  columns: Type.Optional(
    Nullable(
      Type.Array(FieldName, {
        minItems: 1,
        maxItems: VIEW_LIMITS.columns,
        description: 'Record views: the fields each row shows (with its id); absent = whole records',
      }),
    ),
  ),
  groupBy: Type.Optional(Type.Array(Group, { maxItems: VIEW_LIMITS.groupBy })),
  aggregates: Type.Optional(
    Type.Array(Aggregate, { maxItems: VIEW_LIMITS.aggregates, description: 'Default with groupBy: count' }),
  ),
  chart: Type.Optional(Nullable(Chart)),
};

export const SavedViewSchema = Type.Object({
  id: Type.String(),
  workspaceId: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  dataset: Type.String(),
  mode: Nullable(Type.String()),
  filters: Type.Array(Type.Object({ field: Type.String(), op: Type.String(), value: Type.Optional(Type.Unknown()) })),
  sort: Nullable(Type.Object({ field: Type.String(), direction: Type.String() })),
  columns: Nullable(Type.Array(Type.String())),
  groupBy: Type.Array(Type.Object({ field: Type.String(), bucket: Type.Optional(Type.String()) })),
  aggregates: Type.Array(Type.Object({ fn: Type.String(), field: Type.Optional(Type.String()) })),
  chart: Nullable(Type.Object({ type: Type.String(), x: Type.String(), y: Type.String() })),
  version: Type.Integer({ description: 'Starts at 1, one up per change' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const ViewParams = Type.Object({ viewId: Uuid('The saved view') });
const WorkspaceQuery = Type.Object({ workspaceId: Uuid('The workspace') });

const RULES = `A view is a named query over one dataset: \`filters\` (all must hold; values checked against the field's type), an optional \`sort\`, and either \`columns\` (record views) or \`groupBy\` with \`aggregates\` (count, sum, avg, min, max; time fields bucketed by hour, day, week or month in the workspace's reporting time zone), plus an optional \`chart\` ({type: line|bar, x, y}) that dashboards draw. Fields are the dataset's API fields (${Object.keys(RECORD_FIELDS).join(', ')}, \`data.<name>\` up to 3 levels; for tracking_events ${Object.keys(EVENT_FIELDS).join(', ')}, \`properties.<name>\`). Bounds: ${VIEW_LIMITS.filters} filters, ${VIEW_LIMITS.columns} columns, ${VIEW_LIMITS.groupBy} group fields, ${VIEW_LIMITS.aggregates} aggregates, ${VIEW_LIMITS.definitionBytes / 1024} KiB. A view that does not fit its dataset is a 400 \`GEO_VIEW_INVALID\` naming the part at fault. Views are records of the \`saved_views\` dataset (also listed by \`GET /api/v1/geo/analytics?dataset=saved_views\`) and are written only through these routes.`;

/** Saved views: named, validated queries over the datasets, read with the same store queries as analytics. */
export function registerViewRoutes(app: App, ctx: GeoContext): void {
  const workspace = (request: { headers: unknown }, id: string) =>
    requireWorkspace(ctx, principalOf(request as never), id);

  app.post(
    '/api/v1/geo/saved-views',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Save a view',
        description: `Needs \`geo:write\`. ${RULES} 201 with the view (version 1). An optional \`Idempotency-Key\` replays the first answer for the same body (409 for another body).`,
        headers: IdempotencyHeaders(false),
        body: Type.Object(
          { workspaceId: Uuid('The workspace'), ...definitionProperties },
          { additionalProperties: false },
        ),
        response: { 201: SavedViewSchema, 409: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const key = checkIdempotencyKey(request.headers['idempotency-key'], false);
      const workspaceId = await workspace(request, request.body.workspaceId);
      const { workspaceId: _ws, ...input } = request.body;
      const outcome = await createView(
        ctx,
        principal,
        workspaceId,
        input,
        key === undefined ? undefined : { key, rawBody: request.body },
      );
      reply.header(
        'location',
        `/api/v1/geo/saved-views/${(outcome.body as { id: string }).id}?workspaceId=${workspaceId}`,
      );
      return sendIdempotent(request, reply, outcome);
    },
  );

  app.get(
    '/api/v1/geo/saved-views',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "List the workspace's saved views",
        description: 'Needs `geo:read`. Newest first, keyset-paginated (`limit` 1–500, default 100).',
        querystring: PageQuery,
        response: {
          200: Type.Object({ items: Type.Array(SavedViewSchema), nextCursor: Nullable(Type.String()) }),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await workspace(request, request.query.workspaceId);
      return listViews(ctx, workspaceId, request.query.limit ?? 100, request.query.cursor);
    },
  );

  app.get(
    '/api/v1/geo/saved-views/:viewId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Read a saved view',
        description:
          "Needs `geo:read`. 404 `GEO_VIEW_NOT_FOUND` for a view that does not exist and for another workspace's alike.",
        params: ViewParams,
        querystring: WorkspaceQuery,
        response: { 200: SavedViewSchema, 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await workspace(request, request.query.workspaceId);
      return getView(ctx, workspaceId, request.params.viewId);
    },
  );

  app.patch(
    '/api/v1/geo/saved-views/:viewId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Change a saved view',
        description:
          'Needs `geo:write`. The fields sent replace the stored ones (`null` clears `description`, `sort`, `columns` or `chart`); the result is checked as a whole like a new view, and `version` goes up by one. With `expectedVersion`, a view changed meanwhile is a 409 `GEO_VIEW_VERSION_CONFLICT` (nothing is written). Cursors of the earlier version are no longer accepted (400).',
        params: ViewParams,
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            expectedVersion: Type.Optional(Type.Integer({ minimum: 1, description: 'Optimistic concurrency' })),
            ...definitionProperties,
            name: Type.Optional(definitionProperties.name),
            dataset: Type.Optional(definitionProperties.dataset),
          },
          { additionalProperties: false },
        ),
        response: { 200: SavedViewSchema, 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request) => {
      const workspaceId = await workspace(request, request.body.workspaceId);
      const { workspaceId: _ws, ...changes } = request.body;
      return updateView(ctx, workspaceId, request.params.viewId, changes);
    },
  );

  app.delete(
    '/api/v1/geo/saved-views/:viewId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Delete a saved view',
        description:
          'Needs `geo:write`. 204; 404 `GEO_VIEW_NOT_FOUND` when there is no such view in the workspace. Dashboard widgets that chart it show no data afterwards.',
        params: ViewParams,
        querystring: WorkspaceQuery,
        response: { 204: Type.Null({ description: 'Deleted' }), 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const workspaceId = await workspace(request, request.query.workspaceId);
      await removeView(ctx, workspaceId, request.params.viewId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/api/v1/geo/saved-views/:viewId/rows',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "A saved view's rows",
        description: `Needs \`geo:read\`. Read with the same store queries and index as \`GET /api/v1/geo/analytics\`: a view without filters, sort or grouping returns exactly the dataset's analytics page. Record views without \`sort\` stream in the dataset's order (newest first): a page examines at most ${MAX_SCAN} rows, so a page may hold fewer than \`limit\` rows (even none) and still have a \`nextCursor\` — follow it until it is null. Sorted and grouped views are computed over the newest ${MAX_WINDOW} rows of the dataset (\`truncated: true\` when it holds more, or when more than ${MAX_GROUPS} groups appear); nulls sort last; ties go newest first. \`kind\` is \`records\` (whole records, or \`id\` plus the view's \`columns\`) or \`groups\` (group fields and aggregates by name). A cursor of another view or of an earlier version of this view is a 400.`,
        params: ViewParams,
        querystring: Type.Object({
          workspaceId: Uuid('The workspace'),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
          cursor: Type.Optional(
            Type.String({ minLength: 1, maxLength: 512, description: 'The `nextCursor` of the previous page' }),
          ),
        }),
        response: {
          200: Type.Object({
            view: Type.Object({
              id: Type.String(),
              name: Type.String(),
              version: Type.Integer(),
              dataset: Type.String(),
              chart: Nullable(Type.Object({ type: Type.String(), x: Type.String(), y: Type.String() })),
            }),
            limit: Type.Integer(),
            kind: Type.Union([Type.Literal('records'), Type.Literal('groups')]),
            columns: Nullable(Type.Array(Type.String())),
            items: Type.Array(Type.Record(Type.String(), Type.Unknown())),
            nextCursor: Nullable(Type.String()),
            scanned: Type.Integer({ description: 'Dataset rows examined for this page' }),
            truncated: Type.Boolean(),
          }),
          404: ErrorSchema,
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await workspace(request, request.query.workspaceId);
      return viewRows(ctx, workspaceId, request.params.viewId, request.query.limit ?? 100, request.query.cursor);
    },
  );
}
