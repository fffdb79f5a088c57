import { type App, defineMcpTool, type McpCall, type McpTool, registerMcpEndpoint } from '@keel/core';
import { Type } from 'typebox';
import { listActionsWithState, transitionAction } from '../actions/action-service.ts';
import { GEO_VERSION } from '../app-version.ts';
import { authenticateApiKey, requireWorkspace } from '../auth/geo-auth.ts';
import { type GeoPrincipal, holds } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import { mapRecord, queryAnalytics } from '../datasets/dataset-service.ts';
import { findRecord } from '../datasets/dataset-store.ts';
import { GeoErrors } from '../errors.ts';
import { readGraph } from '../graph/graph-service.ts';
import { isUuid, normalizeUuid, UUID_PATTERN } from '../ids.ts';

/** The bound of every list tool (the spec's example uses 25). */
export const TOOL_LIST_MAX = 100;

const WorkspaceId = Type.String({
  pattern: UUID_PATTERN,
  description: "The workspace (must be in the key's tenant and scope)",
});
const Limit = Type.Integer({
  minimum: 1,
  maximum: TOOL_LIST_MAX,
  default: 25,
  description: `1–${TOOL_LIST_MAX}, default 25`,
});
const ListArgs = Type.Object(
  {
    workspaceId: WorkspaceId,
    limit: Limit,
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous call' })),
  },
  { additionalProperties: false },
);

type Tool = McpTool<GeoPrincipal>;

/** Workspace check before the call reaches the SDK: another tenant's or an unknown workspace is a JSON-RPC 403. */
function workspaceGate(ctx: GeoContext) {
  return async (args: Record<string, unknown>, call: McpCall<GeoPrincipal>) => {
    if (typeof args.workspaceId === 'string' && isUuid(args.workspaceId))
      await requireWorkspace(ctx, call.principal, args.workspaceId);
  };
}

function listTool(
  ctx: GeoContext,
  name: string,
  description: string,
  dataset: 'metrics' | 'recommendations' | 'content',
): Tool {
  return defineMcpTool<GeoPrincipal, typeof ListArgs>({
    name,
    description,
    inputSchema: ListArgs,
    permission: 'geo:read',
    annotations: { readOnlyHint: true },
    authorizeCall: workspaceGate(ctx),
    run: async (args, call) => {
      const workspaceId = await requireWorkspace(ctx, call.principal, args.workspaceId);
      const page = await queryAnalytics(ctx, { workspaceId, dataset, limit: args.limit, cursor: args.cursor });
      return { workspaceId, dataset, items: page.items, nextCursor: page.nextCursor };
    },
  });
}

