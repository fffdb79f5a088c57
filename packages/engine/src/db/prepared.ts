import { dialectOf, type Executor } from '@keel/core';
import { type Compilable, type CompiledQuery, createQueryId, type Kysely } from 'kysely';
import type { EngineDb } from './schema.ts';

const SENTINEL = '\u0000keel-param:';

/** A named placeholder for `preparedQuery` builders (typed as anything, bound at execution). */
export function param<T = any>(name: string): T {
  return `${SENTINEL}${name}` as T;
}

/**
 * A query built and compiled once per dialect, then executed with new values bound in place of its `param()`
 * placeholders: hot paths (token exchange, chat turns) skip Kysely's builder and compiler on every call. The
 * SQL text is identical each time, so the SQLite adapter's statement cache and PostgreSQL plans are reused.
 */
export function preparedQuery<R>(build: (db: Kysely<EngineDb>) => Compilable<R>) {
  const compiledByDialect = new Map<string, CompiledQuery<R>>();
  return async (db: Executor<EngineDb>, values: Record<string, unknown>): Promise<R[]> => {
    const dialect = dialectOf(db);
    let compiled = compiledByDialect.get(dialect);
    if (!compiled) {
      compiled = build(db as Kysely<EngineDb>).compile();
      compiledByDialect.set(dialect, compiled);
    }
    const parameters = compiled.parameters.map((value) => {
      if (typeof value !== 'string' || !value.startsWith(SENTINEL)) return value;
      const name = value.slice(SENTINEL.length);
      if (!(name in values)) throw new Error(`prepared query: no value for ${name}`);
      return values[name];
    });
    const result = await db.executeQuery<R>({ ...compiled, parameters, queryId: createQueryId() });
    return result.rows;
  };
}
