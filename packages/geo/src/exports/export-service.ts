import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { type Executor, type IdempotentResponse, runIdempotent, toIsoString, withTransaction } from '@keel/core';
import type { Selectable } from 'kysely';
import { requirePermission, requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoPrincipal } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import { DATASETS, type DatasetName } from '../datasets/dataset-schemas.ts';
import { mapEvent, mapRecord } from '../datasets/dataset-service.ts';
import { findRecord, pageEvents, pageRecords, pageSubjectEvents } from '../datasets/dataset-store.ts';
import type { ExportTable, GeoDb } from '../db/schema.ts';
import { GeoErrors } from '../errors.ts';
import { isUuid, normalizeUuid, uuidv7 } from '../ids.ts';
import {
  deleteExportChunks,
  expiredExportIds,
  findExport,
  findExportChunk,
  insertExport,
  insertExportChunk,
  pageExports,
  pruneExports,
  updateExport,
} from './export-store.ts';
import { CONTENT_TYPES, chunkingSink, type ExportFormat, type ExportRow, writeExport } from './export-writers.ts';

const PAGE = 1000;
const CHUNK_BYTES = 256 * 1024;
const MAX_DATA_COLUMNS = 50;

export function mapExport(row: Selectable<ExportTable>, now: Date) {
  const expiresAt = toIsoString(row.expires_at);
  const expired = new Date(expiresAt) <= now;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    source: row.source,
    dataset: row.dataset,
    reportId: row.report_id,
    format: row.format,
    status: expired ? 'expired' : row.status,
    rowCount: row.row_count === null ? null : Number(row.row_count),
    byteSize: row.byte_size === null ? null : Number(row.byte_size),
    createdAt: toIsoString(row.created_at),
    completedAt: row.completed_at === null ? null : toIsoString(row.completed_at),
    expiresAt,
    downloadUrl: `/api/v1/geo/exports/${row.id}`,
  };
}

export interface CreateExportInput {
  workspaceId: string;
  source: 'dataset' | 'report';
  dataset?: string | undefined;
  reportId?: string | undefined;
  format: ExportFormat;
}

/** Queues an export for the background worker; 202 with its id. */
/**
 * Queues an export. With an `Idempotency-Key`, a retry with the same body answers the first receipt instead of
 * queueing a second export.
 */
export async function createExport(
  ctx: GeoContext,
  principal: GeoPrincipal,
  input: CreateExportInput,
  idempotencyKey?: string,
): Promise<IdempotentResponse<ReturnType<typeof mapExport>>> {
  if (input.source === 'dataset') {
    if (!input.dataset || !(DATASETS as readonly string[]).includes(input.dataset))
      throw GeoErrors.exportInvalid('source "dataset" needs one of the 15 datasets in `dataset`');
    if (input.reportId !== undefined) throw GeoErrors.exportInvalid('reportId belongs to source "report"');
  } else {
    if (input.dataset !== undefined) throw GeoErrors.exportInvalid('dataset belongs to source "dataset"');
    if (input.reportId === undefined || !isUuid(input.reportId))
      throw GeoErrors.exportInvalid('source "report" needs a reportId');
    const report = await findRecord(ctx.db, input.workspaceId, 'reports', normalizeUuid(input.reportId));
    if (!report) throw GeoErrors.reportNotFound(input.reportId);
  }
  const job = {
    tenantId: principal.tenantId,
    workspaceId: input.workspaceId,
    source: input.source,
    dataset: input.dataset ?? null,
    reportId: input.reportId ? normalizeUuid(input.reportId) : null,
    subjectHash: null,
    format: input.format,
  };
  const work = async (trx: Executor<GeoDb>) => ({ statusCode: 202, body: await insertExportJob(ctx, job, trx) });
  if (idempotencyKey === undefined) return { ...(await work(ctx.db)), replayed: false };
  return runIdempotent(
    ctx.db,
    { scope: `${principal.tenantId}|POST /api/v1/geo/exports`, key: idempotencyKey, payload: input },
    work,
  );
}

export async function insertExportJob(
  ctx: GeoContext,
  job: {
    tenantId: string;
    workspaceId: string;
    source: string;
    dataset: string | null;
    reportId: string | null;
    subjectHash: string | null;
    format: ExportFormat;
  },
  executor: Executor<GeoDb> = ctx.db,
) {
  const now = ctx.now();
  const row = {
    id: uuidv7(),
    tenant_id: job.tenantId,
    workspace_id: job.workspaceId,
    source: job.source,
    dataset: job.dataset,
    report_id: job.reportId,
    subject_hash: job.subjectHash,
    format: job.format,
    status: 'pending',
    attempts: 0,
    claimed_by: null,
    claimed_at: null,
    row_count: null,
    byte_size: null,
    error: null,
    created_at: now.toISOString(),
    completed_at: null,
    expires_at: new Date(now.getTime() + ctx.config.exports.ttlHours * 3_600_000).toISOString(),
    pruned_at: null,
  };
  await insertExport(executor, row);
  return mapExport(row as Selectable<ExportTable>, now);
}