/** The eight tools of Document 1, each with its TypeBox input schema (advertised and enforced). */
export function geoTools(ctx: GeoContext): Tool[] {
  const gate = workspaceGate(ctx);
  return [
    defineMcpTool<GeoPrincipal, typeof GraphArgs>({
      name: 'geo_get_target_graph',
      description: 'Read workspace targets and relations (canonical targets; merged duplicates appear as aliases).',
      inputSchema: GraphArgs,
      permission: 'geo:read',
      annotations: { readOnlyHint: true },
      authorizeCall: gate,
      run: async (args, call) => {
        const workspaceId = await requireWorkspace(ctx, call.principal, args.workspaceId);
        const graph = await readGraph(ctx, { workspaceId, projectId: args.projectId, includeHistory: false });
        const truncated = graph.targets.length > args.limit || graph.relations.length > args.limit * 5;
        return {
          ...graph,
          targets: graph.targets.slice(0, args.limit),
          relations: graph.relations.slice(0, args.limit * 5),
          truncated,
        };
      },
    }),
    listTool(
      ctx,
      'geo_list_metrics',
      'List versioned metrics with confidence (value and interval) and evidence metadata, newest first.',
      'metrics',
    ),
    listTool(ctx, 'geo_list_recommendations', 'List evidence-backed recommendations, newest first.', 'recommendations'),
    defineMcpTool<GeoPrincipal, typeof ListArgs>({
      name: 'geo_list_actions',
      description:
        'List governed actions and their approval state (proposed, approval_review, approved, rejected, executed), newest first.',
      inputSchema: ListArgs,
      permission: 'geo:read',
      annotations: { readOnlyHint: true },
      authorizeCall: gate,
      run: async (args, call) => {
        const workspaceId = await requireWorkspace(ctx, call.principal, args.workspaceId);
        return { workspaceId, items: await listActionsWithState(ctx, workspaceId, args.limit) };
      },
    }),
    listTool(ctx, 'geo_list_content', 'List governed content and its approval status, newest first.', 'content'),
    defineMcpTool<GeoPrincipal, typeof ExperimentArgs>({
      name: 'geo_list_experiments',
      description: 'List observed experiments separately from simulations (two lists, each newest first).',
      inputSchema: ExperimentArgs,
      permission: 'geo:read',
      annotations: { readOnlyHint: true },
      authorizeCall: gate,
      run: async (args, call) => {
        const workspaceId = await requireWorkspace(ctx, call.principal, args.workspaceId);
        const [observed, simulated] = await Promise.all([
          queryAnalytics(ctx, { workspaceId, dataset: 'experiments', mode: 'observed', limit: args.limit }),
          queryAnalytics(ctx, { workspaceId, dataset: 'experiments', mode: 'simulated', limit: args.limit }),
        ]);
        return { workspaceId, observed: observed.items, simulated: simulated.items };
      },
    }),
    defineMcpTool<GeoPrincipal, typeof ReportArgs>({
      name: 'geo_get_report',
      description: 'Read an immutable report run: the one named by reportId, or the latest.',
      inputSchema: ReportArgs,
      permission: 'geo:read',
      annotations: { readOnlyHint: true },
      authorizeCall: gate,
      run: async (args, call) => {
        const workspaceId = await requireWorkspace(ctx, call.principal, args.workspaceId);
        if (args.reportId !== undefined) {
          const row = await findRecord(ctx.db, workspaceId, 'reports', normalizeUuid(args.reportId));
          if (!row) throw GeoErrors.reportNotFound(args.reportId);
          return { report: mapRecord(row) };
        }
        const latest = await queryAnalytics(ctx, { workspaceId, dataset: 'reports', limit: 1 });
        if (latest.items.length === 0) throw GeoErrors.reportNotFound('(latest)');
        return { report: latest.items[0] as Record<string, unknown> };
      },
    }),
    defineMcpTool<GeoPrincipal, typeof ApprovalArgs>({
      name: 'geo_request_action_approval',
      description:
        'Move a proposed action into approval review. Only that: the action is never executed or published by this tool; execution stays in the separate governed workflow.',
      inputSchema: ApprovalArgs,
      permission: 'geo:write',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      authorizeCall: gate,
      run: async (args, call) => {
        const workspaceId = await requireWorkspace(ctx, call.principal, args.workspaceId);
        const action = await transitionAction(ctx, call.principal, {
          workspaceId,
          actionId: args.actionId,
          transition: 'requestApproval',
          note: args.note,
          via: 'mcp',
        });
        return { action: action as unknown as Record<string, unknown> };
      },
    }),
  ];
}

const GraphArgs = Type.Object(
  {
    workspaceId: WorkspaceId,
    projectId: Type.Optional(Type.String({ pattern: UUID_PATTERN })),
    limit: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 100,
      description: 'Targets returned (relations: 5 × limit); `truncated` says when there are more',
    }),
  },
  { additionalProperties: false },
);
const ExperimentArgs = Type.Object({ workspaceId: WorkspaceId, limit: Limit }, { additionalProperties: false });
const ReportArgs = Type.Object(
  { workspaceId: WorkspaceId, reportId: Type.Optional(Type.String({ pattern: UUID_PATTERN })) },
  { additionalProperties: false },
);
const ApprovalArgs = Type.Object(
  {
    workspaceId: WorkspaceId,
    actionId: Type.String({ pattern: UUID_PATTERN }),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);

/** Mounts POST /api/v1/geo/mcp. */
export async function registerGeoMcp(app: App, ctx: GeoContext): Promise<void> {
  await registerMcpEndpoint<GeoPrincipal>(app, {
    path: '/api/v1/geo/mcp',
    serverInfo: { name: 'keel-geo', version: GEO_VERSION, title: 'Keel GEO measurement' },
    instructions:
      'Read tools need geo:read; geo_request_action_approval needs geo:write and only moves a proposed action into approval review.',
    tools: geoTools(ctx),
    authenticate: (request) => authenticateApiKey(ctx, request),
    authorize: (principal, permission) => holds(principal, permission),
    docs: {
      tags: ['mcp'],
      summary: 'JSON-RPC tool endpoint (MCP)',
      description:
        "MCP over stateless streamable HTTP, JSON responses. `initialize` advertises the protocol version (2025-era clients; 2026-07-28 clients are served too), `tools/list` lists only the tools the key may call, `tools/call` runs one of the eight tools (`geo_get_target_graph`, `geo_list_metrics`, `geo_list_recommendations`, `geo_list_actions`, `geo_list_content`, `geo_list_experiments`, `geo_get_report` need `geo:read`; `geo_request_action_approval` needs `geo:write`). Authentication and permission failures (including a workspace outside the key's scope) are JSON-RPC error objects (-32001 / -32003) with HTTP 401 / 403; an unknown tool is JSON-RPC -32602; malformed JSON -32700 / 400; not a JSON-RPC message -32600 / 400. Invalid arguments and business failures (e.g. an action not in `proposed`) are tool results with `isError: true`. List tools take `limit` 1–100 (default 25).",
      security: [{ bearerAuth: [] }, { apiKey: [] }],
    },
  });
}
