import { CompiledQuery } from 'kysely';
import { dialectOf } from './dialect.ts';
import type { Executor } from './transaction.ts';

const statements = new Map<string, string>();

/**
 * Inserts many rows with multi-row INSERTs whose statement text (per table, column list, row count and dialect)
 * is compiled once by Kysely and then reused: bulk and hot paths (ingestion, graph import, execution steps) skip
 * rebuilding the same query tree for every chunk, and the SQLite statement cache and PostgreSQL plans see the same
 * text each time. Parameters are bound as usual; a missing column value is NULL.
 */
export async function insertMany<DB, T extends keyof DB & string>(
  db: Executor<DB>,
  table: T,
  columns: readonly (keyof DB[T] & string)[],
  rows: readonly Record<string, unknown>[],
  chunkSize: number,
): Promise<void> {
  const dialect = dialectOf(db);
  for (let start = 0; start < rows.length; start += chunkSize) {
    const chunk = rows.length <= chunkSize ? rows : rows.slice(start, start + chunkSize);
    const cacheKey = `${dialect}|${table}|${columns.join(',')}|${chunk.length}`;
    let text = statements.get(cacheKey);
    if (text === undefined) {
      const template = Object.fromEntries(columns.map((column) => [column, null]));
      text = (db as Executor<any>)
        .insertInto(table)
        .values(chunk.map(() => template))
        .compile().sql;
      if (statements.size > 500) statements.clear();
      statements.set(cacheKey, text);
    }
    const parameters: unknown[] = new Array(chunk.length * columns.length);
    let p = 0;
    for (const row of chunk) for (const column of columns) parameters[p++] = row[column] ?? null;
    await db.executeQuery(CompiledQuery.raw(text, parameters));
  }
}
