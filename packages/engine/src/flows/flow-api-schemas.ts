import { type Static, Type } from 'typebox';
import {
  component,
  JsonRecord,
  NullableTimestamp,
  OneOf,
  PageQuery,
  page,
  ref,
  Timestamp,
  Uuid,
} from '../runtime/http-schemas.ts';
import { EXECUTION_STATES } from './flow-states.ts';

/** A realistic flow config: look a product up, then show it (the examples of the flow routes use it). */
export const EXAMPLE_CONFIG = {
  schema_version: '2026-08-22',
  orchestration_mode: 'deterministic',
  routing: { enabled: true, when_to_use: 'The shopper asks for a product by name' },
  permissions: { allowed_actions: ['RENDER_PRODUCTS', 'RESPOND'], risk_tier: 'low' },
  runtime: { max_tool_calls: 4 },
  contract: {
    input: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to look for' } },
      required: ['query'],
    },
  },
  nodes: [
    {
      id: 'search',
      type: 'tool',
      tool: 'catalog_search',
      effect: 'read',
      arguments: { object: { query: { var: 'input.query' } } },
      next: 'show',
    },
    {
      id: 'show',
      type: 'output',
      action: 'RENDER_PRODUCTS',
      data: { object: { products: { var: 'vars.search.products' } } },
    },
  ],
};

const ConfigBody = JsonRecord({
  maxProperties: 20,
  description:
    'The flow config (spec: Flow `config`): `schema_version`, `orchestration_mode`, `routing`, `behavior`, `permissions`, `runtime`, `nodes`, plus `contract` (input/output) and `start`. Node shapes and compiler rules: packages/engine/src/flows/README.md. A config that does not compile is a 400 FLOW_INVALID whose `details` list every problem with its JSON pointer.',
});

const Problem = Type.Object({
  code: Type.String(),
  node_id: Type.Union([Type.String(), Type.Null()]),
  path: Type.String(),
  message: Type.String(),
});

const flowSummaryFields = {
  id: Type.String(),
  realm_id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  status: OneOf(['draft', 'published', 'archived'] as const, {
    description: '`draft` until a version is published; `archived` is read-only',
  }),
  is_active: Type.Boolean(),
  version: Type.Integer({ description: 'The latest version (every config change adds one)' }),
  active_version: Type.Union([Type.Integer(), Type.Null()], { description: 'The version that runs while active' }),
  published_version: Type.Union([Type.Integer(), Type.Null()], { description: 'The newest published version' }),
  tool_name: Type.Union([Type.String(), Type.Null()], {
    description: 'While active: its name on the public tool endpoint, `engine_flow_<name>_v<active_version>`',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
  archived_at: NullableTimestamp,
};

export const FlowSummarySchema = component('RtFlowSummary', Type.Object(flowSummaryFields));
export const FlowSchema = component(
  'RtFlow',
  Type.Object({
    ...flowSummaryFields,
    config: JsonRecord({ description: 'The config of the latest version' }),
    config_hash: Type.String({ description: 'SHA-256 of the config in canonical JSON' }),
  }),
);
export type FlowView = Static<typeof FlowSchema>;
export const FlowRef = ref<FlowView>('RtFlow');
export const FlowSummaryRef = ref<Static<typeof FlowSummarySchema>>('RtFlowSummary');

export const FlowBodySchema = Type.Object(
  {
    realm_id: Type.Optional(Uuid()),
    name: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '\\S',
      description: 'Unique in the realm (case-insensitive); names the flow tool',
    }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
    config: ConfigBody,
    is_active: Type.Optional(
      Type.Boolean({ description: 'true activates the latest version (the activate rules apply); false deactivates' }),
    ),
  },
  {
    examples: [
      {
        name: 'Product lookup',
        description: 'Finds products by name and shows them',
        config: EXAMPLE_CONFIG,
      },
    ],
  },
);

export const VersionSchema = Type.Object({
  flow_id: Type.String(),
  version: Type.Integer(),
  status: OneOf(['draft', 'published'] as const),
  config: JsonRecord(),
  config_hash: Type.String(),
  test_passed: Type.Union([Type.Boolean(), Type.Null()], {
    description: 'The verdict of the last test over every fixture (null: not tested since the last fixture change)',
  }),
  tested_at: NullableTimestamp,
  published_at: NullableTimestamp,
  created_at: Timestamp,
});

export const VersionBodySchema = Type.Object(
  {
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'Default: the latest version' })),
  },
  { examples: [{}] },
);

export const RollbackBodySchema = Type.Object(
  {
    version: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'A published version; default the newest published below the active one',
      }),
    ),
  },
  { examples: [{}] },
);

export const PreviewBodySchema = Type.Object(
  {
    config: Type.Optional(ConfigBody),
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'A stored version (default the latest)' })),
  },
  { examples: [{ config: EXAMPLE_CONFIG }] },
);

