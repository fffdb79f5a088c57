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
 * Products whose name holds every query term come first (tier 1), then the other matches (tier 2); within a
 * tier, name matches weigh most, then otherDetails, then description.
 */
export interface CatalogSearch {
  search(db: Executor<EngineDb>, request: SearchRequest): Promise<ProductRow[]>;
}

/** 1: every term in the name; 2: every other match. */
export type SearchTier = 1 | 2;

/**
 * Pages through the two tiers as one ranked list. Tier 1 is small (names are short), so a page that fits in it
 * never ranks the larger set of description and detail matches, which is where the time goes.
 */
export async function tieredSearch(
  request: SearchRequest,
  tiers: {
    rows(tier: SearchTier, limit: number, offset: number): Promise<ProductRow[]>;
    count(tier: SearchTier): Promise<number>;
  },
): Promise<ProductRow[]> {
  if (request.terms.length === 0 || request.storeIds.length === 0) return [];
  const first = await tiers.rows(1, request.limit, request.offset);
  if (first.length === request.limit) return first;
  // The page runs past tier 1: how far tier 1 reaches decides where tier 2 starts.
  const tier1Total = first.length > 0 || request.offset === 0 ? request.offset + first.length : await tiers.count(1);
  const rest = await tiers.rows(2, request.limit - first.length, Math.max(0, request.offset - tier1Total));
  return [...first, ...rest];
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
