import type { App } from '@keel/core';
import { Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  IdParams,
  NullableTimestamp,
  OneOf,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Uuid,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { FlowPageQuery } from './flow-api-schemas.ts';
import { DEFAULT_MINIMUM_CONFIDENCE } from './flow-router.ts';
import {
  evaluateRouting,
  getRoutingPolicy,
  getRoutingProfile,
  listRoutingProfiles,
  MAX_EVALUATION_ITEMS,
  previewRouting,
  putRoutingPolicy,
  putRoutingProfile,
} from './flow-routing-service.ts';

const Text = (maxLength: number) => Type.String({ maxLength });
const Words = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 });

export const ProfileBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'false: the flow is never routed to by intent' })),
    when_to_use: Type.Optional(Text(2000)),
    when_not_to_use: Type.Optional(Text(2000)),
    capabilities: Type.Optional(Words),
    examples: Type.Optional(Words),
    minimum_confidence: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: `Default ${DEFAULT_MINIMUM_CONFIDENCE}` }),
    ),
    priority: Type.Optional(
      Type.Integer({ minimum: -100, maximum: 100, description: 'Breaks equal scores; default 0' }),
    ),
  },
  {
    examples: [
      {
        when_to_use: 'The shopper looks for a product by name or kind',
        when_not_to_use: 'Order status, returns or refunds',
        examples: ['find me a blue mug', 'do you sell kettles'],
        minimum_confidence: 0.25,
      },
    ],
  },
);

const Effective = Type.Object({
  enabled: Type.Boolean(),
  when_to_use: Type.Union([Type.String(), Type.Null()]),
  when_not_to_use: Type.Union([Type.String(), Type.Null()]),
  capabilities: Type.Array(Type.String()),
  examples: Type.Array(Type.String()),
  minimum_confidence: Type.Number(),
  priority: Type.Integer(),
});
const Manifest = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });

const ProfileView = Type.Object({
  flow_id: Uuid(),
  name: Type.String(),
  source: OneOf(['profile', 'manifest'] as const),
  profile: Type.Union([Manifest, Type.Null()]),
  manifest_version: Type.Union([Type.Integer(), Type.Null()]),
  manifest: Manifest,
  effective: Effective,
  updated_at: NullableTimestamp,
});

