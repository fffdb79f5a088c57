import { sql } from 'kysely';
import type { ProductRow } from '../product-store.ts';
import type { CatalogSearch } from './index.ts';

/** tsvector (generated column `search_vector`, weights A name, B otherDetails, C description) with a GIN index. */
export const postgresSearch: CatalogSearch = {
  async search(db, request) {
    if (request.terms.length === 0 || request.storeIds.length === 0) return [];
    const last = request.terms.length - 1;
    // Terms are letters and digits only, so they cannot carry tsquery operators; the last one is a prefix.
    const query = request.terms.map((term, i) => (i === last ? `${term}:*` : term)).join(' & ');
    const stores = sql.join(request.storeIds.map((id) => sql`${id}`));
    const status = request.status === undefined ? sql`` : sql`and p.status = ${request.status}`;
    const result = await sql<ProductRow & { search_vector?: unknown }>`
      select p.*, ts_rank_cd(p.search_vector, q.query) as rank
      from product p, to_tsquery('english', ${query}) as q(query)
      where p.search_vector @@ q.query and p.store_id in (${stores}) ${status}
      order by rank desc, p.seq
      limit ${request.limit} offset ${request.offset}`.execute(db);
    return result.rows.map(
      ({ search_vector: _vector, rank: _rank, ...row }: ProductRow & { search_vector?: unknown; rank?: unknown }) =>
        row as ProductRow,
    );
  },
};
