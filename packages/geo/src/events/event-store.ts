import { dialectOf, type Executor } from '@keel/core';
import { CompiledQuery } from 'kysely';
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
const statements = new Map<string, string>();

/**
 * Inserts events with one multi-row INSERT per 500 rows. The statement text for a given row count is compiled
 * once by Kysely (so each dialect gets its own placeholders) and reused: ingestion is the hot path.
 */
export async function insertEvents(db: Executor<GeoDb>, rows: readonly EventRow[]): Promise<void> {
  const dialect = dialectOf(db);
  for (let start = 0; start < rows.length; start += CHUNK) {
    const chunk = rows.slice(start, start + CHUNK);
    const cacheKey = `${dialect}:${chunk.length}`;
    let text = statements.get(cacheKey);
    if (text === undefined) {
      const template = Object.fromEntries(COLUMNS.map((column) => [column, null])) as never;
      text = db
        .insertInto('tracking_event')
        .values(chunk.map(() => template))
        .compile().sql;
      statements.set(cacheKey, text);
    }
    const parameters: unknown[] = new Array(chunk.length * COLUMNS.length);
    let p = 0;
    for (const row of chunk) for (const column of COLUMNS) parameters[p++] = row[column];
    await db.executeQuery(CompiledQuery.raw(text, parameters));
  }
}
