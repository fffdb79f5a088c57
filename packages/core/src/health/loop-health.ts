import { isDatabaseUnavailable } from '../db/connection-errors.ts';

export interface LoopLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface LoopHealth {
  /** Records a failed round and returns how long to wait before the next one (doubling up to the maximum). */
  failed(error: unknown): number;
  /** Records a round that succeeded. */
  succeeded(): void;
  /** The readiness of the loop: up unless its last round failed. */
  check(): true | { reason: string };
}

/**
 * Back-off and reporting for a background loop (outbox delivery, geo jobs, audit writes): a failed round waits
 * `baseMs`, then twice as long each time up to `maxMs`; the first failure of a streak is logged (a lost
 * database at warn, with its code only; anything else at error), then nothing until the loop recovers, which is
 * logged once. Readiness reports the loop as failing while its last round failed.
 */
export function createLoopHealth(
  name: string,
  log: LoopLogger | undefined,
  options: { baseMs?: number; maxMs?: number } = {},
): LoopHealth {
  const baseMs = options.baseMs ?? 1000;
  const maxMs = options.maxMs ?? 30_000;
  let failures = 0;
  return {
    failed(error) {
      failures++;
      if (failures === 1) {
        if (isDatabaseUnavailable(error)) {
          const e = error as { code?: string; message?: string };
          log?.warn(
            { worker: name, code: e.code, reason: String(e.message ?? '').slice(0, 200) },
            `${name}: the database is unreachable; retrying with back-off`,
          );
        } else {
          log?.error({ worker: name, err: error }, `${name}: a round failed; retrying with back-off`);
        }
      }
      return Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 16));
    },
    succeeded() {
      if (failures > 0) log?.info({ worker: name, failedRounds: failures }, `${name}: resumed`);
      failures = 0;
    },
    check() {
      return failures === 0 ? true : { reason: 'failing' };
    },
  };
}
