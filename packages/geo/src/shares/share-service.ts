import { fromJsonColumn, generateKey, sha256Hex, toIsoString } from '@keel/core';
import type { Selectable } from 'kysely';
import type { GeoPrincipal } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import { mapRecord } from '../datasets/dataset-service.ts';
import { findRecord, findRecordByKey, pageRecords } from '../datasets/dataset-store.ts';
import type { DashboardShareTable } from '../db/schema.ts';
import { GeoErrors } from '../errors.ts';
import { isUuid, normalizeUuid, uuidv7 } from '../ids.ts';
import { viewSeries } from '../views/view-service.ts';
import {
  findDashboardShare,
  findShareByTokenHash,
  insertShare,
  listDashboardShares,
  revokeShareRow,
} from './share-store.ts';

export const SHARE_TOKEN_PREFIX = 'geoshare';
const MAX_WIDGETS = 12;
const MAX_POINTS = 200;

function mapShare(row: Selectable<DashboardShareTable>, now: Date) {
  const expiresAt = toIsoString(row.expires_at);
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    dashboardId: row.dashboard_id,
    status: row.revoked_at !== null ? 'revoked' : new Date(expiresAt) <= now ? 'expired' : 'active',
    expiresAt,
    revokedAt: row.revoked_at === null ? null : toIsoString(row.revoked_at),
    createdAt: toIsoString(row.created_at),
  };
}

/** A dashboard of the workspace by its record id, or else by its record `key` (the newest with that key). */
async function requireDashboard(ctx: GeoContext, workspaceId: string, dashboardId: string) {
  const row =
    (isUuid(dashboardId)
      ? await findRecord(ctx.db, workspaceId, 'dashboards', normalizeUuid(dashboardId))
      : undefined) ?? (await findRecordByKey(ctx.db, workspaceId, 'dashboards', dashboardId));
  if (!row) throw GeoErrors.dashboardNotFound(dashboardId.slice(0, 40));
  return row;
}

/** Creates a read-only share of one dashboard: a token of ~190 bits, shown once, stored as its SHA-256. */
export async function createShare(
  ctx: GeoContext,
  principal: GeoPrincipal,
  input: { workspaceId: string; dashboardId: string; expiresInHours: number },
) {
  const maxHours = ctx.config.shares.maxDays * 24;
  if (input.expiresInHours < 1 || input.expiresInHours > maxHours) throw GeoErrors.shareExpiry(maxHours);
  const dashboard = await requireDashboard(ctx, input.workspaceId, input.dashboardId);
  const token = generateKey(SHARE_TOKEN_PREFIX);
  const now = ctx.now();
  const row = {
    id: uuidv7(),
    workspace_id: input.workspaceId,
    dashboard_id: dashboard.id,
    token_hash: sha256Hex(token),
    key_id: principal.keyId,
    expires_at: new Date(now.getTime() + input.expiresInHours * 3_600_000).toISOString(),
    revoked_at: null,
    created_at: now.toISOString(),
  };
  await insertShare(ctx.db, row);
  return {
    ...mapShare(row as Selectable<DashboardShareTable>, now),
    token,
    url: `/shared/dashboard#token=${token}`,
  };
}

export async function listShares(ctx: GeoContext, workspaceId: string, dashboardId: string) {
  const dashboard = await requireDashboard(ctx, workspaceId, dashboardId);
  const rows = await listDashboardShares(ctx.db, workspaceId, dashboard.id);
  const now = ctx.now();
  return { items: rows.map((row) => mapShare(row, now)) };
}

export async function revokeShare(
  ctx: GeoContext,
  workspaceId: string,
  dashboardId: string,
  shareId: string,
): Promise<void> {
  const dashboard = await requireDashboard(ctx, workspaceId, dashboardId);
  const id = isUuid(shareId) ? normalizeUuid(shareId) : '';
  const share = await findDashboardShare(ctx.db, workspaceId, dashboard.id, id);
  if (!share) throw GeoErrors.shareNotFound();
  if (share.revoked_at === null) {
    await revokeShareRow(ctx.db, share.id, ctx.now().toISOString());
  }
}

