import type { FastifyInstance } from 'fastify';

const API_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

/** HTML pages we serve (the docs page) load their own scripts and styles, and nothing from elsewhere. */
const PAGE_CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'";

/**
 * Adds conservative security headers to every response before the handler runs, so a route may still
 * override one; requests under a page prefix get a CSP that lets the page load its own assets.
 */
export function installSecurityHeaders(app: FastifyInstance, pagePrefixes: readonly string[]): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(API_HEADERS);
    if (pagePrefixes.some((prefix) => request.url.startsWith(prefix))) {
      reply.header('content-security-policy', PAGE_CSP);
    }
    done();
  });
}
