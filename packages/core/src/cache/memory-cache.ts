import { LRUCache } from 'lru-cache';
import type { Cache } from './cache.ts';

/** The in-process cache: an LRU bounded by entry count, with a TTL per entry. */
export function createMemoryCache(options: { maxEntries?: number } = {}): Cache {
  const lru = new LRUCache<string, { value: unknown }>({ max: options.maxEntries ?? 50_000 });
  const handlers = new Map<string, Set<(message: string) => void>>();
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
      for (const handler of handlers.get(channel) ?? []) handler(message);
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
