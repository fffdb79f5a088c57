import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { MIGRATION_TABLE } from './db/migrate.ts';
import { type Database, type DialectName, openDatabase } from './db/open-database.ts';
import { setSchemaReuse } from './http/schema-cache.ts';

/**
 * From now on, every app this process builds reuses the validators and response serializers already compiled for
 * the same route schema objects (compiling them is most of the cost of building an app). For test processes that
 * build the same apps many times; the test helpers of each service call it. Production never turns it on.
 */
export function reuseCompiledSchemas(): void {
  setSchemaReuse(true);
}

export interface TestDatabaseTarget {
  dialect: DialectName;
  url: string;
}

/** SQLite in memory always; PostgreSQL too when TEST_DATABASE_URL is set (CI sets it). */
export function testDatabaseTargets(env = process.env): TestDatabaseTarget[] {
  const targets: TestDatabaseTarget[] = [{ dialect: 'sqlite', url: ':memory:' }];
  if (env.TEST_DATABASE_URL) targets.push({ dialect: 'postgres', url: env.TEST_DATABASE_URL });
  return targets;
}

/** How a test database is opened. */
export interface TestDatabaseOptions<DB> {
  /** Brings a new database to the state the tests start from (migrations, seeds); run on every open. */
  prepare?: (db: Kysely<DB>) => Promise<unknown>;
  /**
   * PostgreSQL only, with `prepare`: on close the schema is emptied (every table but `keel_migration` is
   * truncated, identities restarted) and kept for the next open of the same service in this process, instead of
   * being dropped and migrated again; the schemas left are dropped when the process exits. `prepare` then has no
   * migration left to run and seeds as on a fresh schema. A schema is only reused when `prepare` leaves exactly the
   * rows it left on a fresh one: a migration that inserts rows makes the next open throw, naming the table.
   */
  reuseSchema?: boolean;
}

/** Emptied, migrated schemas ready for the next test of the same service and server, and what `prepare` left in them. */
const idleSchemas = new Map<string, { schemas: string[]; prepared: Map<string, number> | undefined }>();
let dropIdleOnExit = false;

/**
 * Opens a fresh database for one test suite: a new in-memory SQLite database, or a new PostgreSQL schema
 * that is dropped again on close (or emptied and reused, see `reuseSchema`).
 */
export async function openTestDatabase<DB>(
  target: TestDatabaseTarget,
  service: string,
  options: TestDatabaseOptions<DB> = {},
): Promise<Database<DB>> {
  if (target.dialect === 'sqlite') {
    const database = await openDatabase<DB>({ url: target.url });
    await options.prepare?.(database.db);
    return database;
  }
  const reuse = options.reuseSchema === true && options.prepare !== undefined;
  const poolKey = `${target.url}\u0000${service}`;
  const idle = reuse ? idleSchemas.get(poolKey) : undefined;
  const reused = idle?.schemas.pop();
  const schema = reused ?? `${service}_test_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase<DB>({ url: target.url, schema, poolSize: 5 });
  const drop = () => withClient(target.url, (client) => client.query(`drop schema if exists "${schema}" cascade`));
  if (options.prepare) {
    try {
      await options.prepare(database.db);
      if (reuse) {
        const rows = await countRows(target.url, schema);
        const entry = idleSchemas.get(poolKey) ?? { schemas: [], prepared: undefined };
        idleSchemas.set(poolKey, entry);
        if (!reused) entry.prepared ??= rows;
        const differing = [...rows].find(([table, count]) => entry.prepared?.get(table) !== count);
        if (differing) {
          throw new Error(
            `openTestDatabase: ${service}'s prepare left ${differing[1]} rows in ${differing[0]} on a reused schema, ` +
              `${entry.prepared?.get(differing[0]) ?? 0} on a fresh one (a migration inserts rows?): do not pass reuseSchema`,
          );
        }
      }
    } catch (error) {
      // Nothing is left behind by an open that fails.
      await database.close();
      await drop();
      throw error;
    }
  }
  return {
    ...database,
    close: async () => {
      await database.close();
      if (!reuse) {
        await drop();
        return;
      }
      await withClient(target.url, async (client) => {
        const tables = await client.query<{ tablename: string }>(
          'select tablename from pg_tables where schemaname = $1 and tablename <> $2',
          [schema, MIGRATION_TABLE],
        );
        const names = tables.rows.map((row) => `"${schema}"."${row.tablename}"`);
        if (names.length > 0) await client.query(`truncate ${names.join(', ')} restart identity cascade`);
      });
      idleSchemas.get(poolKey)?.schemas.push(schema);
      if (!dropIdleOnExit) {
        dropIdleOnExit = true;
        process.once('beforeExit', () => {
          void dropIdleSchemas();
        });
      }
    },
  };
}

/** Rows per table of a schema (the migration bookkeeping aside). */
async function countRows(url: string, schema: string): Promise<Map<string, number>> {
  return withClient(url, async (client) => {
    const tables = await client.query<{ tablename: string }>(
      'select tablename from pg_tables where schemaname = $1 and tablename <> $2 order by tablename',
      [schema, MIGRATION_TABLE],
    );
    if (tables.rows.length === 0) return new Map();
    const counts = await client.query<{ name: string; n: string }>(
      tables.rows
        .map((row, i) => `select $${i + 1}::text as name, count(*) as n from "${schema}"."${row.tablename}"`)
        .join(' union all '),
      tables.rows.map((row) => row.tablename),
    );
    return new Map(counts.rows.map((row) => [row.name, Number(row.n)]));
  });
}

