import { AsyncResource } from 'node:async_hooks';
import { type Kysely, sql, type Transaction } from 'kysely';
import { dialectOf } from './dialect.ts';

export interface GroupCommit<DB> {
  /**
   * Runs `work` in a transaction (possibly shared, see createGroupCommit) and answers once it has committed.
   * `weight` (default 1) counts against the group's `maxWeight`, e.g. the rows the write inserts.
   */
  run<T>(work: (trx: Transaction<DB>) => Promise<T>, weight?: number): Promise<T>;
}

export interface GroupCommitOptions {
  /** Writes per shared transaction at most (default 32): reads wait for SQLite's one connection while a group runs. */
  maxBatch?: number;
  /** The summed weight of a group at most (default unbounded); a heavier single write still runs, alone. */
  maxWeight?: number;
  /**
   * Group on PostgreSQL too, with up to this many groups committing at once (default: no grouping there, each write
   * has its own transaction). For high-rate small inserts, where a commit costs more than the write.
   */
  postgresGroups?: number;
}

interface Pending<DB> {
  work: (trx: Transaction<DB>) => Promise<unknown>;
  weight: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit for SQLite. SQLite has one writer, and committing costs more than a small write, so writes that
 * arrive while another transaction is open wait and then run together in the next one, each inside its own
 * savepoint: a write that fails is rolled back alone and gets its own error; the rest commit together, and only
 * then does any of them answer. A write that finds nothing ahead of it runs alone, in a plain transaction. On
 * PostgreSQL, writes run concurrently on the pool, so each gets its own transaction, unless `postgresGroups` asks
 * for groups there too (then up to that many groups commit at once).
 */
export function createGroupCommit<DB>(db: Kysely<DB>, options: GroupCommitOptions = {}): GroupCommit<DB> {
  const postgres = dialectOf(db) === 'postgres';
  if (postgres && options.postgresGroups === undefined) return { run: (work) => db.transaction().execute(work) };
  // Reads wait for the one connection while a batch runs: the cap bounds that wait.
  const maxBatch = options.maxBatch ?? 32;
  const maxWeight = options.maxWeight ?? Number.POSITIVE_INFINITY;
  // SQLite has one writer: one group at a time. PostgreSQL commits groups in parallel.
  const maxDrains = postgres ? Math.max(1, options.postgresGroups ?? 1) : 1;
  const queue: Pending<DB>[] = [];
  let drains = 0;

  async function runBatch(batch: Pending<DB>[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch as [Pending<DB>];
      try {
        only.resolve(await db.transaction().execute(only.work));
      } catch (error) {
        only.reject(error);
      }
      return;
    }
    const outcomes: Outcome[] = [];
    try {
      await db.transaction().execute(async (trx) => {
        for (const entry of batch) {
          await sql`savepoint keel_write`.execute(trx);
          try {
            const value = await entry.work(trx);
            await sql`release keel_write`.execute(trx);
            outcomes.push({ ok: true, value });
          } catch (error) {
            await sql`rollback to keel_write`.execute(trx);
            await sql`release keel_write`.execute(trx);
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // The transaction itself failed (commit or rollback to a savepoint): nothing of the batch was written.
      for (const entry of batch) entry.reject(error);
      return;
    }
    batch.forEach((entry, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  }

  function nextBatch(): Pending<DB>[] {
    const batch: Pending<DB>[] = [];
    let weight = 0;
    while (
      queue.length > 0 &&
      batch.length < maxBatch &&
      (batch.length === 0 || weight + queue[0]!.weight <= maxWeight)
    ) {
      const next = queue.shift()!;
      weight += next.weight;
      batch.push(next);
    }
    return batch;
  }

  async function drain(): Promise<void> {
    try {
      while (queue.length > 0) await runBatch(nextBatch());
    } finally {
      drains--;
    }
  }

  return {
    run<T>(work: (trx: Transaction<DB>) => Promise<T>, weight = 1): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        // Each write runs in its caller's async context (AsyncLocalStorage: the request's trace span, its realm),
        // not in the context of whichever write started the drain.
        queue.push({ work: AsyncResource.bind(work), weight, resolve: resolve as (value: unknown) => void, reject });
        if (drains >= maxDrains) return;
        // node:sqlite answers synchronously, so a transaction never lets the event loop turn: start on the next
        // turn's check phase, after every request that arrived in this poll phase has queued its write.
        drains++;
        setImmediate(drain);
      });
    },
  };
}