export async function listExports(ctx: GeoContext, workspaceId: string, limit: number, cursor: string | undefined) {
  const rows = await pageExports(ctx.db, workspaceId, limit + 1, decodeCursor('exp', cursor));
  const { rows: page, next } = pageOf('exp', rows, limit);
  const now = ctx.now();
  return {
    items: page.map((row) => mapExport(row, now)),
    nextCursor: next,
  };
}

function flattenRecord(record: Record<string, any>, dataColumns: readonly string[]): ExportRow {
  const row: ExportRow = {
    id: record.id,
    key: record.key,
    definitionVersion: record.version.definitionVersion,
    runId: record.version.runId,
    importId: record.version.importId,
    computedAt: record.version.computedAt,
    confidence: record.confidence?.value ?? null,
    confidenceLow: record.confidence?.interval[0] ?? null,
    confidenceHigh: record.confidence?.interval[1] ?? null,
    status: record.status,
    mode: record.mode,
    evidence: JSON.stringify(record.evidence),
    createdAt: record.createdAt,
  };
  for (const column of dataColumns) {
    const value = record.data[column];
    row[`data.${column}`] =
      value === undefined || value === null
        ? null
        : typeof value === 'object'
          ? JSON.stringify(value)
          : (value as string | number | boolean);
  }
  return row;
}

function flattenEvent(event: ReturnType<typeof mapEvent>): ExportRow {
  return { ...event, properties: event.properties === null ? null : JSON.stringify(event.properties) };
}

/** Rows of a job, fetched page by page (keyset), plus the columns of the tabular formats. */
async function sourceRows(
  ctx: GeoContext,
  job: Selectable<ExportTable>,
): Promise<{ columns: string[]; rows: AsyncIterable<ExportRow>; title: string }> {
  const tabular = job.format !== 'json' && job.format !== 'ndjson';
  if (job.source === 'privacy_access' || job.dataset === 'tracking_events') {
    const subject = job.source === 'privacy_access' ? job.subject_hash : null;
    const columns = [
      'id',
      'kind',
      'name',
      'path',
      'referrerHost',
      'aiEngine',
      'crawler',
      'consent',
      'visitorId',
      'properties',
      'occurredAt',
      'receivedAt',
    ];
    const rows = (async function* () {
      let before: number | undefined;
      for (;;) {
        const page = subject
          ? await pageSubjectEvents(ctx.db, job.workspace_id, subject, PAGE, before)
          : await pageEvents(ctx.db, { workspaceId: job.workspace_id, limit: PAGE, beforeId: before });
        for (const row of page) {
          const event = mapEvent(row);
          yield tabular ? flattenEvent(event) : (event as unknown as ExportRow);
        }
        if (page.length < PAGE) return;
        before = Number(page.at(-1)!.id);
      }
    })();
    return { columns, rows, title: subject ? 'Personal data export' : 'tracking_events' };
  }
  if (job.source === 'report') {
    const report = await findRecord(ctx.db, job.workspace_id, 'reports', job.report_id ?? '');
    if (!report) throw GeoErrors.reportNotFound(job.report_id ?? '');
    const record = mapRecord(report);
    const table = Array.isArray(record.data.rows)
      ? (record.data.rows as Record<string, unknown>[]).filter((r) => r && typeof r === 'object')
      : undefined;
    const asRow = (value: Record<string, unknown>): ExportRow =>
      Object.fromEntries(
        Object.entries(value).map(([k, v]) => [
          k,
          v === null || typeof v !== 'object' ? (v as string | number | boolean | null) : JSON.stringify(v),
        ]),
      );
    const entries = table ?? Object.entries(record.data).map(([field, value]) => ({ field, value }));
    const columns = [...new Set(entries.flatMap((entry) => Object.keys(entry)))].slice(0, MAX_DATA_COLUMNS);
    const title = `${typeof record.data.title === 'string' ? record.data.title : 'Report'} (${record.version.definitionVersion}, run ${record.version.runId ?? '—'}, ${record.version.computedAt})`;
    const rows = (async function* () {
      for (const entry of entries) yield asRow(entry as Record<string, unknown>);
    })();
    return { columns, rows, title };
  }
  const dataset = job.dataset as DatasetName;
  const first = await pageRecords(ctx.db, {
    workspaceId: job.workspace_id,
    dataset,
    mode: dataset === 'experiments' ? 'observed' : '',
    limit: PAGE,
    beforeId: undefined,
  });
  const dataColumns = [...new Set(first.flatMap((row) => Object.keys(mapRecord(row).data)))].slice(0, MAX_DATA_COLUMNS);
  const base = [
    'id',
    'key',
    'definitionVersion',
    'runId',
    'importId',
    'computedAt',
    'confidence',
    'confidenceLow',
    'confidenceHigh',
    'status',
    'mode',
    'evidence',
    'createdAt',
  ];
  const modes = dataset === 'experiments' ? ['observed', 'simulated'] : [''];
  const rows = (async function* () {
    for (const mode of modes) {
      let page =
        mode === modes[0]
          ? first
          : await pageRecords(ctx.db, {
              workspaceId: job.workspace_id,
              dataset,
              mode,
              limit: PAGE,
              beforeId: undefined,
            });
      for (;;) {
        for (const row of page) {
          const record = mapRecord(row);
          yield tabular ? flattenRecord(record, dataColumns) : (record as unknown as ExportRow);
        }
        if (page.length < PAGE) break;
        page = await pageRecords(ctx.db, {
          workspaceId: job.workspace_id,
          dataset,
          mode,
          limit: PAGE,
          beforeId: page.at(-1)!.id,
        });
      }
    }
  })();
  return { columns: [...base, ...dataColumns.map((c) => `data.${c}`)], rows, title: dataset };
}

