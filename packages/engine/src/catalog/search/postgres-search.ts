import { sql } from 'kysely';
import type { ProductRow } from '../product-store.ts';
import { type CatalogSearch, type SearchTier, tieredSearch } from './index.ts';

/**
 * tsvector (generated column `search_vector`, weights A name, B otherDetails, C description) with a GIN index,
 * ranked by ts_rank_cd. Tier 1 restricts every term to weight A (the name), tier 2 is the rest.
 */
export const postgresSearch: CatalogSearch = {
  search(db, request) {
    const last = request.terms.length - 1;
    // Terms are letters and digits only, so they cannot carry tsquery operators; the last one is a prefix.
    const all = request.terms.map((term, i) => (i === last ? `${term}:*` : term)).join(' & ');
    const inName = request.terms.map((term, i) => (i === last ? `${term}:*A` : `${term}:A`)).join(' & ');
    const query: Record<SearchTier, string> = { 1: inName, 2: `(${all}) & !(${inName})` };
    const stores = sql.join(request.storeIds.map((id) => sql`${id}`));
    const status = request.status === undefined ? sql`` : sql`and p.status = ${request.status}`;
    return tieredSearch(request, {
      async rows(tier, limit, offset) {
        const result = await sql<ProductRow & { search_vector?: unknown; rank?: unknown }>`
          select p.*, ts_rank_cd(p.search_vector, q.query) as rank
          from product p, to_tsquery('english', ${query[tier]}) as q(query)
          where p.search_vector @@ q.query and p.store_id in (${stores}) ${status}
          order by rank desc, p.seq
          limit ${limit} offset ${offset}`.execute(db);
        return result.rows.map(({ search_vector: _vector, rank: _rank, ...row }) => row as ProductRow);
      },
      async count(tier) {
        const result = await sql<{ n: string | number }>`
          select count(*) as n from product p, to_tsquery('english', ${query[tier]}) as q(query)
          where p.search_vector @@ q.query and p.store_id in (${stores}) ${status}`.execute(db);
        return Number(result.rows[0]?.n ?? 0);
      },
    });
  },
};
