import type { Kysely } from 'kysely';
import type { Cache } from '../cache/cache.ts';
import { pingDatabase } from '../db/open-database.ts';

/** What a readiness check says: `true` when its dependency answers, or why it does not. */
export type ReadinessOutcome = true | { reason: string };

/** A check of one dependency; it should answer quickly (each run is bounded anyway). */
export type ReadinessCheck = () => Promise<ReadinessOutcome | boolean> | ReadinessOutcome | boolean;

export interface ReadinessReport {
  ready: boolean;
  /** Every registered check, in registration order: `up`, or why it is down. */
  checks: { name: string; up: boolean; reason?: string }[];
}

export interface Readiness {
  /** Registers a named check (`database`, `cache`, a worker); a name registered again replaces the earlier check. */
  add(name: string, check: ReadinessCheck): void;
  /** Runs every check at once, each bounded by `timeoutMs`; a check that throws or times out is down. */
  run(timeoutMs?: number): Promise<ReadinessReport>;
}

/**
 * The list of readiness checks one process shares between its listeners. Each service registers its database,
 * its cache and its workers; every listener's readiness route runs the same list.
 */
export function createReadiness(): Readiness {
  const checks = new Map<string, ReadinessCheck>();
  return {
    add(name, check) {
      checks.set(name, check);
    },
    async run(timeoutMs = 2000) {
      const results = await Promise.all(
        [...checks].map(async ([name, check]) => {
          let timer: NodeJS.Timeout | undefined;
          try {
            const timeout = new Promise<ReadinessOutcome>((resolve) => {
              timer = setTimeout(() => resolve({ reason: 'timed out' }), timeoutMs);
            });
            const outcome = await Promise.race([Promise.resolve(check()), timeout]);
            if (outcome === true) return { name, up: true };
            return { name, up: false, reason: outcome === false ? 'unreachable' : outcome.reason };
          } catch {
            return { name, up: false, reason: 'unreachable' };
          } finally {
            clearTimeout(timer);
          }
        }),
      );
      return { ready: results.every((result) => result.up), checks: results };
    },
  };
}

/** The short text of a report that is not ready: `database unreachable, webhook-worker failing`. */
export function describeNotReady(report: ReadinessReport): string {
  return report.checks
    .filter((check) => !check.up)
    .map((check) => `${check.name} ${check.reason ?? 'unreachable'}`)
    .join(', ');
}

/** A readiness list with a service's two shared dependencies: `database` (a trivial query) and `cache` (a ping; Redis when configured). */
export function createServiceReadiness(dependencies: { db: Kysely<any>; cache: Cache }): Readiness {
  const readiness = createReadiness();
  readiness.add('database', () => pingDatabase(dependencies.db));
  readiness.add('cache', () => dependencies.cache.ping());
  return readiness;
}
