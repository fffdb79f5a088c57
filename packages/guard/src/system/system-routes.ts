import { type App, CoreErrors, createServiceReadiness, registerHealthRoutes } from '@keel/core';
import { Type } from 'typebox';
import type { GuardContext } from '../context.ts';
import { adminSecurity, commonErrors, ErrorSchema } from '../http-schemas.ts';

/** Liveness, readiness and the cache reload. */
export function registerSystemRoutes(app: App, ctx: GuardContext): void {
  // `/healthz` (text UP) and `/ready` (text READY, or 503 naming what is down) are core's probe pair, which the
  // spec's paths and bodies match: database and cache (Redis when configured), and the audit writer.
  const readiness = createServiceReadiness({ db: ctx.db, cache: ctx.cache });
  readiness.add('audit-writer', () => ctx.audit.check());
  registerHealthRoutes(app, readiness);

  app.post(
    '/admin/reload',
    {
      schema: {
        tags: ['system'],
        security: adminSecurity,
        summary: 'Clear the pattern, allowlist and blocklist caches',
        response: { 200: Type.Object({ status: Type.String(), message: Type.String() }), ...commonErrors },
      },
      config: { permission: 'cache:admin' },
    },
    async () => {
      await ctx.activeConfig.invalidate();
      return { status: 'ok', message: 'Pattern, allowlist and blocklist caches cleared' };
    },
  );

  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: '/admin/reload',
    schema: { hide: true, response: { 405: ErrorSchema } },
    handler: async (request, reply) => {
      reply.header('allow', 'POST');
      throw CoreErrors.methodNotAllowed(request.method, '/admin/reload');
    },
  });
}
