import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { watchRedis } from './redis-health.ts';

/** A fixed window's running total and when the window ends (epoch ms). */
export interface WindowCount {
  total: number;
  resetAt: number;
}

/**
 * Counters per fixed time window (aligned to the epoch), shared by every instance through Redis when a client is
 * given and it answers (`INCRBY` + `PEXPIRE` in one `MULTI`), counted in process otherwise — and, like the cache and
 * the rate limiter, in process at once while Redis is unreachable (limits keep applying per instance; no request
 * waits for a Redis timeout). Amounts are integers.
 */
export interface WindowCounters {
  readonly shared: boolean;
  /** Adds `amount` (0 reads) to each key's counter of the current window; answers the totals in the same order. */
  add(entries: readonly { key: string; amount: number }[], windowMs: number): Promise<WindowCount[]>;
}

export function createWindowCounters(options: { redis?: Redis | undefined; namespace: string }): WindowCounters {
  const local = new LRUCache<string, { total: number }>({ max: 100_000, ttlAutopurge: false });
  const { redis, namespace } = options;
  const health = redis ? watchRedis(redis) : undefined;

  const addLocally = (keys: readonly string[], amounts: readonly number[], ttlMs: number) =>
    keys.map((key, i) => {
      const entry = local.get(key) ?? { total: 0 };
      entry.total += amounts[i]!;
      local.set(key, entry, { ttl: ttlMs });
      return entry.total;
    });

  return {
    shared: redis !== undefined,
    async add(entries, windowMs) {
      const now = Date.now();
      const start = now - (now % windowMs);
      const resetAt = start + windowMs;
      // The window length is part of the key: windows of another length never share a count.
      const keys = entries.map((e) => `${namespace}${e.key}:${windowMs}:${start}`);
      const amounts = entries.map((e) => Math.round(e.amount));
      const ttlMs = resetAt - now + 1000;
      let totals: number[] | undefined;
      if (redis && health?.available()) {
        try {
          const multi = redis.multi();
          keys.forEach((key, i) => {
            multi.incrby(key, amounts[i]!);
            multi.pexpire(key, ttlMs);
          });
          const replies = (await multi.exec()) ?? [];
          totals = keys.map((_, i) => {
            const [error, value] = replies[i * 2] ?? [new Error('no reply'), null];
            if (error) throw error;
            return Number(value);
          });
        } catch (error) {
          health.failed(error);
        }
      }
      totals ??= addLocally(keys, amounts, ttlMs);
      return totals.map((total) => ({ total, resetAt }));
    },
  };
}