export const PreviewSchema = Type.Object({
  flow_id: Type.String(),
  version: Type.Union([Type.Integer(), Type.Null()], { description: 'null when a candidate config was previewed' }),
  valid: Type.Boolean(),
  problems: Type.Array(Problem),
  plan: Type.Union([
    Type.Object({
      hash: Type.String(),
      start: Type.String(),
      nodes: Type.Integer(),
      node_types: Type.Record(Type.String(), Type.Integer()),
      allowed_actions: Type.Array(Type.String()),
      can_wait: Type.Boolean(),
      subflows: Type.Array(Type.String()),
      contract: JsonRecord(),
    }),
    Type.Null(),
  ]),
  tool: Type.Union([
    Type.Object({ name: Type.String(), input_schema: JsonRecord(), output_schema: JsonRecord() }),
    Type.Null(),
  ]),
  compatibility: Type.Object({
    compared_with: Type.Union([Type.Integer(), Type.Null()]),
    compatible: Type.Union([Type.Boolean(), Type.Null()]),
    problems: Type.Array(Problem),
  }),
});

const MockValue = Type.Unknown({ description: 'A result, or `{"$error": {"code", "message", "retryable"}}`' });

export const FixtureBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    input: Type.Optional(JsonRecord({ description: 'The execution input (default `{}`)' })),
    mocks: Type.Optional(
      Type.Object(
        {
          tools: Type.Optional(Type.Record(Type.String(), MockValue, { maxProperties: 100 })),
          resources: Type.Optional(Type.Record(Type.String(), MockValue, { maxProperties: 100 })),
          generate: Type.Optional(Type.Record(Type.String(), MockValue, { maxProperties: 200 })),
          decisions: Type.Optional(
            Type.Record(
              Type.String(),
              Type.Object({
                choice: Type.String({ maxLength: 64 }),
                confidence: Type.Number({ minimum: 0, maximum: 1 }),
              }),
              { maxProperties: 200 },
            ),
          ),
          specialists: Type.Optional(Type.Record(Type.String(), MockValue, { maxProperties: 200 })),
          approvals: Type.Optional(Type.Record(Type.String(), Type.Boolean(), { maxProperties: 200 })),
          events: Type.Optional(Type.Record(Type.String(), MockValue, { maxProperties: 200 })),
        },
        { additionalProperties: false },
      ),
    ),
    expect: Type.Object(
      {
        state: Type.Optional(OneOf(EXECUTION_STATES)),
        action_type: Type.Optional(Type.String({ maxLength: 64 })),
        action: Type.Optional(JsonRecord({ description: 'A subset of the final action that must match' })),
        tool_calls: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 })),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
  },
  {
    examples: [
      {
        name: 'finds mugs',
        input: { query: 'mug' },
        mocks: { tools: { catalog_search: { products: [{ catalogId: '1234567890', name: 'Mug' }] } } },
        expect: { state: 'succeeded', action_type: 'RENDER_PRODUCTS', tool_calls: ['catalog_search'] },
      },
    ],
  },
);

export const FixtureSchema = Type.Object({
  id: Type.String(),
  flow_id: Type.String(),
  name: Type.String(),
  input: Type.Unknown(),
  mocks: JsonRecord(),
  expect: JsonRecord(),
  created_at: Timestamp,
});

export const TestBodySchema = Type.Object(
  {
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'Default: the latest version' })),
    fixture_ids: Type.Optional(
      Type.Array(Uuid(), {
        minItems: 1,
        maxItems: 50,
        description: 'Replay only these (the verdict is then reported, not recorded)',
      }),
    ),
  },
  { examples: [{}] },
);

export const TestResultSchema = Type.Object({
  flow_id: Type.String(),
  version: Type.Integer(),
  passed: Type.Boolean(),
  recorded: Type.Boolean({ description: 'Whether the verdict was recorded on the version (a run over every fixture)' }),
  tested_at: Timestamp,
  results: Type.Array(
    Type.Object({
      fixture_id: Type.String(),
      name: Type.String(),
      passed: Type.Boolean(),
      state: Type.String(),
      action: Type.Unknown(),
      tool_calls: Type.Array(Type.String()),
      steps: Type.Integer(),
      mismatches: Type.Array(Type.String()),
    }),
  ),
});

/** `limit` and the opaque keyset `cursor` (core's cursor helper) of the flow lists. */
export const FlowPageQuery = {
  limit: PageQuery.limit,
  cursor: Type.Optional(Type.String({ maxLength: 512, description: '`next_cursor` of the previous page' })),
};

export const FlowPage = page(FlowSummaryRef);
export const VersionPage = page(VersionSchema);
export const FixturePage = page(FixtureSchema);
