import { Type } from 'typebox';
import type { App } from '../http/create-app.ts';
import { describeNotReady, type Readiness } from './readiness.ts';

const Text = (description: string) => ({ description, content: { 'text/plain': { schema: Type.String() } } });

/** The liveness and readiness paths every Keel listener serves (documented in the root README). */
export const HEALTH_PATHS = { liveness: '/healthz', readiness: '/ready' } as const;

/**
 * Registers the probe pair every listener shares, public and outside rate limiting: `GET /healthz` (liveness:
 * 200 text `UP` while the process serves requests) and `GET /ready` (readiness: 200 text `READY` when every
 * registered check passes, otherwise 503 `NOT READY: <what> <why>, …`).
 */
export function registerHealthRoutes(app: App, readiness: Readiness, options: { tag?: string } = {}): void {
  const tags = [options.tag ?? 'system'];
  app.get(
    HEALTH_PATHS.liveness,
    {
      schema: {
        tags,
        summary: 'Liveness',
        description: 'Always 200 `UP` while the process serves requests; it checks no dependency. No authentication.',
        response: { 200: Text('UP') },
      },
      config: { rateLimit: false },
    },
    async (_request, reply) => reply.type('text/plain; charset=utf-8').send('UP'),
  );
  app.get(
    HEALTH_PATHS.readiness,
    {
      schema: {
        tags,
        summary: 'Readiness',
        description:
          'The database answers, the cache (Redis when `REDIS_URL` is set) answers, and the background workers of this process ' +
          'are running without failing: 200 `READY`. Otherwise 503 `NOT READY: ` and what is down, e.g. `database unreachable`. ' +
          'No authentication.',
        response: { 200: Text('READY'), 503: Text('What is not ready') },
      },
      config: { rateLimit: false },
    },
    async (_request, reply) => {
      const report = await readiness.run();
      reply.type('text/plain; charset=utf-8');
      if (report.ready) return reply.send('READY');
      return reply.status(503).send(`NOT READY: ${describeNotReady(report)}`);
    },
  );
}
