import type { Cache, Executor } from '@keel/core';
import { toBoolean } from '@keel/core';
import type { FastifyBaseLogger } from 'fastify';
import type { GuardDb } from '../db/schema.ts';
import { compileDetector, compileUserRegex, isUnmodifiedBuiltin } from '../detect/index.ts';
import type { Detector, EngineSettings, PatternSpec } from '../detect/types.ts';
import { listItems } from '../lists/list-store.ts';
import { listPatterns } from '../patterns/pattern-store.ts';
import type { UserPatternSet } from '../sandbox/user-work.ts';
import { type CompiledValidator, compileValidator } from '../validators/compile-validator.ts';
import { listValidators } from '../validators/validator-store.ts';

/** What a /detect request needs, compiled once from the stored patterns, lists and validators. */
export interface ActiveConfig {
  detector: Detector;
  /** The patterns that are not unmodified built-ins: guard runs them in its worker threads. */
  userPatterns: UserPatternSet | undefined;
  validators: ReadonlyMap<string, CompiledValidator>;
}

export interface ActiveConfigCache {
  /** The current configuration; rebuilt from the database after any change. */
  get(): Promise<ActiveConfig>;
  /** Drops the compiled configuration here and, through the shared cache, on every other instance. */
  invalidate(): Promise<void>;
}

const CHANNEL = 'config-changed';
/** Numbers each build, so the workers know when a set of user patterns is new. */
let configBuilds = 0;

/** A stored regex that no longer compiles (say, after a library upgrade) is skipped and named in the log, not fatal. */
function compiles(pattern: PatternSpec, log: FastifyBaseLogger): boolean {
  if (isUnmodifiedBuiltin(pattern)) return true;
  try {
    compileUserRegex(pattern.regex);
    return true;
  } catch {
    log.error({ pattern: pattern.name }, 'stored pattern does not compile; it is skipped until fixed');
    return false;
  }
}

async function loadActiveConfig(
  db: Executor<GuardDb>,
  settings: EngineSettings,
  log: FastifyBaseLogger,
): Promise<ActiveConfig> {
  const [patterns, allowlist, blocklist, validators] = await Promise.all([
    listPatterns(db),
    listItems(db, 'allowlist_item'),
    listItems(db, 'blacklist_item'),
    listValidators(db),
  ]);
  const specs = patterns
    .filter((p) => toBoolean(p.is_active))
    .map((p) => ({
      name: p.name,
      regex: p.regex,
      category: p.category,
      allowThreshold: p.allow_threshold,
      blockThreshold: p.block_threshold,
    }))
    .filter((p) => compiles(p, log));
  const userSpecs = specs.filter((p) => !isUnmodifiedBuiltin(p));
  const detector = compileDetector({
    patterns: specs,
    allowlist: allowlist.map((item) => item.value),
    blocklist: blocklist.map((item) => item.value),
    settings,
  });
  const compiled = new Map<string, CompiledValidator>();
  for (const row of validators) {
    try {
      compiled.set(row.name, compileValidator(row));
    } catch {
      log.error({ validator: row.name }, 'stored validator does not compile; it is skipped until fixed');
    }
  }
  return {
    detector,
    userPatterns: userSpecs.length > 0 ? { key: String(++configBuilds), specs: userSpecs } : undefined,
    validators: compiled,
  };
}

/**
 * Keeps the compiled configuration in memory. A change anywhere bumps a generation number, so a rebuild that
 * started before the change is never kept as current.
 */
export async function createActiveConfigCache(
  db: Executor<GuardDb>,
  cache: Cache,
  settings: EngineSettings,
  log: FastifyBaseLogger,
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
      const built = { generation, promise: loadActiveConfig(db, settings, log) };
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