const ProfilePage = Type.Object({
  data: Type.Array(
    Type.Object({
      flow_id: Uuid(),
      name: Type.String(),
      profile: Manifest,
      effective: Effective,
      updated_at: NullableTimestamp,
    }),
  ),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

const Mode = OneOf(['automatic', 'explicit'] as const);
const PolicyBody = Type.Object(
  {
    realm_id: Type.Optional(Uuid()),
    mode: Type.Optional(Mode),
    compatibility_fallback: Type.Optional(Type.Boolean()),
    fallback_flow_id: Type.Optional(Type.Union([Uuid(), Type.Null()])),
    canary_percentage: Type.Optional(
      Type.Number({ minimum: 0, maximum: 100, description: 'Percent of subjects, kept to two decimals' }),
    ),
  },
  { examples: [{ mode: 'automatic', compatibility_fallback: true, canary_percentage: 10 }] },
);
const PolicyFields = {
  mode: Mode,
  compatibility_fallback: Type.Boolean(),
  fallback_flow_id: Type.Union([Uuid(), Type.Null()]),
  canary_percentage: Type.Number(),
};
const PolicyView = Type.Object({ realm_id: Uuid(), ...PolicyFields, updated_at: NullableTimestamp });

const Scored = Type.Object({
  flow_id: Uuid(),
  name: Type.String(),
  source: OneOf(['profile', 'manifest'] as const),
  eligible: Type.Boolean(),
  score: Type.Number(),
  minimum_confidence: Type.Number(),
  matched: Type.Array(Type.String()),
  excluded_by: Type.Array(Type.String()),
  reason: Type.String(),
});
const Decision = Type.Object({
  chosen: Type.Union([
    Type.Object({ flow_id: Uuid(), name: Type.String(), version: Type.Integer(), canary: Type.Boolean() }),
    Type.Null(),
  ]),
  why: Type.String(),
  strategy: OneOf(['explicit', 'intent', 'fallback', 'none'] as const),
  candidates: Type.Array(Scored),
  canary: Type.Object({
    percentage: Type.Number(),
    bucket: Type.Union([Type.Integer(), Type.Null()]),
    in_canary: Type.Boolean(),
  }),
  policy: Type.Object(PolicyFields),
});

const PreviewBody = Type.Object(
  {
    realm_id: Type.Optional(Uuid()),
    flow_id: Type.Optional(Uuid({ description: 'Bypasses classification: the decision names this flow if active' })),
    session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Canary assignment key' })),
    subject_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Canary assignment key when no session_id' }),
    ),
    intent: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
    messages: Type.Optional(
      Type.Array(
        Type.Object({
          role: OneOf(['user', 'assistant', 'system'] as const),
          content: Type.String({ maxLength: 4000 }),
        }),
        { minItems: 1, maxItems: 50 },
      ),
    ),
  },
  { examples: [{ intent: 'do you sell blue mugs', subject_id: 'shopper-42' }] },
);

const EvaluationBody = Type.Object(
  {
    realm_id: Type.Optional(Uuid()),
    dataset: Type.Array(
      Type.Object({
        message: Type.String({ minLength: 1, maxLength: 4000 }),
        expected_flow_id: Type.Union([Uuid(), Type.Null()], { description: 'null: no flow should be chosen' }),
        subject_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      }),
      { minItems: 1, maxItems: MAX_EVALUATION_ITEMS },
    ),
  },
  {
    examples: [
      { dataset: [{ message: 'do you sell blue mugs', expected_flow_id: '0196a1b2-0000-7000-8000-000000000001' }] },
    ],
  },
);

const Ratio = Type.Union([Type.Number(), Type.Null()]);
const EvaluationResult = Type.Object({
  total: Type.Integer(),
  correct: Type.Integer(),
  accuracy: Type.Number(),
  per_flow: Type.Array(
    Type.Object({
      flow_id: Type.Union([Uuid(), Type.Null()]),
      name: Type.Union([Type.String(), Type.Null()]),
      support: Type.Integer(),
      predicted: Type.Integer(),
      correct: Type.Integer(),
      accuracy: Ratio,
      precision: Ratio,
    }),
  ),
  confusion: Type.Object({
    labels: Type.Array(Type.Union([Uuid(), Type.Null()])),
    matrix: Type.Array(Type.Array(Type.Integer())),
  }),
  misses: Type.Array(
    Type.Object({
      index: Type.Integer(),
      expected_flow_id: Type.Union([Uuid(), Type.Null()]),
      chosen_flow_id: Type.Union([Uuid(), Type.Null()]),
      why: Type.String(),
    }),
  ),
  policy: Type.Object(PolicyFields),
});

const ROUTING = `Candidates are the realm's active flows. Each is scored without a model, deterministically: the share of the message's words (lower-cased, stop words out) found in what the flow is for — \`when_to_use\`, \`capabilities\`, \`examples\` and its name — minus twice the share found in \`when_not_to_use\`; a flow is eligible at or above its \`minimum_confidence\` (default ${DEFAULT_MINIMUM_CONFIDENCE}) and with routing \`enabled\`. A flow's routing profile, when it has one, replaces the \`routing\` manifest of its config entirely. Policy: \`mode\` \`automatic\` routes by score (ties: \`priority\`, then name), \`explicit\` routes only a named \`flow_id\`; otherwise, with \`compatibility_fallback\`, the \`fallback_flow_id\` (when active). \`canary_percentage\` of subjects (a SHA-256 bucket of realm and session or subject, 0–9,999, so a subject always lands on the same side) get the chosen flow's canary — its newest published version above the active one — when it has one.`;

export function registerFlowRoutingRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['flows'], security: runtimeSecurity };
  app.get(
    '/api/v1/runtime/flow-routing-profiles',
    {
      schema: {
        ...base,
        summary: 'List routing profiles',
        description: `The realm's stored routing profiles, by flow id. ${ROUTING}`,
        querystring: Type.Object(FlowPageQuery),
        response: { 200: ProfilePage, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listRoutingProfiles(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.get(
    '/api/v1/runtime/flows/:id/routing-profile',
    {
      schema: {
        ...base,
        summary: "Read a flow's routing profile",
        description:
          'The stored profile (null when none), the `routing` manifest of the active (else latest) version, and `effective`: what routing reads (`source` says which). A flow of another realm is a 404 like an unknown one.',
        params: IdParams,
        response: { 200: ProfileView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getRoutingProfile(rt, principalOf(request), request.params.id),
  );
  app.put(
    '/api/v1/runtime/flows/:id/routing-profile',
    {
      schema: {
        ...base,
        summary: "Replace a flow's routing profile",
        description: `Replaces the whole profile (fields left out take their defaults, not the manifest's). Needs developer or above; archived flows: 409 FLOW_ARCHIVED. ${ROUTING}`,
        params: IdParams,
        body: ProfileBody,
        response: { 200: ProfileView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => putRoutingProfile(rt, principalOf(request), request.params.id, request.body),
  );
  app.get(
    '/api/v1/runtime/flow-routing-policy',
    {
      schema: {
        ...base,
        summary: "Read the realm's flow routing policy",
        description: `Defaults until changed: \`automatic\`, compatibility fallback on, no fallback flow, canary 0 (\`updated_at\` null). ${ROUTING}`,
        response: { 200: PolicyView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getRoutingPolicy(rt, principalOf(request)),
  );
  app.put(
    '/api/v1/runtime/flow-routing-policy',
    {
      schema: {
        ...base,
        summary: "Change the realm's mode, compatibility fallback and canary percentage",
        description: `Fields left out keep their value; \`fallback_flow_id\` null clears it, an unknown or foreign flow is a 404. \`canary_percentage\` 0–100 in steps of 0.01. Needs developer or above. ${ROUTING}`,
        body: PolicyBody,
        response: { 200: PolicyView, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => putRoutingPolicy(rt, principalOf(request), request.body),
  );
  app.post(
    '/api/v1/runtime/flow-routing-preview',
    {
      schema: {
        ...base,
        summary: 'Preview candidate filtering and routing without an execution',
        description: `Which flow \`intent\` (else the last user message of \`messages\`; 400 without either) would route to: every candidate with its score, matched words and reason, the chosen flow and version, the strategy and why, and the canary assignment. Reads only: nothing is stored, no execution starts. ${ROUTING}`,
        body: PreviewBody,
        response: { 200: Decision, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => previewRouting(rt, principalOf(request), request.body),
  );
  app.post(
    '/api/v1/governance/flow-routing-evaluations',
    {
      schema: {
        ...base,
        summary: 'Evaluate a labelled dataset without side effects',
        description: `Routes each of up to ${MAX_EVALUATION_ITEMS} labelled messages as the preview would (with \`subject_id\` for the canary) and answers accuracy overall and per flow (accuracy = correct / expected, precision = correct / chosen), the confusion matrix (rows: expected, columns: chosen, label null = no flow) and up to 100 misses. Nothing is stored and nothing runs. Any role of the realm may evaluate. ${ROUTING}`,
        body: EvaluationBody,
        response: { 200: EvaluationResult, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => evaluateRouting(rt, principalOf(request), request.body),
  );
}
