import type { Redis } from 'ioredis';

export interface RedisHealthLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/**
 * Whether Redis can be used right now, for everything that shares one client (cache, invalidations, rate limits).
 * While it cannot, callers use their in-process fallback at once instead of waiting for a timeout.
 */
export interface RedisHealth {
  /** True while the client is connected and no command failed in the last second. */
  available(): boolean;
  /** Reports a failed command (e.g. a timeout on a connection that still looks open): Redis is skipped for a second. */
  failed(error: unknown): void;
  /** Runs `listener` each time Redis answers again after an outage (re-subscribe, drop what may be stale). */
  onRecovered(listener: () => void): void;
  /** Where the outage warning and the recovery line go (the first app's logger); stderr until then. */
  useLogger(log: RedisHealthLogger): void;
}

const FAILURE_HOLD_MS = 1000;
const monitors = new WeakMap<Redis, RedisHealth>();

/** `host:port` of a client's server: the warning names the server, never the credentials. */
function describeServer(redis: Redis): string {
  const { host, port, path } = redis.options;
  return path ? String(path) : `${host ?? 'localhost'}:${port ?? 6379}`;
}

function reasonOf(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return String(e?.code ?? e?.message ?? 'unreachable').slice(0, 120);
}

/**
 * Watches a Redis client: one warning when an outage starts (naming REDIS_URL and the server), one line when
 * it ends, and `available()` for the fast path. A client that never connected counts as an outage from the start.
 * Watching the same client again returns the same monitor.
 */
export function watchRedis(redis: Redis): RedisHealth {
  const existing = monitors.get(redis);
  if (existing) return existing;
  const server = describeServer(redis);
  let log: RedisHealthLogger | undefined;
  let down = false;
  let everReady = false;
  let failedAt = 0;
  const listeners: (() => void)[] = [];
  const write = (level: 'info' | 'warn', object: object, message: string) => {
    if (log) log[level](object, message);
    else process.stderr.write(`keel: ${message}\n`);
  };
  const outage = (error: unknown) => {
    if (down) return;
    down = true;
    write(
      'warn',
      { redis: server, reason: reasonOf(error) },
      `REDIS_URL: Redis at ${server} is unreachable (${reasonOf(error)}); using in-process caches and rate limits until it answers again`,
    );
  };
  redis.on('error', (error: unknown) => outage(error));
  redis.on('close', () => {
    if (everReady) outage(new Error('connection closed'));
  });
  redis.on('ready', () => {
    everReady = true;
    failedAt = 0;
    if (!down) return;
    down = false;
    write('info', { redis: server }, 'REDIS_URL: Redis answers again; shared caches and rate limits resumed');
    for (const listener of listeners) listener();
  });
  const health: RedisHealth = {
    available: () => redis.status === 'ready' && Date.now() - failedAt > FAILURE_HOLD_MS,
    failed(error) {
      failedAt = Date.now();
      if (redis.status !== 'ready') outage(error);
    },
    onRecovered(listener) {
      listeners.push(listener);
    },
    useLogger(logger) {
      log ??= logger;
    },
  };
  monitors.set(redis, health);
  return health;
}
