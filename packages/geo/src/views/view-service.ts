import {
  decodeCursor as decodeKeysetCursor,
  encodeCursor as encodeKeysetCursor,
  fromJsonColumn,
  runIdempotent,
  sha256Hex,
  toIsoString,
} from '@keel/core';
import type { Selectable } from 'kysely';
import type { GeoPrincipal } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import { mapEvent, mapRecord, withApiJson } from '../datasets/dataset-service.ts';
import {
  deleteRecord,
  findRecord,
  insertRecords,
  pageEvents,
  pageRecords,
  updateRecord,
} from '../datasets/dataset-store.ts';
import type { DatasetRecordTable } from '../db/schema.ts';
import { GeoErrors } from '../errors.ts';
import { isUuid, normalizeUuid, uuidv7 } from '../ids.ts';
import { findWorkspace } from '../tenancy/tenancy-store.ts';
import {
  aggregateName,
  checkViewDefinition,
  isGrouped,
  type ViewDefinition,
  type ViewInput,
} from './view-definition.ts';
import { type ApiRow, compareValues, Grouper, matchesFilters, project, readField } from './view-query.ts';

const VIEW_DATASET = 'saved_views';
const VERSION_PREFIX = 'saved_view@';
/** Rows a page of a record view may examine (its filters may skip them); the page then ends with a cursor. */
export const MAX_SCAN = 10_000;
/** Newest rows a sorted or grouped view is computed over. */
export const MAX_WINDOW = 10_000;
/** Groups a grouped view may hold. */
export const MAX_GROUPS = 1_000;
const SCAN_PAGE = 500;

type ViewRow = Selectable<DatasetRecordTable>;

/** The API shape of a saved view. */
export function mapView(row: ViewRow) {
  const definition = fromJsonColumn<ViewDefinition>(row.data);
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    ...definition,
    version: Number(row.definition_version.slice(VERSION_PREFIX.length)) || 1,
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}
export type SavedView = ReturnType<typeof mapView>;

/** A view of the workspace by id; a missing one and another workspace's are the same 404. */
async function requireView(ctx: GeoContext, workspaceId: string, viewId: string): Promise<ViewRow> {
  const row = isUuid(viewId) ? await findRecord(ctx.db, workspaceId, VIEW_DATASET, normalizeUuid(viewId)) : undefined;
  if (!row) throw GeoErrors.viewNotFound(viewId.slice(0, 40));
  return row;
}

/**
 * Saves a view: a named query over one dataset (filters, sort, columns or grouping with aggregates, a chart),
 * checked against the dataset's fields. Stored as a record of the `saved_views` dataset (version 1). An optional
 * Idempotency-Key makes a retry safe.
 */
export async function createView(
  ctx: GeoContext,
  principal: GeoPrincipal,
  workspaceId: string,
  input: ViewInput,
  idempotency: { key: string; rawBody: unknown } | undefined,
) {
  const definition = checkViewDefinition(input);
  const work = async (db = ctx.db) => {
    const now = ctx.now().toISOString();
    const row = {
      id: uuidv7(),
      workspace_id: workspaceId,
      dataset: VIEW_DATASET,
      mode: '',
      record_key: null,
      definition_version: `${VERSION_PREFIX}1`,
      run_id: null,
      import_id: null,
      computed_at: now,
      data: JSON.stringify(definition),
      confidence_value: null,
      confidence_low: null,
      confidence_high: null,
      evidence: '[]',
      status: null,
      subject_hash: null,
      created_at: now,
      updated_at: now,
    };
    await insertRecords(db, [withApiJson(row)]);
    return { statusCode: 201, body: mapView(row as ViewRow) };
  };
  if (!idempotency) return { ...(await work()), replayed: false };
  return runIdempotent(
    ctx.db,
    {
      scope: `${principal.tenantId}|POST /api/v1/geo/saved-views`,
      key: idempotency.key,
      payload: idempotency.rawBody,
    },
    work,
  );
}

export async function getView(ctx: GeoContext, workspaceId: string, viewId: string) {
  return mapView(await requireView(ctx, workspaceId, viewId));
}

