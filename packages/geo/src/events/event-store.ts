import type { Executor } from '@keel/core';
import { sql } from 'kysely';
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

/**
 * AI traffic of a workspace between two times (inclusive): AI-engine referrals and AI-crawler hits grouped by kind,
 * engine, crawler and path with their hit and distinct-visitor counts, most hits first, at most `limit` groups.
 */
export async function aiTrafficGroups(
  db: Executor<GeoDb>,
  workspaceId: string,
  since: string,
  until: string,
  limit: number,
) {
  return db
    .selectFrom('tracking_event')
    .select((eb) => [
      'kind',
      'ai_engine',
      'crawler',
      'path',
      eb.fn.countAll<number>().as('hits'),
      sql<number>`count(distinct visitor_id)`.as('visitors'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('occurred_at', '>=', since)
    .where('occurred_at', '<=', until)
    .where((eb) => eb.or([eb('ai_engine', 'is not', null), eb('kind', '=', 'ai_crawler')]))
    .groupBy(['kind', 'ai_engine', 'crawler', 'path'])
    .orderBy('hits', 'desc')
    .limit(limit)
    .execute();
}

/** Stores the salt of a UTC day unless that day already has one (the first instance to need it wins). */
export async function insertDailySaltIfAbsent(
  db: Executor<GeoDb>,
  day: string,
  salt: string,
  createdAt: string,
): Promise<void> {
  await db
    .insertInto('daily_salt')
    .values({ day, salt, created_at: createdAt })
    .onConflict((oc) => oc.column('day').doNothing())
    .execute();
}

/** The hex salt of a UTC day (throws when the day has none). */
export async function dailySalt(db: Executor<GeoDb>, day: string): Promise<string> {
  const row = await db.selectFrom('daily_salt').select('salt').where('day', '=', day).executeTakeFirstOrThrow();
  return row.salt;
}

/** Deletes the salts of every day before `day`. */
export async function deleteSaltsBefore(db: Executor<GeoDb>, day: string): Promise<void> {
  await db.deleteFrom('daily_salt').where('day', '<', day).execute();
}
