import { type RawBuilder, sql } from 'kysely';
import type { ProductRow } from '../product-store.ts';
import { type CatalogSearch, type SearchTier, tieredSearch } from './index.ts';

/**
 * FTS5 over the external-content table `product_fts` (kept in step with `product` by triggers); `rank` is the
 * weighted bm25 configured by migration. Tier 1 is `{name} : (terms)`, tier 2 the other matches.
 */
/** Pages reaching at most this deep try ranking inside FTS5 first. */
const RANK_FIRST_MAX = 500;
/** The fewest ranked matches fetched in that first attempt. */
const RANK_WINDOW_MIN = 200;

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
        const wanted = offset + limit;
        if (wanted <= RANK_FIRST_MAX) {
          // Rank inside FTS5 alone (half the cost of ranking through the join), then keep the rows in scope. When
          // the window holds every match or enough in-scope rows, the page is exact; otherwise rank through the join.
          const window = Math.max(RANK_WINDOW_MIN, wanted * 4);
          const ranked = await sql<{ seq: number }>`select rowid as seq from product_fts
            where product_fts match ${expression[tier]} order by rank, rowid limit ${window + 1}`.execute(db);
          const seqs = ranked.rows.slice(0, window).map((row) => Number(row.seq));
          const found =
            seqs.length === 0
              ? []
              : (
                  await sql<ProductRow>`select p.* from product p where p.seq in (${sql.join(seqs)})
                    and p.store_id in (${stores}) ${status}`.execute(db)
                ).rows;
          const bySeq = new Map(found.map((row) => [Number(row.seq), row]));
          const inScope = seqs.flatMap((seq) => bySeq.get(seq) ?? []);
          if (inScope.length >= wanted || ranked.rows.length <= window) return inScope.slice(offset, wanted);
        }
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
