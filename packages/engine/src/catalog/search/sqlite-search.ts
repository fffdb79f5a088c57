import { type RawBuilder, sql } from 'kysely';
import type { ProductRow } from '../product-store.ts';
import { type CatalogSearch, type SearchTier, tieredSearch } from './index.ts';

/**
 * FTS5 over the external-content table `product_fts` (kept in step with `product` by triggers); `rank` is the
 * weighted bm25 configured by migration. Tier 1 is `{name} : (terms)`, tier 2 the other matches.
 */
export const sqliteSearch: CatalogSearch = {
  search(db, request) {
    const last = request.terms.length - 1;
    // Terms are letters and digits only; quoting makes each a plain phrase, the last a prefix.
    const terms = request.terms.map((term, i) => `"${term}"${i === last ? '*' : ''}`).join(' AND ');
    const expression: Record<SearchTier, string> = {
      1: `{name} : (${terms})`,
      2: `(${terms}) NOT ({name} : (${terms}))`,
    };
    const stores = sql.join(request.storeIds.map((id) => sql`${id}`));
    const status = request.status === undefined ? sql`` : sql`and p.status = ${request.status}`;
    const filtered = (tier: SearchTier, select: RawBuilder<unknown>) =>
      sql`select ${select} from product_fts f join product p on p.seq = f.rowid
          where product_fts match ${expression[tier]} and p.store_id in (${stores}) ${status}`;
    return tieredSearch(request, {
      async rows(tier, limit, offset) {
        const result = await sql<ProductRow>`${filtered(tier, sql`p.*`)}
          order by f.rank, p.seq limit ${limit} offset ${offset}`.execute(db);
        return result.rows;
      },
      async count(tier) {
        const result = await sql<{ n: number }>`${filtered(tier, sql`count(*) as n`)}`.execute(db);
        return Number(result.rows[0]?.n ?? 0);
      },
    });
  },
};
