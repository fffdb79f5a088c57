import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

type Row = Record<string, unknown>;

/** node:sqlite hands back null-prototype rows; Kysely and our code expect plain objects. */
function plain(row: unknown): Row {
  return { ...(row as Row) };
}

/** node:sqlite binds numbers, strings, bigints, buffers and null; booleans and dates are stored as SQLite does. */
function bindable(parameters: ReadonlyArray<unknown>): never[] {
  return parameters.map((value) => {
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (value instanceof Date) return value.toISOString();
    if (value === undefined) return null;
    return value;
  }) as never[];
}

function adaptStatement(statement: StatementSync): SqliteStatement {
  const reader = statement.columns().length > 0;
  return {
    reader,
    all: (parameters) => statement.all(...bindable(parameters)).map(plain),
    run: (parameters) => {
      const result = statement.run(...bindable(parameters));
      return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
    },
    *iterate(parameters) {
      for (const row of statement.iterate(...bindable(parameters))) yield plain(row);
    },
  };
}

/** Adapts `node:sqlite` to the small interface Kysely's SqliteDialect drives. */
export function adaptSqlite(database: DatabaseSync): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare: (sql) => {
      // Kysely prepares the same few hundred statements over and over; compile each once.
      let statement = statements.get(sql);
      if (!statement) {
        statement = adaptStatement(database.prepare(sql));
        if (statements.size > 2000) statements.clear();
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
