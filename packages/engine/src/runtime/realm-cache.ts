import type { Cache } from '@keel/core';

const CHANNEL = 'runtime-realm-changed';
const TTL_MS = 5000;
const MAX_ENTRIES = 20_000;

/**
 * A short-lived in-process cache of a realm's configuration (agents, providers, prompts, key standing) for the
 * hot path. Every write calls `invalidate(realm)`, which is broadcast (through Redis when several instances
 * run), so a change is seen at once; the TTL bounds staleness if a broadcast is lost.
 */
export interface RealmCache {
  get<T>(realmId: string, key: string, load: () => Promise<T>): Promise<T>;
  invalidate(realmId: string): Promise<void>;
}

export async function createRealmCache(cache: Cache, clock: () => number): Promise<RealmCache> {
  const entries = new Map<string, { value: unknown; expiresAt: number; generation: number }>();
  const generations = new Map<string, number>();
  const drop = (realmId: string) => {
    generations.set(realmId, (generations.get(realmId) ?? 0) + 1);
    const prefix = `${realmId}|`;
    for (const key of entries.keys()) if (key.startsWith(prefix)) entries.delete(key);
  };
  // `*`: the shared cache lost its connection for a while and invalidations may be missing: drop every realm.
  await cache.subscribe(CHANNEL, (realmId) => {
    if (realmId !== '*') return drop(realmId);
    for (const id of new Set([...entries.keys()].map((key) => key.split('|', 1)[0]!))) drop(id);
  });
  return {
    async get<T>(realmId: string, key: string, load: () => Promise<T>): Promise<T> {
      const full = `${realmId}|${key}`;
      const now = clock();
      const generation = generations.get(realmId) ?? 0;
      const hit = entries.get(full);
      if (hit && hit.expiresAt > now && hit.generation === generation) return hit.value as T;
      const value = await load();
      // A write that happened while loading bumped the generation: do not keep the stale value.
      if ((generations.get(realmId) ?? 0) === generation) {
        if (entries.size >= MAX_ENTRIES) entries.clear();
        entries.set(full, { value, expiresAt: now + TTL_MS, generation });
      }
      return value;
    },
    async invalidate(realmId) {
      drop(realmId);
      await cache.publish(CHANNEL, realmId);
    },
  };
}
