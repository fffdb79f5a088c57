import { sql } from 'kysely';
import type { ProductRow } from '../product-store.ts';
import type { CatalogSearch } from './index.ts';

/** FTS5 over the external-content table `product_fts` (kept in step with `product` by triggers). */
export const sqliteSearch: CatalogSearch = {
  async search(db, request) {
    if (request.terms.length === 0 || request.storeIds.length === 0) return [];
    const last = request.terms.length - 1;
    // Terms are letters and digits only; quoting makes each a plain phrase, the last a prefix.
    const match = request.terms.map((term, i) => `"${term}"${i === last ? '*' : ''}`).join(' AND ');
    const stores = sql.join(request.storeIds.map((id) => sql`${id}`));
    const status = request.status === undefined ? sql`` : sql`and p.status = ${request.status}`;
    const result = await sql<ProductRow>`
      select p.* from product_fts f join product p on p.seq = f.rowid
      where product_fts match ${match} and p.store_id in (${stores}) ${status}
      order by bm25(product_fts, 10.0, 1.0, 4.0), p.seq
      limit ${request.limit} offset ${request.offset}`.execute(db);
    return result.rows;
  },
};
