import { fromJsonColumn, runIdempotent, toIsoString } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { GeoPrincipal } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import type { DatasetRecordTable, TrackingEventTable } from '../db/schema.ts';
import { GeoErrors } from '../errors.ts';
import { uuidv7 } from '../ids.ts';
import { hashSubject, workspaceSecret } from '../privacy/subject-hash.ts';
import { eventJson, recordJson } from './analytics-json.ts';
import { DATASETS, type DatasetName, NOT_WRITABLE } from './dataset-schemas.ts';
import { insertRecords, pageEvents, pageRecordJson, pageRecords } from './dataset-store.ts';

/** The API shape of a dataset row. */
export function mapRecord(row: Selectable<DatasetRecordTable>) {
  const hasConfidence = row.confidence_value !== null;
  return {
    id: row.id,
    dataset: row.dataset,
    workspaceId: row.workspace_id,
    key: row.record_key,
    version: {
      definitionVersion: row.definition_version,
      runId: row.run_id,
      importId: row.import_id,
      computedAt: toIsoString(row.computed_at),
    },
    data: fromJsonColumn<Record<string, unknown>>(row.data),
    confidence: hasConfidence
      ? { value: Number(row.confidence_value), interval: [Number(row.confidence_low), Number(row.confidence_high)] }
      : null,
    evidence: fromJsonColumn<{ type: string; ref: string; description?: string }[]>(row.evidence),
    status: row.status,
    mode: row.mode === '' ? null : (row.mode as 'observed' | 'simulated'),
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}
export type DatasetRecord = ReturnType<typeof mapRecord>;

export function mapEvent(row: Selectable<TrackingEventTable>) {
  return {
    id: String(row.id),
    dataset: 'tracking_events' as const,
    kind: row.kind as 'pageview' | 'event' | 'ai_crawler',
    name: row.name,
    path: row.path,
    referrerHost: row.referrer_host,
    aiEngine: row.ai_engine,
    crawler: row.crawler,
    consent: Number(row.consent) === 1,
    visitorId: row.visitor_id,
    properties:
      row.properties === null ? null : fromJsonColumn<Record<string, string | number | boolean>>(row.properties),
    occurredAt: toIsoString(row.occurred_at),
    receivedAt: toIsoString(row.received_at),
  };
}

export interface AnalyticsQuery {
  workspaceId: string;
  dataset: DatasetName;
  limit: number;
  cursor?: string | undefined;
  mode?: 'observed' | 'simulated' | undefined;
}

/** The id a tracking-events cursor carries (a row id of that list; 400 `GEO_INVALID_CURSOR` for anything else). */
function eventCursor(cursor: string | undefined): number | undefined {
  const before = decodeCursor('ev', cursor);
  if (before !== undefined && !/^\d{1,15}$/.test(before)) throw GeoErrors.invalidCursor();
  return before === undefined ? undefined : Number(before);
}

/**
 * A record dataset's list: its mode (experiments: observed by default), the cursor kind, and the store's page
 * (`limit + 1` rows before the cursor's id).
 */
function recordList(query: AnalyticsQuery) {
  const mode = query.dataset === 'experiments' ? (query.mode ?? 'observed') : '';
  const cursorKind = `ds.${query.dataset}.${mode}`;
  const page = {
    workspaceId: query.workspaceId,
    dataset: query.dataset,
    mode,
    limit: query.limit + 1,
    beforeId: decodeCursor(cursorKind, query.cursor),
  };
  return { mode, cursorKind, page };
}

/** The analytics page as JSON text for the HTTP route (same shape as `queryAnalytics`, built without re-parsing). */
export async function queryAnalyticsJson(ctx: GeoContext, query: AnalyticsQuery): Promise<string> {
  const { workspaceId, dataset, limit } = query;
  const head = `{"workspaceId":${JSON.stringify(workspaceId)},"dataset":${JSON.stringify(dataset)},"limit":${limit}`;
  if (dataset === 'tracking_events') {
    const rows = await pageEvents(ctx.db, { workspaceId, limit: limit + 1, beforeId: eventCursor(query.cursor) });
    const page = pageOf('ev', rows, limit);
    return `${head},"items":[${page.rows.map(eventJson).join(',')}],"nextCursor":${JSON.stringify(page.next)}}`;
  }
  const { mode, cursorKind, page: wanted } = recordList(query);
  const rows = await pageRecordJson(ctx.db, wanted);
  const page = pageOf(cursorKind, rows, limit);
  return `${head}${dataset === 'experiments' ? `,"mode":${JSON.stringify(mode)}` : ''},"items":[${page.rows.map((row) => row.api_json).join(',')}],"nextCursor":${JSON.stringify(page.next)}}`;
}

/** One page of a dataset: newest first, keyset-paginated (never OFFSET), `nextCursor` null on the last page. */
export async function queryAnalytics(ctx: GeoContext, query: AnalyticsQuery) {
  const { workspaceId, dataset, limit } = query;
  if (dataset === 'tracking_events') {
    const rows = await pageEvents(ctx.db, { workspaceId, limit: limit + 1, beforeId: eventCursor(query.cursor) });
    const page = pageOf('ev', rows, limit);
    return { workspaceId, dataset, limit, items: page.rows.map(mapEvent), nextCursor: page.next };
  }
  const { mode, cursorKind, page: wanted } = recordList(query);
  const rows = await pageRecords(ctx.db, wanted);
  const page = pageOf(cursorKind, rows, limit);
  return {
    workspaceId,
    dataset,
    limit,
    ...(dataset === 'experiments' ? { mode } : {}),
    items: page.rows.map(mapRecord),
    nextCursor: page.next,
  };
}

export interface SignalRecord {
  dataset: string;
  key?: string | undefined;
  definitionVersion: string;
  runId?: string | undefined;
  importId?: string | undefined;
  computedAt?: string | undefined;
  data: Record<string, unknown>;
  confidence?: { value: number; interval: number[] } | undefined;
  evidence?: { type: string; ref: string; description?: string | undefined }[] | undefined;
  mode?: 'observed' | 'simulated' | undefined;
  status?: string | undefined;
  subject?: string | undefined;
}

const MAX_DATA_BYTES = 16 * 1024;

/** Checks one signal record against its dataset's rules; returns the row to insert. */
function toRow(
  index: number,
  record: SignalRecord,
  workspaceId: string,
  secret: string,
  now: string,
): Insertable<DatasetRecordTable> {
  const fail = (message: string) => GeoErrors.invalidRecord(index, message);
  if (!(DATASETS as readonly string[]).includes(record.dataset))
    throw fail(`unknown dataset ${JSON.stringify(record.dataset.slice(0, 40))}`);
  const dataset = record.dataset as DatasetName;
  const reason = NOT_WRITABLE[dataset];
  if (reason) throw GeoErrors.readOnlyDataset(dataset, reason);
  const dataJson = JSON.stringify(record.data);
  if (Buffer.byteLength(dataJson) > MAX_DATA_BYTES) throw fail(`data exceeds ${MAX_DATA_BYTES} bytes of JSON`);
  const confidence = record.confidence;
  if (confidence) {
    const [low, high] = confidence.interval as [number, number];
    if (!(low <= confidence.value && confidence.value <= high))
      throw fail('confidence.interval must hold the value (low ≤ value ≤ high)');
  }
  if (dataset === 'metrics' && !confidence) throw fail('metrics carry a confidence (value and interval)');
  if (dataset === 'recommendations' && (record.evidence?.length ?? 0) === 0)
    throw fail('recommendations reference at least one piece of evidence');
  if (dataset === 'experiments' && !record.mode)
    throw fail('experiments say whether they are observed or simulated (mode)');
  if (dataset !== 'experiments' && record.mode) throw fail('mode applies to experiments only');
  if (record.status !== undefined && dataset !== 'content')
    throw fail('status applies to content only (actions move through their workflow)');
  const computedAt = record.computedAt ? new Date(record.computedAt).toISOString() : now;
  return withApiJson({
    id: uuidv7(),
    workspace_id: workspaceId,
    dataset,
    mode: record.mode ?? '',
    record_key: record.key ?? null,
    definition_version: record.definitionVersion,
    run_id: record.runId ?? null,
    import_id: record.importId ?? null,
    computed_at: computedAt,
    data: dataJson,
    confidence_value: confidence?.value ?? null,
    confidence_low: confidence ? confidence.interval[0]! : null,
    confidence_high: confidence ? confidence.interval[1]! : null,
    evidence: JSON.stringify(record.evidence ?? []),
    status: dataset === 'content' ? (record.status ?? 'draft') : null,
    subject_hash: record.subject ? hashSubject(secret, record.subject) : null,
    created_at: now,
    updated_at: now,
  });
}

/** Adds the stored API representation to a row about to be written. */
export function withApiJson(row: Omit<Selectable<DatasetRecordTable>, 'api_json'>): Insertable<DatasetRecordTable> {
  return { ...row, api_json: recordJson(row) };
}

/**
 * Writes a batch of signal records (all or nothing) under an Idempotency-Key: the same key and body replays the
 * first receipt, a different body is a 409.
 */
export async function writeSignals(
  ctx: GeoContext,
  principal: GeoPrincipal,
  input: { workspaceId: string; records: SignalRecord[] },
  idempotencyKey: string,
  rawBody: unknown,
) {
  const secret = await workspaceSecret(ctx, input.workspaceId);
  return runIdempotent(
    ctx.db,
    { scope: `${principal.tenantId}|POST /api/v1/geo/signals`, key: idempotencyKey, payload: rawBody },
    async (trx) => {
      const now = ctx.now().toISOString();
      const rows = input.records.map((record, index) => toRow(index, record, input.workspaceId, secret, now));
      await insertRecords(trx, rows);
      return {
        statusCode: 201,
        body: { workspaceId: input.workspaceId, accepted: rows.length, ids: rows.map((row) => row.id as string) },
      };
    },
  );
}
