import { type App, pingDatabase } from '@keel/core';
import { Type } from 'typebox';
import type { EngineContext } from '../context.ts';

/** Health (process) and readiness (database and cache answer) on a listener. */
export function registerSystemRoutes(app: App, ctx: EngineContext, prefix: string): void {
  app.get(
    `${prefix}/health`,
    {
      schema: {
        tags: ['system'],
        summary: 'Process health',
        response: { 200: Type.Object({ status: Type.String() }) },
      },
      config: { rateLimit: false },
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    `${prefix}/ready`,
    {
      schema: {
        tags: ['system'],
        summary: 'Dependency readiness',
        description: '200 when the database and the cache answer; 503 naming what does not.',
        response: {
          200: Type.Object({ status: Type.String() }),
          503: Type.Object({ status: Type.String(), unavailable: Type.Array(Type.String()) }),
        },
      },
      config: { rateLimit: false },
    },
    async (_request, reply) => {
      const [database, cache] = await Promise.all([pingDatabase(ctx.db), ctx.cache.ping()]);
      if (database && cache) return { status: 'ready' };
      return reply
        .status(503)
        .send({ status: 'not_ready', unavailable: [database ? '' : 'database', cache ? '' : 'cache'].filter(Boolean) });
    },
  );
}
