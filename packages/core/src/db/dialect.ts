import { type Kysely, sql } from 'kysely';

// The few places where SQLite and PostgreSQL differ, in one file (CONVENTIONS.md, "Data").

/** True when a database error is a unique-constraint violation, on either engine. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; errcode?: number; message?: string } | undefined;
  if (!e) return false;
  if (e.code === '23505') return true; // PostgreSQL unique_violation
  // node:sqlite: SQLITE_CONSTRAINT_UNIQUE (2067) and SQLITE_CONSTRAINT_PRIMARYKEY (1555)
  if (e.errcode === 2067 || e.errcode === 1555) return true;
  return typeof e.message === 'string' && e.message.includes('UNIQUE constraint failed');
}

/** Timestamps come back as ISO text from SQLite and as Date from PostgreSQL; the API always shows ISO. */
export function toIsoString(value: string | Date): string {
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

/** SQLite stores booleans as 0/1. */
export function toBoolean(value: boolean | number | bigint): boolean {
  return typeof value === 'boolean' ? value : Number(value) !== 0;
}

/** Which engine a Kysely instance talks to, read from its adapter (migrations get only `Kysely<any>`). */
export function dialectOf(db: { getExecutor(): { adapter: object } }): 'sqlite' | 'postgres' {
  return db.getExecutor().adapter.constructor.name.startsWith('Postgres') ? 'postgres' : 'sqlite';
}

/** Column types that differ between engines, for migrations. */
export function columnTypes(db: { getExecutor(): { adapter: object } }) {
  const postgres = dialectOf(db) === 'postgres';
  return {
    /** An auto-incrementing integer primary key: pair with `.primaryKey()` (and `.autoIncrement()` on SQLite). */
    serial: postgres ? ('serial' as const) : ('integer' as const),
    autoIncrement: !postgres,
    timestamp: postgres ? ('timestamptz' as const) : ('text' as const),
    json: postgres ? ('jsonb' as const) : ('text' as const),
    double: 'double precision' as const,
  };
}

/** JSON columns come back parsed from PostgreSQL (jsonb) and as text from SQLite; write them as JSON text. */
export function fromJsonColumn<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/**
 * Serializes transactions that touch the same logical key (say, "the next version of prompt X") until commit.
 * PostgreSQL: a transaction-scoped advisory lock on a hash of the key. SQLite: nothing to do, since a write
 * transaction already holds the database's one write lock (BEGIN IMMEDIATE).
 */
export async function lockForTransaction(trx: { getExecutor(): { adapter: object } }, key: string): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx as Kysely<unknown>);
}
