import { createGroupCommit, type GroupCommit } from '@keel/core';
import type { Kysely } from 'kysely';
import type { GeoDb } from '../db/schema.ts';
import { type EventRow, insertEvents } from './event-store.ts';

const MAX_GROUP_ROWS = 5000;

/**
 * Ingestion on core's group commit: batches that arrive while the previous commit is being written (or in the same
 * turn of the event loop) are inserted in one transaction, up to 5,000 rows, each batch in its own savepoint. Each
 * caller's promise resolves only after the transaction holding its rows has committed, so "202 = durably stored"
 * still holds batch by batch, and a bad batch fails alone.
 */
export class EventWriter {
  readonly #writes: GroupCommit<GeoDb>;

  /** `concurrency`: groups committed at once on PostgreSQL (SQLite has one writer, so one group at a time). */
  constructor(db: Kysely<GeoDb>, concurrency = 4) {
    this.#writes = createGroupCommit(db, { maxBatch: 1000, maxWeight: MAX_GROUP_ROWS, postgresGroups: concurrency });
  }

  /** Inserts the rows; resolves once they are committed. */
  write(rows: readonly EventRow[]): Promise<void> {
    return this.#writes.run((trx) => insertEvents(trx, rows), rows.length);
  }
}
