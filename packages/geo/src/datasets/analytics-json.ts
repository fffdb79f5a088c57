import { toIsoString } from '@keel/core';
import type { Selectable } from 'kysely';
import type { DatasetRecordTable, TrackingEventTable } from '../db/schema.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** ISO text as stored (SQLite) is used as is; anything else (a Date from PostgreSQL) is converted. */
function iso(value: string | Date): string {
  return typeof value === 'string' && ISO.test(value) ? value : toIsoString(value);
}

function jsonText(value: unknown): string {
  // JSON columns are written by this service with JSON.stringify, so their text is already valid JSON.
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function num(value: number | null): string {
  return value === null ? 'null' : JSON.stringify(Number(value));
}

/**
 * The analytics page as JSON text, built directly from the rows: the hot read path skips parsing the stored
 * JSON columns only to serialize them again. The shape is exactly DatasetRecordSchema / TrackingEventSchema.
 */
export function recordJson(row: Omit<Selectable<DatasetRecordTable>, 'api_json'>): string {
  const hasConfidence = row.confidence_value !== null;
  return (
    `{"id":${JSON.stringify(row.id)},"dataset":${JSON.stringify(row.dataset)},"workspaceId":${JSON.stringify(row.workspace_id)},` +
    `"key":${JSON.stringify(row.record_key)},"version":{"definitionVersion":${JSON.stringify(row.definition_version)},` +
    `"runId":${JSON.stringify(row.run_id)},"importId":${JSON.stringify(row.import_id)},"computedAt":"${iso(row.computed_at)}"},` +
    `"data":${jsonText(row.data)},` +
    `"confidence":${hasConfidence ? `{"value":${num(row.confidence_value)},"interval":[${num(row.confidence_low)},${num(row.confidence_high)}]}` : 'null'},` +
    `"evidence":${jsonText(row.evidence)},"status":${JSON.stringify(row.status)},"mode":${row.mode === '' ? 'null' : JSON.stringify(row.mode)},` +
    `"createdAt":"${iso(row.created_at)}","updatedAt":"${iso(row.updated_at)}"}`
  );
}

export function eventJson(row: Selectable<TrackingEventTable>): string {
  return (
    `{"id":"${String(row.id)}","dataset":"tracking_events","kind":${JSON.stringify(row.kind)},"name":${JSON.stringify(row.name)},` +
    `"path":${JSON.stringify(row.path)},"referrerHost":${JSON.stringify(row.referrer_host)},"aiEngine":${JSON.stringify(row.ai_engine)},` +
    `"crawler":${JSON.stringify(row.crawler)},"consent":${Number(row.consent) === 1},"visitorId":${JSON.stringify(row.visitor_id)},` +
    `"properties":${row.properties === null ? 'null' : jsonText(row.properties)},"occurredAt":"${iso(row.occurred_at)}","receivedAt":"${iso(row.received_at)}"}`
  );
}
