import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateApiKey, requirePermission } from './auth/geo-auth.ts';
import type { GeoPrincipal } from './auth/permissions.ts';
import type { GeoContext } from './context.ts';
import { GeoErrors } from './errors.ts';

/** An onRequest hook: a valid API key (401/403 otherwise) holding `permission` when one is named. */
export function authenticated(ctx: GeoContext, permission?: string) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const principal = await authenticateApiKey(ctx, request);
    if (permission) requirePermission(principal, permission);
  };
}

export function principalOf(request: FastifyRequest): GeoPrincipal {
  if (!request.geoPrincipal) throw GeoErrors.unauthorized();
  return request.geoPrincipal;
}
