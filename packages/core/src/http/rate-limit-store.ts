import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { RedisHealth } from '../cache/redis-health.ts';

type Callback = (error: Error | null, result: { current: number; ttl: number } | null) => void;

interface Store {
  incr(key: string, callback: Callback, timeWindow: number, max: number): void;
  read?(key: string, callback: Callback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): Store;
}

type StoreConstructor = new (...args: unknown[]) => Store;

// The plugin's own stores (CommonJS, without type declarations of their own).
const require = createRequire(import.meta.url);
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreConstructor;
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreConstructor;

/**
 * A rate-limit store for `@fastify/rate-limit` that counts in Redis while it answers and in process while it does
 * not: limits keep applying (per instance) during an outage, and no request waits for a Redis timeout.
 */
export function resilientRateLimitStore(redis: Redis, health: RedisHealth, nameSpace: string) {
  class ResilientStore implements Store {
    readonly shared: Store;
    readonly local: Store;
    constructor(params: { continueExceeding: boolean; exponentialBackoff: boolean }, shared?: Store, local?: Store) {
      this.shared = shared ?? new RedisStore(params.continueExceeding, params.exponentialBackoff, redis, nameSpace);
      this.local = local ?? new LocalStore(params.continueExceeding, params.exponentialBackoff, 5000);
    }
    incr(key: string, callback: Callback, timeWindow: number, max: number) {
      this.#run('incr', key, callback, timeWindow, max);
    }
    read(key: string, callback: Callback, timeWindow: number, max: number) {
      this.#run('read', key, callback, timeWindow, max);
    }
    child(routeOptions: unknown): Store {
      return new ResilientStore(
        { continueExceeding: false, exponentialBackoff: false },
        this.shared.child(routeOptions),
        this.local.child(routeOptions),
      );
    }
    #run(method: 'incr' | 'read', key: string, callback: Callback, timeWindow: number, max: number) {
      const local = () => this.local[method]!(key, callback, timeWindow, max);
      if (!health.available()) return local();
      this.shared[method]!(
        key,
        (error, result) => {
          if (!error) return callback(null, result);
          health.failed(error);
          local();
        },
        timeWindow,
        max,
      );
    }
  }
  return ResilientStore;
}