/** The workspace's views, newest first, keyset-paginated. */
export async function listViews(ctx: GeoContext, workspaceId: string, limit: number, cursor: string | undefined) {
  const rows = await pageRecords(ctx.db, {
    workspaceId,
    dataset: VIEW_DATASET,
    mode: '',
    limit: limit + 1,
    beforeId: decodeCursor('views', cursor),
  });
  const page = pageOf('views', rows, limit);
  return { items: page.rows.map(mapView), nextCursor: page.next };
}

/**
 * Changes a view: the fields sent replace the stored ones (null clears an optional one), the result is checked
 * as a whole, and the version goes up by one. With `expectedVersion`, a view changed meanwhile is a 409.
 */
export async function updateView(
  ctx: GeoContext,
  workspaceId: string,
  viewId: string,
  changes: Partial<ViewInput> & { expectedVersion?: number | undefined },
) {
  const row = await requireView(ctx, workspaceId, viewId);
  const current = mapView(row);
  if (changes.expectedVersion !== undefined && changes.expectedVersion !== current.version)
    throw GeoErrors.viewVersion(current.version, changes.expectedVersion);
  const { expectedVersion: _ignored, ...fields } = changes;
  const merged: ViewInput = {
    name: current.name,
    description: current.description,
    dataset: current.dataset,
    mode: current.mode,
    filters: current.filters,
    sort: current.sort,
    columns: current.columns,
    groupBy: current.groupBy,
    aggregates: current.aggregates,
    chart: current.chart,
  };
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) Object.assign(merged, { [name]: value });
  // A grouped view that stops grouping keeps no implied count.
  if (fields.groupBy !== undefined && fields.aggregates === undefined && fields.groupBy.length === 0)
    merged.aggregates = [];
  if (fields.dataset !== undefined && fields.dataset !== current.dataset && fields.mode === undefined)
    merged.mode = null;
  const definition = checkViewDefinition(merged);
  const next = {
    ...row,
    data: JSON.stringify(definition),
    definition_version: `${VERSION_PREFIX}${current.version + 1}`,
    updated_at: ctx.now().toISOString(),
    created_at: toIsoString(row.created_at),
    computed_at: toIsoString(row.computed_at),
  };
  const { api_json } = withApiJson(next);
  const updated = await updateRecord(
    ctx.db,
    { workspaceId, dataset: VIEW_DATASET, id: row.id },
    {
      data: next.data,
      definition_version: next.definition_version,
      updated_at: next.updated_at,
      api_json: api_json as string,
    },
  );
  if (!updated) throw GeoErrors.viewNotFound(viewId.slice(0, 40));
  return mapView(next);
}

export async function removeView(ctx: GeoContext, workspaceId: string, viewId: string): Promise<void> {
  if (!isUuid(viewId) || !(await deleteRecord(ctx.db, workspaceId, VIEW_DATASET, normalizeUuid(viewId))))
    throw GeoErrors.viewNotFound(viewId.slice(0, 40));
}

/** Pages through a dataset newest first: the same store queries (and index) as the analytics endpoint. */
async function* scanDataset(ctx: GeoContext, workspaceId: string, definition: ViewDefinition, afterId?: string) {
  let before = afterId;
  for (;;) {
    let page: { id: string; row: ApiRow }[];
    if (definition.dataset === 'tracking_events') {
      const rows = await pageEvents(ctx.db, {
        workspaceId,
        limit: SCAN_PAGE,
        beforeId: before === undefined ? undefined : Number(before),
      });
      page = rows.map((r) => ({ id: String(r.id), row: mapEvent(r) as ApiRow }));
    } else {
      const rows = await pageRecords(ctx.db, {
        workspaceId,
        dataset: definition.dataset,
        mode: definition.mode ?? '',
        limit: SCAN_PAGE,
        beforeId: before,
      });
      page = rows.map((r) => ({ id: r.id, row: mapRecord(r) as ApiRow }));
    }
    for (const item of page) yield item;
    if (page.length < SCAN_PAGE) return;
    before = page.at(-1)!.id;
  }
}

