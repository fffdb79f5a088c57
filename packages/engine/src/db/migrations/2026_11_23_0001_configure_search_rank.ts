import { dialectOf } from '@keel/core';
import { type Kysely, sql } from 'kysely';

/**
 * SQLite: make FTS5's `rank` column the weighted bm25 (name 10, description 1, otherDetails 4), so searches can
 * `order by rank` and use FTS5's top-N path instead of calling bm25() for every match. PostgreSQL: nothing to do.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return;
  await sql`insert into product_fts(product_fts, rank) values ('rank', 'bm25(10.0, 1.0, 4.0)')`.execute(db);
}
