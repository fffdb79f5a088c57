import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
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

/**
 * Opens a fresh database for one test suite: a new in-memory SQLite database, or a new PostgreSQL schema
 * that is dropped again on close.
 */
export async function openTestDatabase<DB>(target: TestDatabaseTarget, service: string): Promise<Database<DB>> {
  if (target.dialect === 'sqlite') return openDatabase<DB>({ url: target.url });
  const schema = `${service}_test_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase<DB>({ url: target.url, schema, poolSize: 5 });
  return {
    ...database,
    close: async () => {
      await database.close();
      const client = new pg.Client({ connectionString: target.url });
      await client.connect();
      try {
        await client.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await client.end();
      }
    },
  };
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
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: baseUrl });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
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