export interface ViewRowsPage {
  kind: 'records' | 'groups';
  columns: string[] | null;
  items: ApiRow[];
  nextCursor: string | null;
  /** Dataset rows examined for this page. */
  scanned: number;
  /** True when the result is computed over the newest MAX_WINDOW rows only, or some groups were left out. */
  truncated: boolean;
}

/**
 * A view's rows. Record views in the dataset's own order (newest first, no `sort`) stream: a page examines at most
 * MAX_SCAN rows and its cursor continues after the last row examined, so every matching row is reached however
 * large the dataset. Sorted and grouped views are computed over the newest MAX_WINDOW rows (`truncated` says when
 * the dataset holds more); their cursor is the last row's sort position.
 */
export async function evaluateView(
  ctx: GeoContext,
  workspaceId: string,
  view: { id: string; version: number } & ViewDefinition,
  limit: number,
  cursor: string | undefined,
): Promise<ViewRowsPage> {
  const kind = `view.${view.id}.${view.version}`;
  const grouped = isGrouped(view);
  if (!grouped && !view.sort) {
    const items: ApiRow[] = [];
    let scanned = 0;
    let lastId: string | undefined;
    let more = false;
    for await (const { id, row } of scanDataset(ctx, workspaceId, view, decodeCursor(kind, cursor))) {
      if (items.length === limit || scanned === MAX_SCAN) {
        more = true;
        break;
      }
      scanned++;
      lastId = id;
      if (matchesFilters(row, view.filters)) items.push(view.columns ? project(row, view.columns) : row);
    }
    return {
      kind: 'records',
      columns: view.columns,
      items,
      nextCursor: more && lastId !== undefined ? encodeKeysetCursor(kind, [lastId]) : null,
      scanned,
      truncated: false,
    };
  }

  let scanned = 0;
  let truncated = false;
  const sortField = view.sort?.field;
  const descending = view.sort?.direction === 'desc';
  let keyed: { value: unknown[]; tie: string; row: ApiRow }[] = [];
  const grouper = grouped ? new Grouper(view, await workspaceZone(ctx, workspaceId), MAX_GROUPS) : undefined;
  for await (const { id, row } of scanDataset(ctx, workspaceId, view)) {
    if (scanned === MAX_WINDOW) {
      truncated = true;
      break;
    }
    scanned++;
    if (!matchesFilters(row, view.filters)) continue;
    if (grouper) grouper.add(row);
    else
      keyed.push({
        value: [readField(row, sortField!)],
        tie: id,
        row: view.columns ? project(row, view.columns) : row,
      });
  }
  if (grouper) {
    truncated ||= grouper.overflow;
    keyed = grouper.rows().map((row) => {
      const groupValues = view.groupBy.map((g) => row[g.field] ?? null);
      return {
        value: sortField === undefined ? groupValues : [row[sortField] ?? null],
        tie: JSON.stringify(groupValues),
        row,
      };
    });
  }

  // Record views order by the sort field, newest first among equals; grouped views by the sort (default: the group
  // fields ascending, so time buckets come in time order). Nulls come last in both directions.
  const order = (a: { value: unknown[]; tie: string }, b: { value: unknown[]; tie: string }) => {
    for (let i = 0; i < a.value.length; i++) {
      const x = a.value[i] ?? null;
      const y = b.value[i] ?? null;
      if (x === null && y !== null) return 1;
      if (y === null && x !== null) return -1;
      const c = compareValues(x, y);
      if (c !== 0) return descending ? -c : c;
    }
    if (grouped) return a.tie < b.tie ? -1 : a.tie > b.tie ? 1 : 0;
    return compareIds(b.tie, a.tie);
  };
  keyed.sort(order);
  const position = decodeKeysetCursor(`${kind}.pos`, cursor, ['string'], GeoErrors.invalidCursor);
  let start = 0;
  if (position) {
    let after: { t?: unknown; v?: unknown };
    try {
      after = JSON.parse(position[0]) as { t?: unknown; v?: unknown };
    } catch {
      throw GeoErrors.invalidCursor();
    }
    if (!after || typeof after.t !== 'string' || (after.v !== undefined && !Array.isArray(after.v)))
      throw GeoErrors.invalidCursor();
    // The last row shown, found again by its tie key; if it is gone, the first row sorting after its value.
    const index = keyed.findIndex((k) => tieHash(k.tie) === after.t);
    if (index >= 0) start = index + 1;
    else if (after.v) {
      const value = after.v as unknown[];
      while (start < keyed.length && order(keyed[start]!, { value, tie: keyed[start]!.tie }) <= 0) start++;
    } else throw GeoErrors.invalidCursor();
  }
  const page = keyed.slice(start, start + limit);
  const last = page.at(-1);
  return {
    kind: grouped ? 'groups' : 'records',
    columns: grouped ? [...view.groupBy.map((g) => g.field), ...view.aggregates.map(aggregateName)] : view.columns,
    items: page.map((p) => p.row),
    nextCursor: start + limit < keyed.length && last ? encodeKeysetCursor(`${kind}.pos`, [cursorPosition(last)]) : null,
    scanned,
    truncated,
  };
}

