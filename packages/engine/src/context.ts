import type { Cache, GroupCommit, SecretBox } from '@keel/core';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { CatalogActivity } from './anonymous/catalog-events.ts';
import type { CatalogSearch } from './catalog/search/index.ts';
import type { EngineConfig } from './config.ts';
import type { EngineDb } from './db/schema.ts';
import type { PrincipalCache } from './merchants/principal.ts';
import type { DestinationCache } from './webhooks/destination-cache.ts';

/** What the engine's service functions work with; built once per process and shared by the three listeners. */
export interface EngineContext {
  config: EngineConfig;
  db: Kysely<EngineDb>;
  cache: Cache;
  secrets: SecretBox;
  principals: PrincipalCache;
  destinations: DestinationCache;
  search: CatalogSearch;
  /** Business writes go through here: on SQLite, concurrent ones share a commit (group commit). */
  writes: GroupCommit<EngineDb>;
  /** Wakes the delivery worker after a commit that wrote outbox messages. */
  notifyOutbox(): void;
  /** The catalog's anonymous events (set by the runtime; called after the fact, never awaited). */
  catalogActivity?: CatalogActivity | undefined;
  log: FastifyBaseLogger;
}
