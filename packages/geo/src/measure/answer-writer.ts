import { withTransaction } from '@keel/core';
import type { Insertable, Kysely } from 'kysely';
import type { GeoDb, MeasureAnswerTable } from '../db/schema.ts';
import { insertAnswers } from './measure-store.ts';

const MAX_BATCH = 100; // 16 columns × 100 rows stays under every engine's bound-parameter limit

/**
 * Stores answers durably, batching those that arrive together: `write` resolves only after the transaction holding
 * the answer has committed (so a run's worker never takes its next task before its answer is stored), and answers
 * completing while a commit is under way share the next one. A task that already has an answer keeps it (the unique
 * task index; a resumed run can never store a task twice).
 */
export class AnswerWriter {
  readonly #db: Kysely<GeoDb>;
  #queue: { row: Insertable<MeasureAnswerTable>; resolve(): void; reject(error: unknown): void }[] = [];
  #flushing = false;

  constructor(db: Kysely<GeoDb>) {
    this.#db = db;
  }

  write(row: Insertable<MeasureAnswerTable>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ row, resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        try {
          await withTransaction(this.#db, (trx) =>
            insertAnswers(
              trx,
              batch.map((entry) => entry.row),
            ),
          );
          for (const entry of batch) entry.resolve();
        } catch (error) {
          for (const entry of batch) entry.reject(error);
        }
      }
    } finally {
      this.#flushing = false;
    }
  }
}
