import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  sql,
} from 'kysely';
import pg from 'pg';
import { ensurePrivateDirectory, restrictFiles } from '../fs/private-files.ts';
import { isDatabaseUnavailable } from './connection-errors.ts';
import { adaptSqlite } from './sqlite-adapter.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface Database<DB> {
  db: Kysely<DB>;
  dialect: DialectName;
  /** The PostgreSQL schema the service's tables live in (undefined on SQLite). */
  schema: string | undefined;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** `postgres://…`, `sqlite:path`, a file path, or `:memory:`. */
  url: string;
  /** PostgreSQL schema for this service's tables; created when missing. */
  schema?: string;
  /** Pool size on PostgreSQL. */
  poolSize?: number;
  /**
   * Told when a pooled PostgreSQL connection is lost (server restart, failover, terminated backend, network
   * reset). The pool has already dropped it and the next query reconnects. Default: one line on stderr, at most
   * every 10 s.
   */
  onConnectionLost?: (error: Error) => void;
}

/** The default connection-loss report: one short line (code and message, never the URL), at most every 10 s. */
function connectionLossReporter(schema: string): (error: Error) => void {
  let last = 0;
  return (error) => {
    if (Date.now() - last < 10_000) return;
    last = Date.now();
    const code = (error as { code?: string }).code;
    process.stderr.write(
      `keel: ${schema}: a PostgreSQL connection was lost (${code ? `${code} ` : ''}${error.message.slice(0, 200)}); the pool reconnects on the next query\n`,
    );
  };
}

// PostgreSQL returns int8 and numeric as strings to stay exact; our int8 columns (counters, ids) fit in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

function isPostgresUrl(url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
}

function sqlitePath(url: string): string {
  const file = url.replace(/^sqlite:(\/\/)?/, '').replace(/^file:(\/\/)?/, '');
  return file === ':memory:' || file === '' ? ':memory:' : path.resolve(file);
}

/**
 * SQLite transactions start with BEGIN IMMEDIATE: a deferred transaction that reads and then writes cannot wait
 * for another process's write lock (SQLite answers SQLITE_BUSY_SNAPSHOT at once), whereas an immediate one takes
 * the write lock up front and waits its turn under the busy timeout. One process never notices; two do — a second
 * instance, or `keel import` beside `keel start`.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: ConstructorParameters<typeof SqliteDialect>[0];
  constructor(config: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}

/**
 * The pool as Kysely sees it, with one addition: a client whose query failed because its connection was lost
 * is destroyed on release instead of going back to the pool. (The server's "terminating connection" message
 * reaches the query before the socket closes, so the pool would otherwise hand that dead client to the next
 * request.)
 */
function dropLostClients(pool: pg.Pool): { connect(): Promise<pg.PoolClient>; end(): Promise<void> } {
  return {
    async connect() {
      const client = await pool.connect();
      const release = client.release;
      let lost: Error | undefined;
      client.query = ((...args: Parameters<pg.PoolClient['query']>) => {
        const result = (pg.Client.prototype.query as (...a: unknown[]) => unknown).apply(client, args);
        if (result instanceof Promise) {
          result.catch((error: unknown) => {
            if (isDatabaseUnavailable(error)) lost = error as Error;
          });
        }
        return result;
      }) as pg.PoolClient['query'];
      client.release = (error?: Error | boolean) => {
        delete (client as { query?: unknown }).query; // back to the prototype's method
        release.call(client, error ?? lost);
      };
      return client;
    },
    end: () => pool.end(),
  };
}

/** The embedded default: `<dataDir>/<service>.sqlite`. */
export function defaultDatabaseUrl(dataDir: string, service: string): string {
  return path.join(dataDir, `${service}.sqlite`);
}

function quoteIdentifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid schema name ${name}`);
  return `"${name}"`;
}

/** A pg client whose connect gives up after 5 s (a half-open server), whatever the pool's own options say. */
class BoundedConnectClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super({ ...(typeof config === 'string' ? { connectionString: config } : config), connectionTimeoutMillis: 5_000 });
  }
}

/**
 * Opens a Kysely database: SQLite (WAL, foreign keys on) for paths and `:memory:`, PostgreSQL for
 * `postgres://` URLs with the service's tables in their own schema.
 */
export async function openDatabase<DB>(options: OpenDatabaseOptions): Promise<Database<DB>> {
  if (isPostgresUrl(options.url)) {
    const schema = options.schema ?? 'public';
    const setup = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: 5_000 });
    setup.on('error', () => undefined); // a failure also rejects the pending connect or query below
    await setup.connect();
    try {
      await setup.query(`create schema if not exists ${quoteIdentifier(schema)}`);
    } finally {
      await setup.end();
    }
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      options: `-c search_path=${quoteIdentifier(schema)}`,
      idleTimeoutMillis: 30_000,
      // A server that accepts TCP but never answers (a half-open failover) fails a new connection instead of hanging
      // it. The bound is on the client's connect, not the pool's: pg-pool applies its own connectionTimeoutMillis to
      // waiting for a busy pool too, which turned a burst of requests under load into 503s.
      Client: BoundedConnectClient,
      keepAlive: true,
    });
    // Without these listeners a lost connection is an unhandled 'error' event, which ends the process. The pool
    // reports idle clients it has already dropped; a checked-out client reports on itself, its query fails,
    // and Kysely's release hands the pool a client that is no longer queryable, which the pool drops.
    const lost = options.onConnectionLost ?? connectionLossReporter(schema);
    pool.on('error', (error) => lost(error));
    pool.on('connect', (client) => client.on('error', (error) => lost(error)));
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: dropLostClients(pool) }) });
    return { db, dialect: 'postgres', schema, close: () => db.destroy() };
  }

  const file = sqlitePath(options.url);
  if (file !== ':memory:') {
    // Owner-only: the directory 0700, the database 0600 (created empty with that mode; SQLite gives its -wal and
    // -shm files the mode of the database file).
    ensurePrivateDirectory(path.dirname(file));
    fs.closeSync(fs.openSync(file, 'a', 0o600));
    restrictFiles(file, `${file}-wal`, `${file}-shm`, `${file}-journal`);
  }
  const database = new DatabaseSync(file);
  // The busy timeout comes first: switching to WAL needs a lock another process (a second instance, or
  // `keel migrate` beside `keel start`) may be holding for a moment.
  database.exec('PRAGMA busy_timeout = 5000');
  database.exec('PRAGMA journal_mode = WAL');
  database.exec('PRAGMA synchronous = NORMAL');
  database.exec('PRAGMA foreign_keys = ON');
  const db = new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: adaptSqlite(database) }) });
  return { db, dialect: 'sqlite', schema: undefined, close: () => db.destroy() };
}

/** True when the database answers a trivial query within the time limit. */
export async function pingDatabase(db: Kysely<any>, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    await Promise.race([sql`select 1`.execute(db), timeout]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
