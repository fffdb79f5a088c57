import { withTransaction } from '@keel/core';
import type { Kysely } from 'kysely';
import type { GeoDb } from '../db/schema.ts';
import { type EventRow, insertEvents } from './event-store.ts';

interface PendingWrite {
  rows: readonly EventRow[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

const MAX_GROUP_ROWS = 5000;

/**
 * Group commit for ingestion: batches that arrive while the previous commit is being written (or in the same
 * turn of the event loop) are inserted in one transaction. Each caller's promise resolves only after the
 * transaction holding its rows has committed, so "202 = durably stored" still holds batch by batch. If a group
 * fails, its batches are retried one by one so a single bad batch cannot fail the others.
 */
export class EventWriter {
  readonly #db: Kysely<GeoDb>;
  #pending: PendingWrite[] = [];
  #running = 0;
  readonly #maxConcurrent: number;

  /** `concurrency`: groups committed at once (SQLite serializes writers anyway; PostgreSQL commits in parallel). */
  constructor(db: Kysely<GeoDb>, concurrency = 4) {
    this.#db = db;
    this.#maxConcurrent = concurrency;
  }

  write(rows: readonly EventRow[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ rows, resolve, reject });
      if (this.#running < this.#maxConcurrent) {
        this.#running++;
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const group: PendingWrite[] = [];
        let size = 0;
        while (
          this.#pending.length > 0 &&
          (group.length === 0 || size + this.#pending[0]!.rows.length <= MAX_GROUP_ROWS)
        ) {
          const next = this.#pending.shift()!;
          group.push(next);
          size += next.rows.length;
        }
        try {
          await withTransaction(this.#db, async (trx) => {
            for (const write of group) await insertEvents(trx, write.rows);
          });
          for (const write of group) write.resolve();
        } catch (error) {
          if (group.length === 1) {
            group[0]!.reject(error);
            continue;
          }
          for (const write of group) {
            try {
              await withTransaction(this.#db, (trx) => insertEvents(trx, write.rows));
              write.resolve();
            } catch (single) {
              write.reject(single);
            }
          }
        }
      }
    } finally {
      this.#running--;
    }
  }
}
