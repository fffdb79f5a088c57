import { Redis } from 'ioredis';
import type { Cache } from './cache.ts';

/** Opens an ioredis client that fails fast instead of queueing commands while Redis is away. */
export function connectRedis(url: string): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: 2000,
    commandTimeout: 2000,
    lazyConnect: false,
  });
}

/**
 * A cache shared by every instance through Redis. Keys live under `namespace`; errors count as misses so a
 * Redis outage slows requests down but never fails them (readiness reports it).
 */
export function createRedisCache(redis: Redis, namespace: string): Cache {
  let subscriber: Redis | undefined;
  const handlers = new Map<string, Set<(message: string) => void>>();
  const k = (key: string) => namespace + key;
  const parse = <T>(raw: string | null): T | undefined => (raw === null ? undefined : (JSON.parse(raw) as T));

  return {
    kind: 'redis',
    async get<T>(key: string) {
      try {
        return parse<T>(await redis.get(k(key)));
      } catch {
        return undefined;
      }
    },
    async getMany<T>(keys: readonly string[]) {
      if (keys.length === 0) return [];
      try {
        const raws = await redis.mget(keys.map(k));
        return raws.map((raw) => parse<T>(raw));
      } catch {
        return keys.map(() => undefined);
      }
    },
    async set(key, value, ttlMs) {
      try {
        await redis.set(k(key), JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs)));
      } catch {
        // A cache write that fails only costs a recomputation later.
      }
    },
    async delete(key) {
      await redis.del(k(key)).catch(() => undefined);
    },
    async deletePrefix(prefix) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${k(prefix)}*`, 'COUNT', 500);
        if (keys.length > 0) await redis.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
    },
    async ping() {
      try {
        return (await redis.ping()) === 'PONG';
      } catch {
        return false;
      }
    },
    async publish(channel, message) {
      await redis.publish(k(channel), message).catch(() => undefined);
    },
    async subscribe(channel, handler) {
      if (!subscriber) {
        subscriber = redis.duplicate();
        subscriber.on('message', (fullChannel: string, message: string) => {
          for (const h of handlers.get(fullChannel) ?? []) h(message);
        });
        subscriber.on('error', () => undefined);
      }
      const set = handlers.get(k(channel)) ?? new Set();
      handlers.set(k(channel), set);
      set.add(handler);
      await subscriber.subscribe(k(channel));
    },
    async close() {
      subscriber?.disconnect();
      handlers.clear();
    },
  };
}
