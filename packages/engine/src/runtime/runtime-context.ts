import {
  type Cache,
  type ConcurrencySlots,
  createConcurrencySlots,
  createWindowCounters,
  type SecretBox,
  type WindowCounters,
} from '@keel/core';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { RuntimeConfig } from '../config.ts';
import type { EngineContext } from '../context.ts';
import type { EngineDb } from '../db/schema.ts';
import { createRuntimePrincipals, type RuntimePrincipals } from '../identity/runtime-auth.ts';
import { createTokenService, deriveSigningKeyHex, type TokenService } from '../identity/tokens.ts';
import { createModelClients, type ModelClients } from '../providers/model-clients.ts';
import { createExtensionRegistry, type RuntimeExtensions } from './extensions.ts';
import { createRealmCache, type RealmCache } from './realm-cache.ts';
import { createSensitiveDataScanner, type SensitiveDataScanner } from './sensitive-data.ts';

/** What the runtime's services work with; built once per process beside the catalog's EngineContext. */
export interface RuntimeContext {
  engine: EngineContext;
  db: Kysely<EngineDb>;
  cache: Cache;
  secrets: SecretBox;
  config: RuntimeConfig;
  allowPrivateUrls: boolean;
  tokens: TokenService;
  principals: RuntimePrincipals;
  realms: RealmCache;
  models: ModelClients;
  scanner: SensitiveDataScanner;
  /** Where flows, tool servers and governance plug in (later issues); empty by default. */
  extensions: RuntimeExtensions;
  /**
   * Chat and execute turns in flight per agent (its `max_concurrency`): shared by every instance through Redis when
   * REDIS_URL is set, in process otherwise.
   */
  turns: ConcurrencySlots;
  /** Windowed counters of the realm quotas: shared through Redis when REDIS_URL is set, in process otherwise. */
  counters: WindowCounters;
  clock: () => number;
  readonly log: FastifyBaseLogger;
}

export interface RuntimeContextOptions {
  /** HS256 key for bearer tokens; derived from the secret-box key when not given. */
  tokenSigningKeyHex?: string | undefined;
  secretKeyHex: string;
  clock?: (() => number) | undefined;
  /** The Redis client (REDIS_URL), for counters and turn slots shared by every instance. */
  redis?: Redis | undefined;
}

/** Builds the runtime's context on the engine's shared one. */
export async function createRuntimeContext(
  engine: EngineContext,
  options: RuntimeContextOptions,
): Promise<RuntimeContext> {
  const clock = options.clock ?? Date.now;
  const config = engine.config.runtime;
  const tokens = createTokenService({
    signingKeyHex: options.tokenSigningKeyHex ?? config.tokenSigningKey ?? deriveSigningKeyHex(options.secretKeyHex),
    previousKeyHex: config.tokenSigningKeyPrevious,
    ttlSeconds: config.tokenTtlSeconds,
    clock,
  });
  const allowPrivateUrls = engine.config.core.allowPrivateUrls;
  return {
    engine,
    db: engine.db,
    cache: engine.cache,
    secrets: engine.secrets,
    config,
    allowPrivateUrls,
    tokens,
    principals: await createRuntimePrincipals(engine.db, engine.cache, tokens, clock),
    realms: await createRealmCache(engine.cache, clock),
    models: createModelClients({ secrets: engine.secrets, allowPrivateUrls }),
    scanner: createSensitiveDataScanner(),
    extensions: createExtensionRegistry(),
    turns: createConcurrencySlots({ redis: options.redis, namespace: 'keel:engine:turns:' }),
    counters: createWindowCounters({ redis: options.redis, namespace: 'keel:engine:quota:' }),
    clock,
    get log() {
      return engine.log;
    },
  };
}

/** The current time as ISO text, from the runtime's clock. */
export function nowIso(rt: RuntimeContext): string {
  return new Date(rt.clock()).toISOString();
}
