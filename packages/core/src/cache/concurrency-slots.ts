import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A slot taken: give it back with `release()` (idempotent). */
export interface HeldSlot {
  release(): Promise<void>;
}

/**
 * At most `limit` holders of a key at once (e.g. an agent's turns in flight), shared by every instance through Redis
 * when a client is given, counted in process otherwise. Each slot is leased for `ttlMs`: a holder that dies without
 * releasing (a killed instance) frees its slot when the lease ends.
 *
 * The slots use their own connection (a duplicate of the given client, with a longer command timeout) and decide by
 * its state alone: a slow command on the shared client (whose failure hold sends caches and rate limits in process for
 * a second) never turns a shared limit into a per-instance one. While that connection is down (Redis unreachable),
 * slots are counted in process at once — exact for one instance, per instance with several. A slot Redis does not
 * confirm in time is refused like a full key (the script may have run: the slot is removed, else its lease ends).
 */
export interface ConcurrencySlots {
  readonly shared: boolean;
  /** Takes a slot of `key`, or answers `{ held }` (the slots held now, as far as known) when none is free. */
  acquire(key: string, limit: number, ttlMs: number): Promise<HeldSlot | { held: number }>;
  /** Closes the slots' own Redis connection. */
  close(): void;
}

/** How long one slot command may take on the slots' connection before the turn is refused. */
const SLOT_COMMAND_TIMEOUT_MS = 2000;

// One sorted set per key: member = slot id, score = lease end (Redis server time, ms). Drop ended leases, count, add;
// the key lives as long as its longest lease.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[1]) then return {0, held} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) + 1000 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + 1000) end
return {1, held + 1}
`;

/** Resolves true once `client` is ready, false when it fails first or after `ms`. */
function readyWithin(client: Redis, ms: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('close', onClose);
      resolve(ready);
    };
    const onReady = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    client.once('ready', onReady);
    client.once('close', onClose);
  });
}

export function createConcurrencySlots(options: { redis?: Redis | undefined; namespace: string }): ConcurrencySlots {
  const { redis, namespace } = options;
  const own = redis?.duplicate({ commandTimeout: SLOT_COMMAND_TIMEOUT_MS });
  // Outages are reported once by the shared client's watcher (REDIS_URL warning); this connection only retries.
  own?.on('error', () => undefined);
  let ownEverReady = false;
  own?.on('ready', () => {
    ownEverReady = true;
  });
  /** In process: key → slot id → lease end. */
  const local = new Map<string, Map<string, number>>();

  const acquireLocally = (key: string, limit: number, ttlMs: number): HeldSlot | { held: number } => {
    const now = Date.now();
    const slots = local.get(key) ?? new Map<string, number>();
    for (const [id, until] of slots) if (until <= now) slots.delete(id);
    if (slots.size >= limit) return { held: slots.size };
    const id = randomUUID();
    slots.set(id, now + ttlMs);
    local.set(key, slots);
    return {
      async release() {
        slots.delete(id);
        if (slots.size === 0 && local.get(key) === slots) local.delete(key);
      },
    };
  };

  /** The slots' connection is usable: ready, or still making its first connection while Redis answers the shared one. */
  const sharedNow = async (client: Redis) => {
    if (client.status === 'ready') return true;
    if (ownEverReady || redis?.status !== 'ready') return false;
    return readyWithin(client, SLOT_COMMAND_TIMEOUT_MS);
  };

  return {
    shared: redis !== undefined,
    async acquire(key, limit, ttlMs) {
      if (!own || !(await sharedNow(own))) return acquireLocally(key, limit, ttlMs);
      const redisKey = `${namespace}${key}`;
      const id = randomUUID();
      let reply: [number, number];
      try {
        reply = (await own.eval(ACQUIRE, 1, redisKey, limit, Math.ceil(ttlMs), id)) as [number, number];
      } catch {
        own.zrem(redisKey, id).catch(() => undefined);
        return { held: limit };
      }
      const [taken, held] = reply;
      if (taken !== 1) return { held: Number(held) };
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          // A failed release leaves the slot to its lease end.
          await own.zrem(redisKey, id).catch(() => undefined);
        },
      };
    },
    close() {
      own?.disconnect();
    },
  };
}