async function dropIdleSchemas(): Promise<void> {
  const pools = [...idleSchemas];
  idleSchemas.clear();
  for (const [key, { schemas }] of pools) {
    if (schemas.length === 0) continue;
    const url = key.slice(0, key.indexOf('\u0000'));
    await withClient(url, async (client) => {
      for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
    }).catch(() => undefined);
  }
}

/** Runs `work` on a one-off connection to `url`. */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface FaultDatabase {
  /** The new database's URL (same server and credentials as the base URL). */
  url: string;
  /** Its name (`keel_fault_<hex>`). */
  name: string;
  /** Terminates every backend connected to this database (never another one); resolves to how many. */
  terminateBackends(): Promise<number>;
  /** Drops the database (terminating whatever is still connected to it). */
  drop(): Promise<void>;
}

/**
 * Creates a throwaway PostgreSQL database for a fault test (`CREATE DATABASE keel_fault_<random>`) on the server
 * of `baseUrl`. Fault tests terminate backends of this database only: the shared test database is never touched.
 */
export async function createFaultDatabase(baseUrl: string): Promise<FaultDatabase> {
  const name = `keel_fault_${randomBytes(6).toString('hex')}`;
  const admin = <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => withClient(baseUrl, work);
  await admin((client) => client.query(`create database "${name}"`));
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    terminateBackends: () =>
      admin(async (client) => {
        const result = await client.query(
          'select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
          [name],
        );
        return result.rowCount ?? 0;
      }),
    drop: () => admin((client) => client.query(`drop database if exists "${name}" with (force)`)).then(() => undefined),
  };
}

export interface TcpProxy {
  /** The port the proxy listens on (127.0.0.1). */
  port: number;
  /** Cuts every open connection and resets every new one until restore(): the target looks down. */
  cut(): void;
  /** Lets connections through again. */
  restore(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy on 127.0.0.1 in front of `target` (a PostgreSQL or Redis server), for fault tests: cut() makes the
 * target unreachable for this proxy's clients only, so the shared server is never stopped.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let open = true;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (!open) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cutAll = () => {
    for (const socket of sockets) if (!socket.destroyed) socket.resetAndDestroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      open = false;
      cutAll();
    },
    restore() {
      open = true;
    },
    close: async () => {
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The same URL with its host and port replaced by the proxy's (127.0.0.1:port). */
export function throughProxy(rawUrl: string, proxy: TcpProxy): string {
  const url = new URL(rawUrl);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}

/** Polls `check` every 50 ms until it holds; rejects after `timeoutMs`. Resolves to the time it took. */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 8000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

/** Runs `request` from `concurrency` loops until stop(), which resolves to every status seen (a thrown request counts as 0). */
export function startLoad(request: () => Promise<number>, concurrency = 8): { stop(): Promise<number[]> } {
  const statuses: number[] = [];
  let running = true;
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) statuses.push(await request().catch(() => 0));
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return statuses;
    },
  };
}

/**
 * A throwaway PostgreSQL database behind a TCP proxy. When the test ends, what was passed to `defer` closes first
 * (last in, first out: the app, then its database handle), then the proxy, then the database is dropped.
 */
export async function faultDatabaseBehindProxy(
  t: { after(fn: () => Promise<void> | void): void },
  baseUrl: string,
): Promise<{ fault: FaultDatabase; proxy: TcpProxy; url: string; defer(close: () => Promise<void>): void }> {
  const fault = await createFaultDatabase(baseUrl);
  const closers: (() => Promise<void>)[] = [];
  let proxy: TcpProxy | undefined;
  t.after(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await proxy?.close();
    await fault.drop();
  });
  const target = new URL(baseUrl);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  return { fault, proxy, url: throughProxy(fault.url, proxy), defer: (close) => closers.push(close) };
}

/** URLs an outbound-URL check must refuse: IPv6 embeddings of IPv4 addresses, other IPv4 spellings of private addresses, trailing-dot internal names. */
export const SSRF_URLS: readonly string[] = [
  'https://[::127.0.0.1]/',
  'https://[::7f00:1]/',
  'https://[::10.0.0.1]/',
  'https://[::169.254.169.254]/',
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:7f00:1]/',
  'https://[::ffff:0:127.0.0.1]/',
  'https://[64:ff9b::127.0.0.1]/',
  'https://[64:ff9b::a9fe:a9fe]/',
  'https://[64:ff9b:1::10.0.0.1]/',
  'https://[2002:7f00:1::]/',
  'https://[2002:a9fe:a9fe::1]/',
  'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
  'https://[::]/',
  'https://2130706433/',
  'https://017700000001/',
  'https://0x7f000001/',
  'https://0x7f.0.0.1/',
  'https://0177.0.0.1/',
  'https://127.1/',
  'https://0/',
  'https://0xa9.0xfe.0xa9.0xfe/',
  'https://3232235777/',
  'https://127.0.0.1./',
  'https://localhost./',
  'https://localhost../',
  'https://printer.local./',
  'https://db.internal./',
];

export {
  type ExampleOperation,
  exampleOperations,
  exampleProblems,
  httpSender,
  invalidExamples,
  type ReplayOptions,
  type ReplayRequest,
  type ReplayResult,
  replayExamples,
} from './openapi-replay.ts';
