import { type App, sendIdempotent } from '@keel/core';
import { Type } from 'typebox';
import { IdempotencyHeaders } from '../http/schemas.ts';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  IdParams,
  OneOf,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
  Uuid,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { FlowPageQuery } from './flow-api-schemas.ts';
import { ENVIRONMENTS, listPromotions, promoteFlow } from './flow-promotion-service.ts';

const Environment = OneOf(ENVIRONMENTS);

const Binding = Type.Union([
  Type.Object({ version: Type.Integer(), promotion_id: Uuid(), bound_at: Timestamp }),
  Type.Null(),
]);
const Bindings = Type.Object(
  Object.fromEntries(ENVIRONMENTS.map((environment) => [environment, Binding])) as Record<
    (typeof ENVIRONMENTS)[number],
    typeof Binding
  >,
  { description: 'The version each environment is bound to (null: nothing promoted there yet)' },
);
const Promotion = Type.Object({
  id: Uuid(),
  flow_id: Uuid(),
  from_environment: Type.Union([Environment, Type.Null()]),
  environment: Environment,
  version: Type.Integer(),
  replaced_version: Type.Union([Type.Integer(), Type.Null()]),
  note: Type.Union([Type.String(), Type.Null()]),
  promoted_by: Uuid(),
  promoted_at: Timestamp,
});

const PromoteBody = Type.Object(
  {
    environment: Environment,
    version: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'development: a published version (default the active version, else the newest published); later stages: must equal the version bound in the stage before (the default)',
      }),
    ),
    note: Type.Optional(Type.String({ maxLength: 1000, description: 'Why, kept on the promotion record' })),
  },
  { examples: [{ environment: 'development' }, { environment: 'qa', note: 'signed off' }] },
);

const PromoteResult = Type.Object({
  flow_id: Uuid(),
  promotion: Type.Union([Promotion, Type.Null()], {
    description: 'The recorded promotion; null when the environment already had that version (nothing recorded)',
  }),
  bindings: Bindings,
});

const PromotionPage = Type.Object({
  flow_id: Uuid(),
  bindings: Bindings,
  data: Type.Array(Promotion),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

const PROMOTION = `Environments are bound in order development → qa → uat → production. development binds a published version; each later stage takes the version bound in the stage before it (409 FLOW_PROMOTION_OUT_OF_ORDER when that stage has nothing bound or \`version\` names another version). Every move is recorded (who, when, from which stage, which version it replaced). Bindings are records for the release process: the version the realm's executions run is still the one \`activate\`/\`rollback\` chose. Reading needs any role; promoting needs developer or above; a flow of another realm is a 404 like an unknown one.`;

export function registerFlowPromotionRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['flows'], security: runtimeSecurity };
  app.post(
    '/api/v1/runtime/flows/:id/promote',
    {
      schema: {
        ...base,
        summary: 'Promote through development, QA, UAT or production bindings',
        description: `${PROMOTION} Promoting the version an environment already has answers 200 with \`promotion: null\`. Archived flows: 409 FLOW_ARCHIVED; an unpublished version: 409 FLOW_NOT_PUBLISHED. Send \`Idempotency-Key\` to make retries safe.`,
        headers: IdempotencyHeaders,
        params: IdParams,
        body: PromoteBody,
        response: { 200: PromoteResult, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await promoteFlow(
          rt,
          principalOf(request),
          request.params.id,
          request.body,
          request.headers['idempotency-key'],
        ),
      ),
  );
  app.get(
    '/api/v1/runtime/flows/:id/promotions',
    {
      schema: {
        ...base,
        summary: 'Environment bindings and promotion record of a flow',
        description: `Newest promotion first. ${PROMOTION}`,
        params: IdParams,
        querystring: Type.Object(FlowPageQuery),
        response: { 200: PromotionPage, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listPromotions(rt, principalOf(request), request.params.id, {
        ...request.query,
        limit: request.query.limit ?? 20,
      }),
  );
}
