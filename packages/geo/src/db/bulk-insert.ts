import { dialectOf, type Executor } from '@keel/core';
import { CompiledQuery } from 'kysely';
import type { GeoDb } from './schema.ts';

const statements = new Map<string, string>();

/**
 * Inserts many rows with multi-row INSERTs whose statement text (per table, column list, row count and dialect)
 * is compiled once by Kysely and then reused: bulk paths (ingestion, graph import) skip rebuilding the same query
 * tree for every chunk. Parameters are bound as usual.
 */
export async function insertMany<T extends keyof GeoDb & string>(
  db: Executor<GeoDb>,
  table: T,
  columns: readonly (keyof GeoDb[T] & string)[],
  rows: readonly Record<string, unknown>[],
  chunkSize: number,
): Promise<void> {
  const dialect = dialectOf(db);
  for (let start = 0; start < rows.length; start += chunkSize) {
    const chunk = rows.slice(start, start + chunkSize);
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