/** Generates one claimed export into stored chunks, then marks it ready (or failed, with a reason). */
export async function generateExport(ctx: GeoContext, job: Selectable<ExportTable>): Promise<void> {
  try {
    await deleteExportChunks(ctx.db, job.id);
    const { columns, rows, title } = await sourceRows(ctx, job);
    let seq = 0;
    let limited = 0;
    const capped = (async function* () {
      for await (const row of rows) {
        if (limited++ >= ctx.config.exports.maxRows) return;
        yield row;
      }
    })();
    const sink = chunkingSink(CHUNK_BYTES, async (chunk) => {
      await insertExportChunk(ctx.db, job.id, seq++, chunk.toString('base64'));
    });
    const done = finished(sink);
    done.catch(() => undefined); // when writing fails first, its error is the one handled below
    const count = await writeExport(job.format as ExportFormat, columns, capped, sink, {
      title,
      maxPdfRows: ctx.config.exports.maxPdfRows,
    });
    if (!sink.writableEnded) sink.end();
    await done;
    await updateExport(ctx.db, job.id, {
      status: 'ready',
      row_count: count,
      byte_size: sink.bytes,
      completed_at: ctx.now().toISOString(),
    });
  } catch (error) {
    ctx.log.error({ err: error, exportId: job.id }, 'export failed');
    await updateExport(ctx.db, job.id, {
      status: 'failed',
      error: error instanceof Error && 'code' in error ? String(error.message).slice(0, 500) : 'generation failed',
      completed_at: ctx.now().toISOString(),
    });
  }
}

/**
 * Looks an export up for download. Unknown, another tenant's, outside the key's scope and expired all get the
 * same 403 (the spec's "expired or unauthorized"), so the answer never reveals that an export exists.
 */
export async function openExport(ctx: GeoContext, principal: GeoPrincipal, exportId: string) {
  const job = isUuid(exportId) ? await findExport(ctx.db, normalizeUuid(exportId)) : undefined;
  if (!job || job.tenant_id !== principal.tenantId) throw GeoErrors.exportForbidden();
  try {
    await requireWorkspace(ctx, principal, job.workspace_id);
    requirePermission(principal, 'geo:read');
    if (job.source === 'privacy_access') requirePermission(principal, 'geo:write');
  } catch {
    throw GeoErrors.exportForbidden();
  }
  const now = ctx.now();
  if (new Date(toIsoString(job.expires_at)) <= now) throw GeoErrors.exportForbidden();
  const summary = mapExport(job, now);
  if (job.status !== 'ready') return { ready: false as const, summary };
  const db = ctx.db;
  const stream = Readable.from(
    (async function* () {
      // One chunk at a time: memory stays flat however large the export.
      for (let seq = 0; ; seq++) {
        const chunk = await findExportChunk(db, job.id, seq);
        if (!chunk) return;
        yield Buffer.from(chunk.data, 'base64');
      }
    })(),
  );
  const extension = job.format;
  const filename = `${job.source === 'privacy_access' ? 'personal-data' : (job.dataset ?? 'report')}-${job.id.slice(0, 8)}.${extension}`;
  return { ready: true as const, summary, stream, contentType: CONTENT_TYPES[job.format as ExportFormat], filename };
}

const PRUNE_BATCH = 100;
const PRUNE_MAX_BATCHES = 50;

/**
 * Deletes the stored bytes of expired exports and marks each job pruned, batch after batch (served by the partial
 * index on `expires_at` where not pruned), so every expired export is reached however many there are. One round
 * handles at most 5,000; the next round continues. Returns how many were pruned.
 */
export async function pruneExpiredExports(ctx: GeoContext): Promise<number> {
  const now = ctx.now().toISOString();
  let pruned = 0;
  for (let batch = 0; batch < PRUNE_MAX_BATCHES; batch++) {
    const ids = await expiredExportIds(ctx.db, now, PRUNE_BATCH);
    if (ids.length === 0) break;
    await withTransaction(ctx.db, (trx) => pruneExports(trx, ids, now));
    pruned += ids.length;
    if (ids.length < PRUNE_BATCH) break;
  }
  return pruned;
}
