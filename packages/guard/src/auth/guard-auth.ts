import { hash } from 'node:crypto';
import { bearerToken, CoreErrors, constantTimeEqual } from '@keel/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GuardConfig } from '../config.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission a caller needs when AUTH_ENABLED is true; routes without one still need a known token (only AUTH_PUBLIC_PATHS are public). */
    permission?: string;
  }
}

/** Paths that describe the API rather than serve data: always readable. */
const DOCUMENTATION = ['/openapi.json', '/docs'];

export interface TokenDirectory {
  /** The token name a presented credential matches, looked up by its SHA-256 digest (never by the token itself). */
  identify(presented: string): string | undefined;
}

export function createTokenDirectory(config: GuardConfig['auth']): TokenDirectory {
  // Looked up by the SHA-256 of the presented token, never by the token itself: how long the lookup takes can
  // only depend on the digest, which an attacker cannot steer towards a known token.
  const byDigest = new Map([...config.tokenPermissions.keys()].map((name) => [hash('sha256', name, 'hex'), name]));
  return {
    identify(presented) {
      return byDigest.get(hash('sha256', presented, 'hex'));
    },
  };
}

/** The credential a request presents: `Authorization: Bearer <token>`, or the bare value when allowed. */
export function presentedToken(request: FastifyRequest, requireBearer: boolean): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const token = bearerToken(header);
  if (token !== undefined || requireBearer) return token;
  const bare = header.trim();
  return bare && !/\s/.test(bare) ? bare : undefined;
}

/** Who is calling: the token name when a known token is presented. Resolved once per request. */
export type CallerResolver = (request: FastifyRequest) => string | undefined;

export function createCallerResolver(config: GuardConfig['auth'], directory: TokenDirectory): CallerResolver {
  const resolved = new WeakMap<FastifyRequest, { name: string | undefined }>();
  return (request) => {
    let entry = resolved.get(request);
    if (!entry) {
      const token = config.enabled ? presentedToken(request, config.requireBearerToken) : undefined;
      entry = { name: token === undefined ? undefined : directory.identify(token) };
      resolved.set(request, entry);
    }
    return entry.name;
  };
}

/** Rate-limit key: the token name for a valid token, else the client address (so fake tokens share one bucket). */
export function rateLimitKeyFor(callerOf: CallerResolver) {
  return (request: FastifyRequest): string => {
    const name = callerOf(request);
    return name === undefined ? `ip:${request.ip}` : `token:${name}`;
  };
}

/**
 * Enforces the spec's authentication when AUTH_ENABLED is true: public paths pass; otherwise a known bearer
 * token holding the route's permission (or `*`) is required — 401 when the credential is missing or unknown,
 * 403 when it lacks the permission. Admin routes also accept the legacy `X-ADMIN-KEY` header.
 */
export function installGuardAuth(app: FastifyInstance, config: GuardConfig['auth'], callerOf: CallerResolver): void {
  if (!config.enabled) return;
  const publicPaths = new Set(config.publicPaths);
  const unauthorized = () => {
    const error = CoreErrors.unauthorized();
    return Object.assign(error, { headers: { 'www-authenticate': 'Bearer realm="keel-guard"' } });
  };

  app.addHook('onRequest', (request, _reply, done) => {
    const path = request.url.split('?', 1)[0]!;
    if (publicPaths.has(path) || DOCUMENTATION.some((p) => path === p || path.startsWith(`${p}/`))) return done();
    const permission = request.routeOptions.config?.permission;

    if (permission?.endsWith(':admin') && config.adminKey) {
      const legacy = request.headers['x-admin-key'];
      if (typeof legacy === 'string' && constantTimeEqual(legacy, config.adminKey)) return done();
    }
    const name = callerOf(request);
    if (name === undefined) return done(unauthorized());
    if (permission === undefined) return done(); // an unknown route: the 404 handler answers
    const granted = config.tokenPermissions.get(name)!;
    if (granted.has('*') || granted.has(permission)) return done();
    done(CoreErrors.forbidden(permission));
  });
}
