import { type App, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { IdempotencyHeaders } from '../http/schemas.ts';
import { principalOf } from '../identity/runtime-auth.ts';
import { IdParams, OneOf, runtimeConfig, runtimeErrors, runtimeSecurity } from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import {
  FixtureBodySchema,
  FixturePage,
  FixtureSchema,
  FlowBodySchema,
  FlowPage,
  FlowPageQuery,
  FlowRef,
  PreviewBodySchema,
  PreviewSchema,
  RollbackBodySchema,
  TestBodySchema,
  TestResultSchema,
  VersionBodySchema,
  VersionPage,
} from './flow-api-schemas.ts';
import {
  activateFlow,
  archiveFlow,
  createFixture,
  createFlow,
  deleteFlow,
  getFlow,
  listFixtures,
  listFlows,
  listFlowVersions,
  previewFlow,
  publishFlow,
  rollbackFlow,
  testFlow,
  updateFlow,
} from './flow-service.ts';

const LIFECYCLE = `Lifecycle: a flow is created at version 1 as a \`draft\`; every change of \`config\` adds an immutable version. A version is published once it compiles, has passed \`POST …/test\` over every fixture of the flow, and keeps the contract of the previously published version compatible; activate publishes (if needed) and makes it the version that runs. Several flows of a realm may be active at once: each is a routing candidate and a tool on the public tool endpoint. Reading needs any role; writing needs developer or above. A flow of another realm is a 404 like an unknown one.`;

export function registerFlowRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['flows'], security: runtimeSecurity };
  const withBody = { ...base };
  app.get(
    '/api/v1/runtime/flows',
    {
      schema: {
        ...base,
        summary: 'List flows',
        description: `Newest first; archived flows only with \`status=archived\`. ${LIFECYCLE}`,
        querystring: Type.Object({
          ...FlowPageQuery,
          status: Type.Optional(OneOf(['draft', 'published', 'archived'] as const)),
          is_active: Type.Optional(Type.Boolean()),
        }),
        response: { 200: FlowPage, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listFlows(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    '/api/v1/runtime/flows',
    {
      schema: {
        ...withBody,
        summary: 'Create a flow',
        description: `The config must compile (400 FLOW_INVALID with every problem otherwise); names are unique per realm (409). Send \`Idempotency-Key\` to make retries safe. ${LIFECYCLE}`,
        headers: IdempotencyHeaders,
        body: FlowBodySchema,
        response: { 201: FlowRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await createFlow(rt, principalOf(request), request.body, request.headers['idempotency-key']),
      ),
  );
  app.get(
    '/api/v1/runtime/flows/:id',
    {
      schema: {
        ...base,
        summary: 'Read a flow',
        description: 'With the config of its latest version.',
        params: IdParams,
        response: { 200: FlowRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getFlow(rt, principalOf(request), request.params.id),
  );
  app.put(
    '/api/v1/runtime/flows/:id',
    {
      schema: {
        ...withBody,
        summary: 'Update a flow',
        description:
          'Replaces name, description and config. A config that differs from the latest version (by canonical hash) becomes a new immutable version; the active version keeps running until another is activated. `is_active` true activates the latest version; false deactivates the flow. Archived flows are read-only (409).',
        params: IdParams,
        body: FlowBodySchema,
        response: { 200: FlowRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => updateFlow(rt, principalOf(request), request.params.id, request.body),
  );
  app.delete(
    '/api/v1/runtime/flows/:id',
    {
      schema: {
        ...base,
        summary: 'Delete a flow',
        description:
          'Deletes the flow, its versions and fixtures. 409 FLOW_ACTIVE while it is active: deactivate or archive it first.',
        params: IdParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await deleteFlow(rt, principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
  app.get(
    '/api/v1/runtime/flows/:id/versions',
    {
      schema: {
        ...base,
        summary: 'List the immutable versions of a flow',
        description: 'Newest first, each with its config, test verdict and publication.',
        params: IdParams,
        querystring: Type.Object(FlowPageQuery),
        response: { 200: VersionPage, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listFlowVersions(rt, principalOf(request), request.params.id, {
        ...request.query,
        limit: request.query.limit ?? 20,
      }),
  );
  app.post(
    '/api/v1/runtime/flows/:id/publish',
    {
      schema: {
        ...withBody,
        summary: 'Publish a tested version',
        description:
          'Compiles the version (default the latest) to its immutable plan. 409 FLOW_NOT_TESTED unless its last test over every fixture passed; 409 FLOW_INCOMPATIBLE when its contract breaks the previously published version (a new required input, a retyped input, an output field removed or retyped); 400 FLOW_INVALID when it no longer compiles (a subflow is gone). Does not activate; publishing a published version answers the flow as is.',
        params: IdParams,
        body: VersionBodySchema,
        response: { 200: FlowRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => publishFlow(rt, principalOf(request), request.params.id, request.body ?? {}),
  );
  app.post(
    '/api/v1/runtime/flows/:id/activate',
    {
      schema: {
        ...withBody,
        summary: 'Activate a reviewed flow',
        description:
          'Publishes the version (default the latest) when it is not yet published — the publish rules apply — and makes it the version the flow runs; the flow becomes active (a routing candidate and a tool).',
        params: IdParams,
        body: VersionBodySchema,
        response: { 200: FlowRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => activateFlow(rt, principalOf(request), request.params.id, request.body ?? {}),
  );
  app.post(
    '/api/v1/runtime/flows/:id/rollback',
    {
      schema: {
        ...withBody,
        summary: 'Reactivate a prior version',
        description:
          'The flow must be active (409 FLOW_NOT_ACTIVE). Reactivates `version` (a published version other than the active one) or, by default, the newest published version below the active one (409 FLOW_NO_PRIOR_VERSION when there is none). Executions already started keep the version they pinned.',
        params: IdParams,
        body: RollbackBodySchema,
        response: { 200: FlowRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => rollbackFlow(rt, principalOf(request), request.params.id, request.body ?? {}),
  );
  app.post(
    '/api/v1/runtime/flows/:id/archive',
    {
      schema: {
        ...base,
        summary: 'Archive a flow',
        description:
          'Deactivates the flow and makes it read-only; its versions stay readable and executions that pinned a version finish on it. Archiving an archived flow answers it as is.',
        params: IdParams,
        response: { 200: FlowRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => archiveFlow(rt, principalOf(request), request.params.id),
  );
  app.post(
    '/api/v1/runtime/flows/:id/preview',
    {
      schema: {
        ...withBody,
        summary: 'Resolve and validate without activation',
        description:
          'Compiles a candidate `config` (nothing is stored) or a stored `version` (default the latest), resolving subflows to their published versions. Answers 200 with `valid`, every problem, the plan summary, the tool it would publish and whether its contract stays compatible with the active (else newest published) version.',
        params: IdParams,
        body: PreviewBodySchema,
        response: { 200: PreviewSchema, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => previewFlow(rt, principalOf(request), request.params.id, request.body ?? {}),
  );
  app.get(
    '/api/v1/runtime/flows/:id/fixtures',
    {
      schema: {
        ...base,
        summary: 'List deterministic fixtures',
        description: 'Oldest first.',
        params: IdParams,
        querystring: Type.Object(FlowPageQuery),
        response: { 200: FixturePage, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listFixtures(rt, principalOf(request), request.params.id, { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    '/api/v1/runtime/flows/:id/fixtures',
    {
      schema: {
        ...withBody,
        summary: 'Create a deterministic fixture',
        description:
          'An input, mocked external capabilities (tools and resources by name; model answers, decisions, specialists, approvals and events by node id) and what must come out (`state`, `action_type`, a subset of the `action`, the tools called in order). A capability without a mock fails its node with MOCK_MISSING. At most 50 per flow, unique names (409). Adding one clears the verdicts of unpublished versions. Send `Idempotency-Key` to make retries safe.',
        headers: IdempotencyHeaders,
        params: IdParams,
        body: FixtureBodySchema,
        response: { 201: FixtureSchema, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await createFixture(
          rt,
          principalOf(request),
          request.params.id,
          request.body,
          request.headers['idempotency-key'],
        ),
      ),
  );
  app.post(
    '/api/v1/runtime/flows/:id/test',
    {
      schema: {
        ...withBody,
        summary: 'Replay fixtures with mocked external capabilities',
        description:
          'Runs each fixture against the version (default the latest) on a virtual clock from 2026-01-01T00:00:00Z: no tool, model or agent is called, so the result is the same every time. Waits are passed with the fixture’s approvals and events; delays and timeouts advance the clock. A run over every fixture records the verdict on the version (publish needs it passed); `fixture_ids` only reports. 409 FLOW_NO_FIXTURES without fixtures.',
        params: IdParams,
        body: TestBodySchema,
        response: { 200: TestResultSchema, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => testFlow(rt, principalOf(request), request.params.id, request.body ?? {}),
  );
}
