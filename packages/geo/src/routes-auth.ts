import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateApiKey, requirePermission } from './auth/geo-auth.ts';
import type { GeoPrincipal } from './auth/permissions.ts';
import type { GeoContext } from './context.ts';
import { GeoErrors } from './errors.ts';

/**
 * A preParsing hook: a valid API key (401/403 otherwise) holding `permission` when one is named. It runs after the
 * rate limiter (an onRequest hook), so floods of bad credentials are throttled, and before the body is parsed or
 * validated, so an unauthenticated caller learns nothing about the request's shape.
 */
export function authenticated(ctx: GeoContext, permission?: string) {
  return async <P>(request: FastifyRequest, _reply: FastifyReply, payload: P): Promise<P> => {
    const principal = await authenticateApiKey(ctx, request);
    if (permission) requirePermission(principal, permission);
    return payload;
  };
}

export function principalOf(request: FastifyRequest): GeoPrincipal {
  if (!request.geoPrincipal) throw GeoErrors.unauthorized();
  return request.geoPrincipal;
}
