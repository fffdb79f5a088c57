import { type Kysely, sql, type Transaction } from 'kysely';
import { dialectOf } from './dialect.ts';

export interface GroupCommit<DB> {
  /** Runs `work` in a transaction (possibly shared, see createGroupCommit) and answers once it has committed. */
  run<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T>;
}

interface Pending<DB> {
  work: (trx: Transaction<DB>) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit for SQLite. SQLite has one writer, and committing costs more than a small write, so writes that
 * arrive while another transaction is open wait and then run together in the next one, each inside its own
 * savepoint: a write that fails is rolled back alone and gets its own error; the rest commit together, and only
 * then does any of them answer. A write that finds nothing ahead of it runs alone, in a plain transaction. On
 * PostgreSQL, writes run concurrently on the pool, so each gets its own transaction.
 */
export function createGroupCommit<DB>(db: Kysely<DB>, options: { maxBatch?: number } = {}): GroupCommit<DB> {
  if (dialectOf(db) === 'postgres') return { run: (work) => db.transaction().execute(work) };
  // Reads wait for the one connection while a batch runs: the cap bounds that wait.
  const maxBatch = options.maxBatch ?? 32;
  const queue: Pending<DB>[] = [];
  let draining = false;

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

  async function drain(): Promise<void> {
    try {
      while (queue.length > 0) await runBatch(queue.splice(0, maxBatch));
    } finally {
      draining = false;
    }
  }

  return {
    run<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        if (draining) return;
        // node:sqlite answers synchronously, so a transaction never lets the event loop turn: start on the next
        // turn's check phase, after every request that arrived in this poll phase has queued its write.
        draining = true;
        setImmediate(drain);
      });
    },
  };
}
