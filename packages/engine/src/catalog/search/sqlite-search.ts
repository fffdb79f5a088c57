import { type RawBuilder, sql } from 'kysely';
import type { ProductRow } from '../product-store.ts';
import { type CatalogSearch, type SearchTier, tieredSearch } from './index.ts';

/** Pages reaching at most this deep try ranking inside FTS5 first. */
const RANK_FIRST_MAX = 500;
/** The fewest ranked matches fetched in that first attempt. */
const RANK_WINDOW_MIN = 200;

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
    /**
     * Ranks inside FTS5 alone (half the cost of ranking through the join), then keeps the rows in scope. The page
     * is exact when the window holds every match or enough in-scope rows; otherwise undefined (rank via the join).
     */
    const rankedInFts = async (tier: SearchTier, limit: number, offset: number) => {
      const wanted = offset + limit;
      const window = Math.max(RANK_WINDOW_MIN, wanted * 4);
      const ranked = await sql<{ seq: number }>`select rowid as seq from product_fts
        where product_fts match ${expression[tier]} order by rank, rowid limit ${window + 1}`.execute(db);
      const seqs = ranked.rows.slice(0, window).map((row) => Number(row.seq));
      if (seqs.length === 0) return [];
      const found = await sql<ProductRow>`select p.* from product p where p.seq in (${sql.join(seqs)})
        and p.store_id in (${stores}) ${status}`.execute(db);
      const bySeq = new Map(found.rows.map((row) => [Number(row.seq), row]));
      const inScope = seqs.flatMap((seq) => bySeq.get(seq) ?? []);
      return inScope.length >= wanted || ranked.rows.length <= window ? inScope.slice(offset, wanted) : undefined;
    };
    return tieredSearch(request, {
      async rows(tier, limit, offset) {
        const page = offset + limit <= RANK_FIRST_MAX ? await rankedInFts(tier, limit, offset) : undefined;
        if (page) return page;
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
