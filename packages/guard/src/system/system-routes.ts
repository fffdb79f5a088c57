import { type App, CoreErrors, pingDatabase } from '@keel/core';
import { Type } from 'typebox';
import type { GuardContext } from '../context.ts';
import { adminSecurity, commonErrors, ErrorSchema } from '../http-schemas.ts';

const Text = (description: string) => ({ description, content: { 'text/plain': { schema: Type.String() } } });

export function registerSystemRoutes(app: App, ctx: GuardContext): void {
  app.get(
    '/healthz',
    {
      schema: { tags: ['system'], summary: 'Liveness', response: { 200: Text('UP') } },
      config: { rateLimit: false },
    },
    async (_request, reply) => reply.type('text/plain; charset=utf-8').send('UP'),
  );

  app.get(
    '/ready',
    {
      schema: {
        tags: ['system'],
        summary: 'Readiness: the database and the cache both answer',
        response: { 200: Text('READY'), 503: Text('What is not reachable') },
      },
      config: { rateLimit: false },
    },
    async (_request, reply) => {
      const [database, cache] = await Promise.all([pingDatabase(ctx.db), ctx.cache.ping()]);
      reply.type('text/plain; charset=utf-8');
      if (database && cache) return reply.send('READY');
      const down = [database ? undefined : 'database', cache ? undefined : 'cache'].filter(Boolean).join(' and ');
      return reply.status(503).send(`NOT READY: ${down} unreachable`);
    },
  );

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