/** A short, fixed-size stand-in for a row's tie key (a record id, or a group's values) inside a cursor. */
function tieHash(tie: string): string {
  return sha256Hex(tie).slice(0, 24);
}

/**
 * A sorted page's position: the last row's tie hash and, when short enough to keep the cursor bounded, its sort
 * value (used only if that row is gone by the next page).
 */
function cursorPosition(last: { value: unknown[]; tie: string }): string {
  const value = JSON.stringify(last.value);
  return JSON.stringify(value.length <= 200 ? { t: tieHash(last.tie), v: last.value } : { t: tieHash(last.tie) });
}

async function workspaceZone(ctx: GeoContext, workspaceId: string): Promise<string> {
  return (await findWorkspace(ctx.db, workspaceId))?.timezone ?? 'UTC';
}

/** One page of a saved view's rows (see evaluateView). */
export async function viewRows(
  ctx: GeoContext,
  workspaceId: string,
  viewId: string,
  limit: number,
  cursor: string | undefined,
) {
  const view = await getView(ctx, workspaceId, viewId);
  const page = await evaluateView(ctx, workspaceId, view, limit, cursor);
  return {
    view: { id: view.id, name: view.name, version: view.version, dataset: view.dataset, chart: view.chart },
    limit,
    ...page,
  };
}

/** Record ids in time order: UUIDv7 text, or the integer ids of tracking events. */
function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * A view as a chart series for a dashboard widget: its first `maxPoints` rows as points (label = the x value,
 * `at` when x is a time, value = y); rows whose y is not a number are left out. A record view whose x is a time or
 * a number is drawn in ascending x order; a grouped view keeps its own order. Undefined when the workspace has no
 * such view (the widget then shows no data).
 */
export async function viewSeries(ctx: GeoContext, workspaceId: string, viewId: string, maxPoints: number) {
  const row = isUuid(viewId) ? await findRecord(ctx.db, workspaceId, VIEW_DATASET, normalizeUuid(viewId)) : undefined;
  if (!row) return undefined;
  const view = mapView(row);
  if (!view.chart) return { view, points: [] };
  const grouped = isGrouped(view);
  // Record views are read whole, so x and y need not be among the view's columns.
  const page = await evaluateView(ctx, workspaceId, { ...view, columns: null }, maxPoints, undefined);
  const { x, y } = view.chart;
  const pick = (item: ApiRow, field: string) => (grouped ? (item[field] ?? null) : readField(item, field));
  const points: { at: string | null; label: string; value: number }[] = [];
  let xOrdered = !grouped;
  for (const item of page.items) {
    const value = pick(item, y);
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    const xValue = pick(item, x);
    const at = typeof xValue === 'string' && ISO_INSTANT.test(xValue) ? xValue : null;
    if (at === null && typeof xValue !== 'number') xOrdered = false;
    points.push({ at, label: xValue === null ? '(none)' : String(xValue).slice(0, 100), value });
  }
  if (xOrdered)
    points.sort((a, b) =>
      a.at !== null && b.at !== null ? compareValues(a.at, b.at) : Number(a.label) - Number(b.label),
    );
  return { view, points };
}