interface Widget {
  title?: unknown;
  type?: unknown;
  metric?: unknown;
  /** A saved view of the same workspace (its id), drawn with the view's chart. */
  view?: unknown;
}

const isWidget = (w: unknown): w is Widget =>
  !!w && typeof w === 'object' && (typeof (w as Widget).metric === 'string' || typeof (w as Widget).view === 'string');

/**
 * Reads a shared dashboard by token, without a key: only that dashboard, read-only. Unknown, revoked and expired
 * tokens get the same 404, so a token cannot be probed.
 */
export async function readSharedDashboard(ctx: GeoContext, token: string | undefined) {
  if (!token || token.length > 200) throw GeoErrors.shareNotFound();
  const share = await findShareByTokenHash(ctx.db, sha256Hex(token));
  const now = ctx.now();
  if (!share || share.revoked_at !== null || new Date(toIsoString(share.expires_at)) <= now)
    throw GeoErrors.shareNotFound();
  const row = await findRecord(ctx.db, share.workspace_id, 'dashboards', share.dashboard_id);
  if (!row) throw GeoErrors.shareNotFound();
  const dashboard = mapRecord(row);
  const data = dashboard.data as { title?: unknown; description?: unknown; widgets?: unknown };
  const widgets = (Array.isArray(data.widgets) ? data.widgets : []).filter(isWidget).slice(0, MAX_WIDGETS);
  const metrics = await pageRecords(ctx.db, {
    workspaceId: share.workspace_id,
    dataset: 'metrics',
    mode: '',
    limit: 2000,
    beforeId: undefined,
  });
  const series = new Map<string, { at: string; value: number }[]>();
  for (const metric of metrics) {
    const body = fromJsonColumn<Record<string, unknown>>(metric.data);
    const name = typeof body.metric === 'string' ? body.metric : undefined;
    if (!name) continue;
    const value =
      typeof body.value === 'number'
        ? body.value
        : metric.confidence_value === null
          ? undefined
          : Number(metric.confidence_value);
    if (value === undefined || !Number.isFinite(value)) continue;
    let points = series.get(name);
    if (!points) {
      points = [];
      series.set(name, points);
    }
    if (points.length < MAX_POINTS) points.push({ at: toIsoString(metric.computed_at), value });
  }
  const byTime = (x: { at: string }, y: { at: string }) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0);
  const drawn = await Promise.all(
    widgets.map(async (widget, index) => {
      const type = widget.type === 'bar' ? ('bar' as const) : widget.type === 'line' ? ('line' as const) : undefined;
      if (typeof widget.metric === 'string') {
        return {
          id: `w${index + 1}`,
          title: typeof widget.title === 'string' ? widget.title : widget.metric,
          type: type ?? 'line',
          source: 'metric' as const,
          metric: widget.metric,
          viewId: null,
          points: (series.get(widget.metric) ?? [])
            .sort(byTime)
            .map((p) => ({ at: p.at, label: p.at.slice(0, 10), value: p.value })),
        };
      }
      // Only a view of the share's own workspace is ever read; any other id draws an empty chart.
      const drawnView = await viewSeries(ctx, share.workspace_id, String(widget.view), MAX_POINTS);
      return {
        id: `w${index + 1}`,
        title: typeof widget.title === 'string' ? widget.title : (drawnView?.view.name ?? 'Saved view'),
        type: type ?? drawnView?.view.chart?.type ?? 'line',
        source: 'view' as const,
        metric: null,
        viewId: drawnView?.view.id ?? null,
        points: drawnView?.points ?? [],
      };
    }),
  );
  return {
    dashboard: {
      id: dashboard.id,
      title: typeof data.title === 'string' ? data.title : 'Dashboard',
      description: typeof data.description === 'string' ? data.description : null,
      version: dashboard.version,
      widgets: drawn,
    },
    expiresAt: toIsoString(share.expires_at),
  };
}
