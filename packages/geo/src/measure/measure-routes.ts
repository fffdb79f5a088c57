import { type App, checkIdempotencyKey, type Executor, runIdempotent, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { requireWorkspace } from '../auth/geo-auth.ts';
import type { GeoContext } from '../context.ts';
import type { GeoDb } from '../db/schema.ts';
import {
  commonErrors,
  ErrorSchema,
  IdempotencyHeaders,
  keySecurity,
  Nullable,
  PageQuery,
  Timestamp,
  Uuid,
} from '../http-schemas.ts';
import { normalizeUuid } from '../ids.ts';
import { authenticated, principalOf } from '../routes-auth.ts';
import { getAnswer, listRunAnswers } from './answer-service.ts';
import { createEngine, listWorkspaceEngines, removeEngine } from './engine-service.ts';
import { registerInsightRoutes } from './insight-routes.ts';
import { importPrompts, listPrompts, MAX_PROMPTS_PER_IMPORT, removePrompt } from './prompt-service.ts';
import { createRun, getRun, listRuns, MAX_SAMPLES } from './run-service.ts';
import { createSchedule, listWorkspaceSchedules, removeSchedule } from './schedule-service.ts';

const tags = ['measurement'];
const ProjectId = Type.Optional(Uuid("The project; absent = the workspace's default project"));
const WorkspaceQuery = Type.Object({ workspaceId: Uuid('The workspace') });

const PromptSchema = Type.Object({
  id: Type.String(),
  workspaceId: Type.String(),
  projectId: Nullable(Type.String()),
  text: Type.String(),
  topic: Nullable(Type.String()),
  locale: Type.String(),
  intent: Nullable(Type.String()),
  persona: Nullable(Type.String()),
  active: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const PromptInputSchema = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 4000 }),
    topic: Type.Optional(Type.String({ maxLength: 200 })),
    locale: Type.Optional(Type.String({ maxLength: 35, description: 'BCP 47, default `en`' })),
    intent: Type.Optional(
      Type.String({ maxLength: 64, description: 'e.g. `informational`, `commercial`, `navigational`' }),
    ),
    persona: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
const EngineSchema = Type.Object({
  id: Type.String(),
  workspaceId: Type.String(),
  name: Type.String(),
  provider: Type.String({ description: '`chat_completions` or `managed_model`' }),
  baseUrl: Nullable(Type.String({ description: 'null for a managed model' })),
  region: Nullable(Type.String({ description: 'The AWS region of a managed model; null otherwise' })),
  model: Type.String(),
  hasApiKey: Type.Boolean(),
  concurrency: Type.Integer(),
  requestsPerMinute: Type.Integer(),
  inputPricePerMillionTokens: Type.String(),
  outputPricePerMillionTokens: Type.String(),
  timeoutMs: Type.Integer(),
  createdAt: Timestamp,
});
const RunSchema = Type.Object({
  id: Type.String(),
  workspaceId: Type.String(),
  projectId: Nullable(Type.String()),
  status: Type.String({ description: '`pending`, `running`, `completed` or `failed`' }),
  samples: Type.Integer(),
  engineIds: Type.Array(Type.String()),
  promptCount: Type.Integer(),
  totalTasks: Type.Integer(),
  scheduleId: Nullable(Type.String()),
  simulation: Type.Boolean({ description: 'A simulation run (asked with modified content; results in experiments)' }),
  summary: Nullable(Type.Record(Type.String(), Type.Unknown())),
  error: Nullable(Type.String()),
  createdAt: Timestamp,
  startedAt: Nullable(Timestamp),
  completedAt: Nullable(Timestamp),
});
const CitationSchema = Type.Object({
  url: Type.String(),
  title: Nullable(Type.String()),
  source: Type.String({ description: '`citations`, `search_results`, `annotation` or `text`' }),
});
const AnswerSchema = Type.Object({
  id: Type.String(),
  runId: Type.String(),
  promptId: Type.String(),
  engineId: Type.String(),
  sample: Type.Integer(),
  status: Type.String({ description: '`ok` or `error`' }),
  text: Type.String(),
  citations: Type.Array(CitationSchema),
  features: Type.Record(Type.String(), Type.Unknown()),
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  latencyMs: Type.Integer(),
  error: Nullable(Type.String()),
  createdAt: Timestamp,
});
const ScheduleSchema = Type.Object({
  id: Type.String(),
  workspaceId: Type.String(),
  projectId: Nullable(Type.String()),
  engineIds: Nullable(Type.Array(Type.String())),
  samples: Type.Integer(),
  everyHours: Type.Integer(),
  nextRunAt: Timestamp,
  lastRunId: Nullable(Type.String()),
  createdAt: Timestamp,
});

/** The measurement engine's routes: tracked prompts, engines, runs and their answers, schedules. */
export function registerMeasureRoutes(app: App, ctx: GeoContext): void {
  registerInsightRoutes(app, ctx, RunSchema);
  const workspace = (request: { headers: unknown }, id: string) =>
    requireWorkspace(ctx, principalOf(request as never), id);

  app.post(
    '/api/v1/geo/prompts',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Track prompts',
        description: `Needs \`geo:write\`. Adds 1–${MAX_PROMPTS_PER_IMPORT} tracked prompts to a project (all or none). A prompt is identified by its whitespace-normalized text and locale: sending it again updates its topic, intent and persona and reactivates it, so an import can be repeated. \`keel geo prompts import --file prompts.csv\` loads the same from CSV.`,
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            projectId: ProjectId,
            prompts: Type.Array(PromptInputSchema, { minItems: 1, maxItems: MAX_PROMPTS_PER_IMPORT }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ created: Type.Integer(), updated: Type.Integer(), ids: Type.Array(Type.String()) }),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request) => {
      const workspaceId = await workspace(request, request.body.workspaceId);
      return importPrompts(ctx, workspaceId, normalizeProject(request.body.projectId), request.body.prompts);
    },
  );

  app.get(
    '/api/v1/geo/prompts',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "List a project's tracked prompts",
        description: 'Needs `geo:read`. Active prompts, oldest first, keyset-paginated.',
        querystring: Type.Intersect([PageQuery, Type.Object({ projectId: ProjectId })]),
        response: {
          200: Type.Object({ items: Type.Array(PromptSchema), nextCursor: Nullable(Type.String()) }),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await workspace(request, request.query.workspaceId);
      return listPrompts(
        ctx,
        workspaceId,
        normalizeProject(request.query.projectId),
        request.query.limit ?? 100,
        request.query.cursor,
      );
    },
  );

  app.delete(
    '/api/v1/geo/prompts/:promptId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Stop tracking a prompt',
        description:
          'Needs `geo:write`. The prompt is no longer asked by new runs; past runs keep their answers. 204; 404 `GEO_PROMPT_NOT_FOUND`.',
        params: Type.Object({ promptId: Uuid('The prompt') }),
        querystring: WorkspaceQuery,
        response: { 204: Type.Null({ description: 'Removed' }), 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const workspaceId = await workspace(request, request.query.workspaceId);
      await removePrompt(ctx, workspaceId, request.params.promptId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/v1/geo/engines',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Configure an engine',
        description:
          'Needs `geo:write`. An AI engine runs ask: any chat-completions API (`provider: "chat_completions"`: OpenAI, Perplexity, OpenRouter, a self-hosted model …) at `baseUrl` + `/chat/completions`, or the managed model (`provider: "managed_model"`: Amazon Bedrock\'s Converse API in `region`, `model` = the Bedrock model id; it uses the service\'s AWS credentials from the standard chain, so it takes no `baseUrl` or `apiKey`, and the AWS SDK is loaded only when such an engine is first asked; `MANAGED_MODEL_ENDPOINT_OVERRIDE` points it at another endpoint). A missing or misplaced `baseUrl`, `region` or `apiKey` is a 400 `GEO_MEASURE_INVALID`. Sources are read from the answer’s `citations` or `search_results` arrays, its `url_citation` annotations and URLs in its text. The base URL must be public HTTPS (checked now and at every connection; `KEEL_ALLOW_PRIVATE_URLS` for development); `apiKey` is stored encrypted and never returned. `concurrency` (1–64, default 4) and `requestsPerMinute` (1–100000, default 60) bound the load a run puts on it; prices (decimal strings per million tokens) give each run its cost. 201; 409 `GEO_ENGINE_EXISTS` for a name already used.',
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            name: Type.String({ minLength: 1, maxLength: 60 }),
            provider: Type.Union([Type.Literal('chat_completions'), Type.Literal('managed_model')], {
              description:
                '`chat_completions`: any compatible API at `baseUrl`; `managed_model`: Amazon Bedrock in `region`',
            }),
            baseUrl: Type.Optional(
              Type.String({ minLength: 1, maxLength: 2000, description: 'chat_completions only (required there)' }),
            ),
            region: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 32,
                description: 'managed_model only (required there): the AWS region, e.g. `us-east-1`',
              }),
            ),
            model: Type.String({
              minLength: 1,
              maxLength: 200,
              description: 'The model name; for a managed model the Bedrock model id or inference profile',
            }),
            apiKey: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
            concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
            requestsPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
            inputPricePerMillionTokens: Type.Optional(
              Type.String({ maxLength: 20, pattern: '^\\d{1,9}(\\.\\d{1,6})?$' }),
            ),
            outputPricePerMillionTokens: Type.Optional(
              Type.String({ maxLength: 20, pattern: '^\\d{1,9}(\\.\\d{1,6})?$' }),
            ),
            timeoutMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 300_000 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: EngineSchema, 409: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const { workspaceId, ...input } = request.body;
      const id = await workspace(request, workspaceId);
      return reply.status(201).send(await createEngine(ctx, id, input));
    },
  );

  app.get(
    '/api/v1/geo/engines',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "List the workspace's engines",
        description: 'Needs `geo:read`. At most 100; API keys are never returned (`hasApiKey`).',
        querystring: WorkspaceQuery,
        response: { 200: Type.Object({ items: Type.Array(EngineSchema) }), ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => listWorkspaceEngines(ctx, await workspace(request, request.query.workspaceId)),
  );

  app.delete(
    '/api/v1/geo/engines/:engineId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Remove an engine',
        description:
          'Needs `geo:write`. New runs no longer ask it; past answers stay. 204; 404 `GEO_ENGINE_NOT_FOUND`.',
        params: Type.Object({ engineId: Uuid('The engine') }),
        querystring: WorkspaceQuery,
        response: { 204: Type.Null({ description: 'Removed' }), 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      await removeEngine(ctx, await workspace(request, request.query.workspaceId), request.params.engineId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/v1/geo/runs',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Start a measurement run',
        description: `Needs \`geo:write\`. Asks every tracked prompt of the project (or \`promptIds\`) of every engine (or \`engineIds\`) \`samples\` times (1–${MAX_SAMPLES}, default 3), in the background: 202 with the run; poll \`GET /api/v1/geo/runs/{runId}\`. Every answer is stored with its citations as evidence; when all are in, the run writes its metrics (each with run id, definition version, sample count and a 95% interval: Wilson for rates, a seeded bootstrap for the others), an immutable report, recommendations, alerts on real changes since the previous run and, on a workspace's first run, the "AI visibility" dashboard. A run stopped midway resumes without asking again what was answered. 404 for an unknown engine or prompt; 422 \`GEO_NOTHING_TO_RUN\` without engines or prompts. An optional \`Idempotency-Key\` makes a retry safe.`,
        headers: IdempotencyHeaders(false),
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            projectId: ProjectId,
            engineIds: Type.Optional(Type.Array(Uuid('An engine'), { minItems: 1, maxItems: 20 })),
            promptIds: Type.Optional(Type.Array(Uuid('A prompt'), { minItems: 1, maxItems: 10_000 })),
            samples: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SAMPLES })),
            judgeEngineId: Type.Optional(
              Uuid('An engine that rates subjective impression (GEO paper); without one that metric is skipped'),
            ),
            seed: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 2_147_483_647,
                description:
                  'Seeds the bootstrap intervals (random by default); the same answers and seed give the same intervals',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 202: RunSchema, 404: ErrorSchema, 409: ErrorSchema, 422: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const key = checkIdempotencyKey(request.headers['idempotency-key'], false);
      const workspaceId = await workspace(request, request.body.workspaceId);
      const input = {
        projectId: normalizeProject(request.body.projectId),
        engineIds: request.body.engineIds,
        promptIds: request.body.promptIds,
        samples: request.body.samples,
        seed: request.body.seed,
        judgeEngineId: request.body.judgeEngineId,
      };
      const work = async (db: Executor<GeoDb> = ctx.db) => ({
        statusCode: 202,
        body: await createRun(ctx, workspaceId, input, db),
      });
      const outcome =
        key === undefined
          ? { ...(await work()), replayed: false }
          : await runIdempotent(
              ctx.db,
              { scope: `${principal.tenantId}|POST /api/v1/geo/runs`, key, payload: request.body },
              work,
            );
      reply.header('location', `/api/v1/geo/runs/${(outcome.body as { id: string }).id}?workspaceId=${workspaceId}`);
      return sendIdempotent(request, reply, outcome);
    },
  );

  app.get(
    '/api/v1/geo/runs',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "List the workspace's runs",
        description: 'Needs `geo:read`. Newest first, keyset-paginated.',
        querystring: PageQuery,
        response: {
          200: Type.Object({ items: Type.Array(RunSchema), nextCursor: Nullable(Type.String()) }),
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) =>
      listRuns(
        ctx,
        await workspace(request, request.query.workspaceId),
        request.query.limit ?? 100,
        request.query.cursor,
      ),
  );

  app.get(
    '/api/v1/geo/runs/:runId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Read a run',
        description:
          'Needs `geo:read`. Status, progress counts and, once completed, the summary: answers, failures, tokens, cost (decimal string), the headline metrics with their intervals, skipped metrics (e.g. `subjective_impression` without a judge engine) and the report id. 404 `GEO_RUN_NOT_FOUND`.',
        params: Type.Object({ runId: Uuid('The run') }),
        querystring: WorkspaceQuery,
        response: { 200: RunSchema, 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => getRun(ctx, await workspace(request, request.query.workspaceId), request.params.runId),
  );

  app.get(
    '/api/v1/geo/runs/:runId/answers',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "A run's answers (the evidence)",
        description:
          'Needs `geo:read`. Every stored answer with its text, citations and the features the metrics use (entities named, own and competitor citations, word-count shares, sentiment), in storage order, keyset-paginated. Metrics and recommendations reference answers by id (`evidence[].type = "answer"`).',
        params: Type.Object({ runId: Uuid('The run') }),
        querystring: PageQuery,
        response: {
          200: Type.Object({ items: Type.Array(AnswerSchema), nextCursor: Nullable(Type.String()) }),
          404: ErrorSchema,
          ...commonErrors,
        },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await workspace(request, request.query.workspaceId);
      const runId = normalizeUuid(request.params.runId);
      return listRunAnswers(ctx, workspaceId, runId, request.query.limit ?? 100, request.query.cursor);
    },
  );

  app.get(
    '/api/v1/geo/answers/:answerId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Read one answer',
        description: 'Needs `geo:read`. The answer an evidence reference names. 404 `GEO_ANSWER_NOT_FOUND`.',
        params: Type.Object({ answerId: Uuid('The answer') }),
        querystring: WorkspaceQuery,
        response: { 200: AnswerSchema, 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => {
      const workspaceId = await workspace(request, request.query.workspaceId);
      return getAnswer(ctx, workspaceId, normalizeUuid(request.params.answerId));
    },
  );

  app.post(
    '/api/v1/geo/schedules',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Schedule runs',
        description:
          'Needs `geo:write`. Starts a run of the project every `everyHours` (1–720) hours, the first one at `startAt` (default: now), with the given engines (default: all active) and samples. The background worker starts each due run once, whatever the number of instances. 201.',
        body: Type.Object(
          {
            workspaceId: Uuid('The workspace'),
            projectId: ProjectId,
            engineIds: Type.Optional(Type.Array(Uuid('An engine'), { minItems: 1, maxItems: 20 })),
            samples: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SAMPLES })),
            everyHours: Type.Integer({ minimum: 1, maximum: 720 }),
            startAt: Type.Optional(Type.String({ format: 'date-time' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: ScheduleSchema, 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      const { workspaceId, projectId, ...rest } = request.body;
      const id = await workspace(request, workspaceId);
      return reply.status(201).send(await createSchedule(ctx, id, { projectId: normalizeProject(projectId), ...rest }));
    },
  );

  app.get(
    '/api/v1/geo/schedules',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: "List the workspace's schedules",
        description: 'Needs `geo:read`. At most 100.',
        querystring: WorkspaceQuery,
        response: { 200: Type.Object({ items: Type.Array(ScheduleSchema) }), ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:read'),
    },
    async (request) => listWorkspaceSchedules(ctx, await workspace(request, request.query.workspaceId)),
  );

  app.delete(
    '/api/v1/geo/schedules/:scheduleId',
    {
      schema: {
        tags,
        security: keySecurity,
        summary: 'Remove a schedule',
        description: 'Needs `geo:write`. 204; 404 `GEO_SCHEDULE_NOT_FOUND`.',
        params: Type.Object({ scheduleId: Uuid('The schedule') }),
        querystring: WorkspaceQuery,
        response: { 204: Type.Null({ description: 'Removed' }), 404: ErrorSchema, ...commonErrors },
      },
      preParsing: authenticated(ctx, 'geo:write'),
    },
    async (request, reply) => {
      await removeSchedule(ctx, await workspace(request, request.query.workspaceId), request.params.scheduleId);
      return reply.status(204).send(null);
    },
  );
}

function normalizeProject(projectId: string | undefined): string {
  return projectId === undefined ? '' : normalizeUuid(projectId);
}
