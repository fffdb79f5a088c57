import { Redis } from 'ioredis';
import type { Cache } from './cache.ts';
import { createMemoryCache } from './memory-cache.ts';
import type { RedisHealth } from './redis-health.ts';

/**
 * Opens an ioredis client that fails fast instead of queueing commands while Redis is away: no offline queue
 * (a command while disconnected fails at once), no per-command retries, a 500 ms command deadline, and
 * reconnection in the background every 0.1–2 s.
 */
export function connectRedis(url: string): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: 500,
    retryStrategy: (attempt: number) => Math.min(100 * attempt, 2000),
    lazyConnect: false,
  });
}

/** Deletions remembered during an outage; beyond this many, the whole namespace is dropped on recovery instead. */
const MAX_MISSED_DELETES = 10_000;

/**
 * A cache shared by every instance through Redis. Keys live under `namespace`. While Redis is unreachable
 * (see RedisHealth) it serves from an in-process LRU at once, delivers this process's own invalidations to its own
 * subscribers, and remembers what it deleted; when Redis answers again it replays those deletions, drops the
 * in-process entries, re-subscribes, and calls every subscriber once with the message `*` (invalidations other
 * instances sent during the outage were lost: drop everything).
 */
export function createRedisCache(redis: Redis, namespace: string, health: RedisHealth): Cache {
  const local = createMemoryCache({ maxEntries: 10_000 });
  let subscriber: Redis | undefined;
  const handlers = new Map<string, Set<(message: string) => void>>();
  const missedDeletes = new Set<string>();
  let missedTooMany = false;
  const k = (key: string) => namespace + key;
  const parse = <T>(raw: string | null): T | undefined => (raw === null ? undefined : (JSON.parse(raw) as T));
  const deliver = (fullChannel: string, message: string) => {
    for (const handler of handlers.get(fullChannel) ?? []) handler(message);
  };
  const missed = (pattern: string) => {
    if (missedDeletes.size >= MAX_MISSED_DELETES) missedTooMany = true;
    else missedDeletes.add(pattern);
  };
  const scanDelete = async (pattern: string) => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  };
  const subscribeAll = () => {
    if (subscriber?.status !== 'ready' || handlers.size === 0) return;
    subscriber.subscribe(...handlers.keys()).catch(() => undefined);
  };

  health.onRecovered(() => {
    const patterns = missedTooMany ? [`${namespace}*`] : [...missedDeletes];
    missedDeletes.clear();
    missedTooMany = false;
    void (async () => {
      for (const pattern of patterns) {
        if (pattern.endsWith('*')) await scanDelete(pattern).catch(() => undefined);
        else await redis.unlink(pattern).catch(() => undefined);
      }
    })();
    void local.deletePrefix('');
    for (const channel of handlers.keys()) deliver(channel, '*');
  });

  return {
    kind: 'redis',
    async get<T>(key: string) {
      if (!health.available()) return local.get<T>(key);
      try {
        return parse<T>(await redis.get(k(key)));
      } catch (error) {
        health.failed(error);
        return local.get<T>(key);
      }
    },
    async getMany<T>(keys: readonly string[]) {
      if (keys.length === 0) return [];
      if (!health.available()) return local.getMany<T>(keys);
      try {
        const raws = await redis.mget(keys.map(k));
        return raws.map((raw) => parse<T>(raw));
      } catch (error) {
        health.failed(error);
        return local.getMany<T>(keys);
      }
    },
    async set(key, value, ttlMs) {
      if (!health.available()) return local.set(key, value, ttlMs);
      try {
        await redis.set(k(key), JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs)));
      } catch (error) {
        // A cache write that fails only costs a recomputation later.
        health.failed(error);
        await local.set(key, value, ttlMs);
      }
    },
    async delete(key) {
      await local.delete(key);
      if (!health.available()) return missed(k(key));
      await redis.del(k(key)).catch((error: unknown) => {
        health.failed(error);
        missed(k(key));
      });
    },
    async deletePrefix(prefix) {
      await local.deletePrefix(prefix);
      if (!health.available()) return missed(`${k(prefix)}*`);
      await scanDelete(`${k(prefix)}*`).catch((error: unknown) => {
        health.failed(error);
        missed(`${k(prefix)}*`);
      });
    },
    async ping() {
      if (redis.status !== 'ready') return false;
      try {
        return (await redis.ping()) === 'PONG';
      } catch {
        return false;
      }
    },
    async publish(channel, message) {
      // Without Redis this process still hears its own invalidations; other instances catch up on recovery (`*`).
      if (!health.available()) return deliver(k(channel), message);
      await redis.publish(k(channel), message).catch((error: unknown) => {
        health.failed(error);
        deliver(k(channel), message);
      });
    },
    async subscribe(channel, handler) {
      if (!subscriber) {
        subscriber = redis.duplicate();
        subscriber.on('message', (fullChannel: string, message: string) => deliver(fullChannel, message));
        subscriber.on('error', () => undefined); // the shared monitor reports outages
        subscriber.on('ready', subscribeAll); // also after a reconnect, and when the first subscribe could not run
      }
      const set = handlers.get(k(channel)) ?? new Set();
      handlers.set(k(channel), set);
      set.add(handler);
      subscribeAll();
    },
    async close() {
      subscriber?.disconnect();
      handlers.clear();
      await local.close();
    },
  };
}
