import type { Executor } from '@keel/core';
import { dialectOf } from '@keel/core';
import type { Kysely } from 'kysely';
import type { EngineDb } from '../../db/schema.ts';
import type { ProductRow } from '../product-store.ts';
import { postgresSearch } from './postgres-search.ts';
import { sqliteSearch } from './sqlite-search.ts';

export interface SearchRequest {
  storeIds: readonly string[];
  /** Normalised terms from `searchTerms`; every one must match (the last as a prefix). */
  terms: readonly string[];
  status?: string | undefined;
  limit: number;
  offset: number;
}

/**
 * Ranked full-text search over name, description and otherDetails. One interface, two implementations:
 * SQLite FTS5 (bm25) and PostgreSQL tsvector + GIN (ts_rank_cd); chosen once per database by `dialectOf`.
 * Name matches weigh most, then otherDetails, then description.
 */
export interface CatalogSearch {
  search(db: Executor<EngineDb>, request: SearchRequest): Promise<ProductRow[]>;
}

export function createCatalogSearch(db: Kysely<EngineDb>): CatalogSearch {
  return dialectOf(db) === 'postgres' ? postgresSearch : sqliteSearch;
}

/** Splits a query into at most 16 lower-cased letter/digit terms of at most 64 characters (no operators survive). */
export function searchTerms(q: string): string[] {
  const terms =
    q
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return terms.slice(0, 16).map((term) => term.slice(0, 64));
}
