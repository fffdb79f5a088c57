import type { Cache, Executor } from '@keel/core';
import { toBoolean } from '@keel/core';
import type { GuardDb } from '../db/schema.ts';
import { compileDetector } from '../detect/index.ts';
import type { Detector, EngineSettings } from '../detect/types.ts';
import { listItems } from '../lists/list-store.ts';
import { listPatterns } from '../patterns/pattern-store.ts';
import { type CompiledValidator, compileValidator } from '../validators/compile-validator.ts';
import { listValidators } from '../validators/validator-store.ts';

/** What a /detect request needs, compiled once from the stored patterns, lists and validators. */
export interface ActiveConfig {
  detector: Detector;
  validators: ReadonlyMap<string, CompiledValidator>;
}

export interface ActiveConfigCache {
  /** The current configuration; rebuilt from the database after any change. */
  get(): Promise<ActiveConfig>;
  /** Drops the compiled configuration here and, through the shared cache, on every other instance. */
  invalidate(): Promise<void>;
}

const CHANNEL = 'config-changed';

async function loadActiveConfig(db: Executor<GuardDb>, settings: EngineSettings): Promise<ActiveConfig> {
  const [patterns, allowlist, blocklist, validators] = await Promise.all([
    listPatterns(db),
    listItems(db, 'allowlist_item'),
    listItems(db, 'blacklist_item'),
    listValidators(db),
  ]);
  const detector = compileDetector({
    patterns: patterns
      .filter((p) => toBoolean(p.is_active))
      .map((p) => ({
        name: p.name,
        regex: p.regex,
        category: p.category,
        allowThreshold: p.allow_threshold,
        blockThreshold: p.block_threshold,
      })),
    allowlist: allowlist.map((item) => item.value),
    blocklist: blocklist.map((item) => item.value),
    settings,
  });
  return { detector, validators: new Map(validators.map((row) => [row.name, compileValidator(row)])) };
}

/**
 * Keeps the compiled configuration in memory. A change anywhere bumps a generation number, so a rebuild that
 * started before the change is never kept as current.
 */
export async function createActiveConfigCache(
  db: Executor<GuardDb>,
  cache: Cache,
  settings: EngineSettings,
): Promise<ActiveConfigCache> {
  let generation = 0;
  let current: { generation: number; promise: Promise<ActiveConfig> } | undefined;

  const dropLocal = () => {
    generation++;
    current = undefined;
  };
  await cache.subscribe(CHANNEL, dropLocal);

  return {
    get() {
      if (current && current.generation === generation) return current.promise;
      const built = { generation, promise: loadActiveConfig(db, settings) };
      current = built;
      built.promise.catch(() => {
        if (current === built) current = undefined;
      });
      return built.promise;
    },
    async invalidate() {
      dropLocal();
      // With Redis every instance hears this; the in-process cache calls dropLocal once more, which is harmless.
      await cache.publish(CHANNEL, String(Date.now()));
    },
  };
}
