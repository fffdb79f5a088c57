import type { Executor } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';

/** The realm's providers by name (at most `limit` rows). */
export function listRealmProviders(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('ai_provider')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('name')
    .limit(limit)
    .execute();
}

/** The realm's prompt versions by key and version (at most `limit` rows). */
export function listRealmPrompts(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('prompt')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('key')
    .orderBy('version')
    .limit(limit)
    .execute();
}

/** The realm's tool servers by name (at most `limit` rows). */
export function listRealmToolServers(db: Executor<EngineDb>, realmId: string, limit: number) {
  return db
    .selectFrom('tool_server')
    .selectAll()
    .where('realm_id', '=', realmId)
    .orderBy('name')
    .limit(limit)
    .execute();
}
