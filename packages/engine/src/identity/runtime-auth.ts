import { type Cache, setSpanTenant, toIsoString } from '@keel/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { findKeyStanding, touchAccessKey } from './identity-store.ts';
import type { Role, RuntimePrincipal, UserType } from './roles.ts';
import type { TokenService } from './tokens.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route needs a runtime bearer token (from POST /api/v1/auth/token). */
    runtimeToken?: boolean;
  }
  interface FastifyRequest {
    runtimePrincipal?: RuntimePrincipal;
  }
}

interface Standing {
  identityId: string;
  realmId: string | null;
  userType: UserType;
  role: Role | null;
  keyExpiresAt: number;
  cachedUntil: number;
}

const CHANNEL = 'runtime-keys-changed';
const TTL_MS = 5000;

/**
 * Resolves bearer tokens to principals. The token proves who and which key pair; the key's standing (revoked,
 * expired, identity disabled, membership and role) is read from the database and cached for 5 s, and every
 * change broadcasts an invalidation, so revoking a key or a membership ends its tokens at once.
 */
export interface RuntimePrincipals {
  authenticate(authorization: string | undefined): Promise<RuntimePrincipal>;
  invalidate(): Promise<void>;
}

export async function createRuntimePrincipals(
  db: Kysely<EngineDb>,
  cache: Cache,
  tokens: TokenService,
  clock: () => number,
): Promise<RuntimePrincipals> {
  const standing = new Map<string, Standing>();
  const touched = new Map<string, number>();
  await cache.subscribe(CHANNEL, () => standing.clear());

  const load = async (keyId: string, now: number): Promise<Standing> => {
    const hit = standing.get(keyId);
    if (hit && hit.cachedUntil > now) return hit;
    const row = await findKeyStanding(db, keyId);
    if (!row || row.revoked_at !== null || row.identity_status !== 'active') throw RuntimeErrors.tokenInvalid();
    if (row.realm_id !== null && (row.realm_status !== 'active' || !row.role)) throw RuntimeErrors.tokenInvalid();
    const entry: Standing = {
      identityId: row.identity_id,
      realmId: row.realm_id,
      userType: row.user_type as UserType,
      role: (row.role as Role | null) ?? null,
      keyExpiresAt:
        row.expires_at === null ? Number.POSITIVE_INFINITY : new Date(toIsoString(row.expires_at)).getTime(),
      cachedUntil: now + TTL_MS,
    };
    if (standing.size >= 20_000) standing.clear();
    standing.set(keyId, entry);
    if ((touched.get(keyId) ?? 0) < now - 60_000) {
      touched.set(keyId, now);
      if (touched.size > 20_000) touched.clear();
      await touchAccessKey(db, keyId, new Date(now).toISOString()).catch(() => undefined);
    }
    return entry;
  };

  return {
    async authenticate(authorization) {
      const match = authorization ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization) : null;
      if (!match) throw RuntimeErrors.tokenInvalid();
      const claims = await tokens.verify(match[1]!);
      const now = clock();
      const entry = await load(claims.keyId, now);
      if (entry.keyExpiresAt <= now) throw RuntimeErrors.tokenInvalid();
      if (entry.identityId !== claims.identityId || entry.realmId !== claims.realmId)
        throw RuntimeErrors.tokenInvalid();
      return {
        identityId: entry.identityId,
        userType: entry.userType,
        realmId: entry.realmId,
        role: entry.role,
        keyId: claims.keyId,
        tokenExpiresAt: claims.expiresAt,
      };
    },
    async invalidate() {
      standing.clear();
      await cache.publish(CHANNEL, String(clock()));
    },
  };
}

function challenge(error: { code: string; message: string }) {
  return Object.assign(error, {
    headers: {
      'www-authenticate': `Bearer realm="keel-runtime", error="invalid_token", error_description="${error.message.replace(/"/g, "'")}"`,
    },
  });
}

/** Routes marked `runtimeToken` get `request.runtimePrincipal`, or a 401 (with WWW-Authenticate) before the body is read. */
export function installRuntimeAuth(app: FastifyInstance, principals: RuntimePrincipals): void {
  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config?.runtimeToken) return;
    try {
      request.runtimePrincipal = await principals.authenticate(request.headers.authorization);
      // The request's spans (and the provider and tool calls it makes) belong to the token's realm.
      if (request.runtimePrincipal.realmId) setSpanTenant(request.runtimePrincipal.realmId);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 401) throw challenge(error as never);
      throw error;
    }
  });
}

/** The authenticated principal of a `runtimeToken` route. */
export function principalOf(request: FastifyRequest): RuntimePrincipal {
  if (!request.runtimePrincipal) throw RuntimeErrors.tokenInvalid();
  return request.runtimePrincipal;
}
