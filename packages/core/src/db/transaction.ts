import type { Kysely, Transaction } from 'kysely';

/** Either the database or an open transaction: store functions accept both, the caller owns the transaction. */
export type Executor<DB> = Kysely<DB> | Transaction<DB>;

/**
 * Runs `work` in one transaction: it commits when `work` resolves and rolls back, leaving nothing behind,
 * when it throws.
 */
export function withTransaction<DB, T>(db: Kysely<DB>, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}
