import path from 'node:path';

/**
 * Where a service keeps its data, for people: `SQLite /abs/path.sqlite`, or `PostgreSQL host:port/database
 * (schema s)` — never the user name or password of the URL.
 */
export function describeDatabase(url: string, schema: string): string {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    try {
      const parsed = new URL(url);
      const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || '(default database)';
      return `PostgreSQL ${parsed.host}/${database} (schema ${schema})`;
    } catch {
      return `PostgreSQL (schema ${schema})`;
    }
  }
  const file = url.replace(/^sqlite:(\/\/)?/, '').replace(/^file:(\/\/)?/, '');
  return file === ':memory:' || file === '' ? 'SQLite in memory' : `SQLite ${path.resolve(file)}`;
}

/** `describeDatabase` of a service's own database: `DATABASE_URL`, or its embedded SQLite file in the data dir. */
export function describeServiceDatabase(
  core: { databaseUrl?: string | undefined; dataDir: string },
  service: string,
): string {
  return describeDatabase(core.databaseUrl ?? path.join(core.dataDir, `${service}.sqlite`), service);
}
