import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EngineContext } from '../context.ts';
import { EngineErrors } from '../errors.ts';
import { type Principal, presentedKey } from '../merchants/principal.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route needs a merchant key (Authorization: Bearer, x-api-key or X-Catalog-API-Key). */
    merchantKey?: boolean;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** Authenticates the request's merchant key (401 with WWW-Authenticate when missing, unknown, revoked, expired or its merchant inactive). */
export async function authenticateRequest(ctx: EngineContext, request: FastifyRequest): Promise<Principal> {
  try {
    return await ctx.principals.authenticate(presentedKey(request.headers));
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 401) {
      throw Object.assign(EngineErrors.unauthorized(), {
        headers: { 'www-authenticate': 'Bearer realm="keel-catalog"' },
      });
    }
    throw error;
  }
}

/** Routes marked `merchantKey` get `request.principal`, or a 401 before the body is read. */
export function installMerchantAuth(app: FastifyInstance, ctx: EngineContext): void {
  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config?.merchantKey) return;
    request.principal = await authenticateRequest(ctx, request);
  });
}

/** The authenticated principal of a `merchantKey` route. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw EngineErrors.unauthorized();
  return request.principal;
}

/** Rate-limit buckets: a known key gets its own bucket, everything else shares the client address's. */
export function rateLimitKey(ctx: EngineContext) {
  return (request: FastifyRequest): string => {
    const key = presentedKey(request.headers);
    const principal = key ? ctx.principals.peek(key) : undefined;
    return principal ? `key:${principal.keyId}` : `ip:${request.ip}`;
  };
}
