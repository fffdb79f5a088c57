import { type App, type Readiness, registerHealthRoutes } from '@keel/core';
import { Type } from 'typebox';

const CheckSchema = Type.Object({
  name: Type.String({ description: '`database`, `cache` (Redis when configured) or a worker (`webhook-worker`)' }),
  up: Type.Boolean(),
  reason: Type.Optional(Type.String({ description: 'Why it is down: `unreachable`, `failing`, `timed out`' })),
});

/**
 * Probes on one engine listener: core's pair on every listener (`/healthz` liveness, `/ready` readiness, text),
 * plus the spec's JSON pair under `prefix` — `/api/v1/health` and `/api/v1/ready` on REST, `/health` on the MCP
 * and ingress listeners (`withJsonReady` false there: their `/ready` is core's).
 */
export function registerSystemRoutes(
  app: App,
  readiness: Readiness,
  prefix: string,
  options: { withJsonReady: boolean },
): void {
  registerHealthRoutes(app, readiness);
  app.get(
    `${prefix}/health`,
    {
      schema: {
        tags: ['system'],
        summary: 'Process health',
        description: 'Liveness: always 200 `{"status":"ok"}` while the process serves requests. No authentication.',
        response: { 200: Type.Object({ status: Type.String() }) },
      },
      config: { rateLimit: false },
    },
    async () => ({ status: 'ok' }),
  );
  if (!options.withJsonReady) return;
  app.get(
    `${prefix}/ready`,
    {
      schema: {
        tags: ['system'],
        summary: 'Dependency readiness',
        description:
          '200 `{"status":"ready"}` when the database and the cache (Redis when `REDIS_URL` is set) answer and the webhook ' +
          'delivery worker of this process is not failing; otherwise 503 `{"status":"not_ready","unavailable":[…],"checks":[…]}`. ' +
          'The same checks as `GET /ready`. No authentication.',
        response: {
          200: Type.Object({ status: Type.String() }),
          503: Type.Object({
            status: Type.String(),
            unavailable: Type.Array(Type.String()),
            checks: Type.Array(CheckSchema),
          }),
        },
      },
      config: { rateLimit: false },
    },
    async (_request, reply) => {
      const report = await readiness.run();
      if (report.ready) return { status: 'ready' };
      return reply.status(503).send({
        status: 'not_ready',
        unavailable: report.checks.filter((check) => !check.up).map((check) => check.name),
        checks: report.checks,
      });
    },
  );
}
