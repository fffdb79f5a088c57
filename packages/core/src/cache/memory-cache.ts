import { LRUCache } from 'lru-cache';
import { workerBroadcast } from '../cluster/workers.ts';
import type { Cache } from './cache.ts';

/**
 * The in-process cache: an LRU bounded by entry count, with a TTL per entry. Inside a cluster worker its
 * publish/subscribe also reaches the other workers (through the primary), so an invalidation is seen by all.
 */
export function createMemoryCache(options: { maxEntries?: number } = {}): Cache {
  const lru = new LRUCache<string, { value: unknown }>({ max: options.maxEntries ?? 50_000 });
  const handlers = new Map<string, Set<(message: string) => void>>();
  const deliver = (channel: string, message: string) => {
    for (const handler of handlers.get(channel) ?? []) handler(message);
  };
  const siblings = workerBroadcast();
  siblings?.onMessage(deliver);
  return {
    kind: 'memory',
    async get<T>(key: string) {
      return lru.get(key)?.value as T | undefined;
    },
    async getMany<T>(keys: readonly string[]) {
      return keys.map((key) => lru.get(key)?.value as T | undefined);
    },
    async set(key, value, ttlMs) {
      lru.set(key, { value }, { ttl: ttlMs });
    },
    async delete(key) {
      lru.delete(key);
    },
    async deletePrefix(prefix) {
      for (const key of [...lru.keys()]) if (key.startsWith(prefix)) lru.delete(key);
    },
    async ping() {
      return true;
    },
    async publish(channel, message) {
      deliver(channel, message);
      siblings?.send(channel, message);
    },
    async subscribe(channel, handler) {
      const set = handlers.get(channel) ?? new Set();
      handlers.set(channel, set);
      set.add(handler);
    },
    async close() {
      lru.clear();
      handlers.clear();
    },
  };
}
