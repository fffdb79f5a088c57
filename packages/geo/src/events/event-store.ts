import type { Executor } from '@keel/core';
import { insertMany } from '../db/bulk-insert.ts';
import type { GeoDb } from '../db/schema.ts';

/** A tracking-event row in insert column order. */
export interface EventRow {
  workspace_id: string;
  kind: string;
  name: string | null;
  path: string | null;
  referrer_host: string | null;
  ai_engine: string | null;
  crawler: string | null;
  consent: number;
  visitor_id: string | null;
  subject_hash: string | null;
  properties: string | null;
  occurred_at: string;
  received_at: string;
}

const COLUMNS = [
  'workspace_id',
  'kind',
  'name',
  'path',
  'referrer_host',
  'ai_engine',
  'crawler',
  'consent',
  'visitor_id',
  'subject_hash',
  'properties',
  'occurred_at',
  'received_at',
] as const satisfies readonly (keyof EventRow)[];

const CHUNK = 500;

/** Inserts events with one multi-row INSERT per 500 rows (statement text compiled once per row count). */
export async function insertEvents(db: Executor<GeoDb>, rows: readonly EventRow[]): Promise<void> {
  await insertMany(db, 'tracking_event', COLUMNS, rows as unknown as Record<string, unknown>[], CHUNK);
}
