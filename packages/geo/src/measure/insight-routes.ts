import type { App } from '@keel/core';
import { type TSchema, Type } from 'typebox';
import { requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoContext } from '../context.ts';
import { DatasetRecordSchema } from '../datasets/dataset-schemas.ts';
import { commonErrors, ErrorSchema, keySecurity, Uuid } from '../http-schemas.ts';
import { normalizeUuid } from '../ids.ts';
import { authenticated, principalOf } from '../routes-auth.ts';
import { computeAttribution } from './attribution-service.ts';
import { createObservedExperiment, EXPERIMENT_METRICS } from './experiment-service.ts';
import { createRun, MAX_SAMPLES } from './run-service.ts';

const tags = ['measurement'];
const ProjectId = Type.Optional(Uuid("The project; absent = the workspace's default project"));
const projectKey = (projectId: string | undefined) => (projectId === undefined ? '' : normalizeUuid(projectId));

/** Attribution of AI traffic, observed experiments and simulations. */
export function registerInsightRoutes(app: App, ctx: GeoContext, RunSchema: TSchema): void {
  app.post(
    '/api/v1/geo/attribution',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Attribute AI traffic to targets and content',
        description:
          "Needs `geo:write`. Reads the workspace's tracking events of the last `days` days (1–90, default 30): visits referred by AI engines (ChatGPT, Perplexity, …) and AI-crawler hits (GPTBot, ClaudeBot, …). Each path is credited to the target whose URL path is its longest prefix. Writes one `attribution` record per engine and crawler (hits, visitor-days for referrals, top paths with their targets, top targets) and answers them (201).",
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            projectId: ProjectId,
            days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30 })),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            since: Type.String(),
            until: Type.String(),
            items: Type.Array(
              Type.Object({
                id: Type.String(),
                key: Type.String(),
                data: Type.Record(Type.String(), Type.Unknown()),
                computedAt: Type.String(),
              }),
            ),
          }),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const workspaceId = await requireWorkspace(ctx, principalOf(request), request.body.workspaceId);
      return reply
        .status(201)
        .send(await computeAttribution(ctx, workspaceId, projectKey(request.body.projectId), request.body.days ?? 30));
    },
  );

  app.post(
    '/api/v1/geo/experiments',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Record an observed experiment',
        description:
          'Needs `geo:write`. A content change measured by two completed runs — before and after (`design: "before_after"`, default) or two variants (`"ab"`) — compared on `mention_rate` or `citation_rate` with a two-sided, pooled two-proportion z-test (significant when p < 0.05). Written to the `experiments` dataset with mode `observed` (simulations are mode `simulated`, listed apart). 201 with the record; 404 for an unknown run; 409 `GEO_RUN_NOT_COMPLETE` for a run still running.',
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            metric: Type.Union(EXPERIMENT_METRICS.map((m) => Type.Literal(m))),
            controlRunId: Uuid('The run before the change (or variant A)'),
            treatmentRunId: Uuid('The run after the change (or variant B)'),
            design: Type.Optional(Type.Union([Type.Literal('before_after'), Type.Literal('ab')])),
            change: Type.Optional(
              Type.String({ maxLength: 2000, description: 'What changed (free text, e.g. the page and edit)' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: DatasetRecordSchema, 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const { workspaceId, ...input } = request.body;
      const id = await requireWorkspace(ctx, principalOf(request), workspaceId);
      return reply.status(201).send(await createObservedExperiment(ctx, id, input));
    },
  );

  app.post(
    '/api/v1/geo/simulations',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Simulate a content change',
        description: `Needs \`geo:write\`. Re-runs the project's tracked prompts (or \`promptIds\`) offline against modified content: every question carries the page (\`content.url\`, \`content.text\`) as one of the engine's sources. Runs in the background like a run (202 with the run, \`simulation: true\`); when complete it writes \`experiments\` records with mode \`simulated\` (never \`metrics\`, reports, alerts or dashboards), each compared with \`baselineRunId\` when given (two-proportion z-test on the rates).`,
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            projectId: ProjectId,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            engineIds: Type.Optional(Type.Array(Uuid('An engine'), { minItems: 1, maxItems: 20 })),
            promptIds: Type.Optional(Type.Array(Uuid('A prompt'), { minItems: 1, maxItems: 10_000 })),
            samples: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SAMPLES })),
            baselineRunId: Type.Optional(Uuid('A completed run to compare with')),
            content: Type.Object(
              {
                url: Type.String({ minLength: 1, maxLength: 2048 }),
                text: Type.String({ minLength: 1, maxLength: 20_000 }),
              },
              { additionalProperties: false },
            ),
          },
          { additionalProperties: false },
        ),
        response: { 202: RunSchema, 404: ErrorSchema, 422: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const body = request.body;
      const workspaceId = await requireWorkspace(ctx, principalOf(request), body.workspaceId);
      const run = await createRun(ctx, workspaceId, {
        projectId: projectKey(body.projectId),
        engineIds: body.engineIds,
        promptIds: body.promptIds,
        samples: body.samples,
        simulation: {
          name: body.name,
          url: body.content.url,
          text: body.content.text,
          baselineRunId: body.baselineRunId ? normalizeUuid(body.baselineRunId) : null,
        },
      });
      return reply.status(202).send(run);
    },
  );
}
