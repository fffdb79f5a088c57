import type { Redis } from 'ioredis';
import type { Cache } from './cache.ts';
import { createMemoryCache } from './memory-cache.ts';
import { connectRedis, createRedisCache } from './redis-cache.ts';
import { watchRedis } from './redis-health.ts';

export interface OpenedCache {
  cache: Cache;
  /** The Redis client, when there is one, for rate limits and other shared counters. */
  redis: Redis | undefined;
  close(): Promise<void>;
}

/**
 * The in-process cache, or Redis when a URL is given; keys are namespaced per service. Redis being unreachable
 * never stops start-up or fails a request: one warning names REDIS_URL, caches and rate limits run in-process
 * until Redis answers again, and readiness reports the cache as unreachable meanwhile.
 */
export function openCache(options: { redisUrl?: string | undefined; service: string }): OpenedCache {
  if (!options.redisUrl) {
    const cache = createMemoryCache();
    return { cache, redis: undefined, close: () => cache.close() };
  }
  const redis = connectRedis(options.redisUrl);
  const health = watchRedis(redis);
  const cache = createRedisCache(redis, `keel:${options.service}:`, health);
  return {
    cache,
    redis,
    close: async () => {
      await cache.close();
      redis.disconnect();
    },
  };
}
