import { type Static, Type } from 'typebox';
import { ProfileSchema as AgentProfileSchema } from '../agents/agent-routes.ts';
import { DATA_HANDLING, QUALITY_TIERS, SettingsSchema } from '../agents/agent-settings.ts';
import { FixtureBodySchema } from '../flows/flow-api-schemas.ts';
import { ProfileBody as RoutingProfileBody } from '../flows/flow-routing-routes.ts';
import { TriggerBody } from '../flows/flow-trigger-routes.ts';
import { Rules as PolicyRules, QuotaFields } from '../governance/governance-routes.ts';
import { Username } from '../identity/identity-schemas.ts';
import { VARIABLE_NAME } from '../prompts/render.ts';
import { PROVIDER_TEMPLATES } from '../providers/provider-templates.ts';
import { JsonRecord, Metadata, OneOf } from '../runtime/http-schemas.ts';
import { RoutingRuleInputSchema } from '../toolservers/routing/index.ts';
import { AuthProfileBody, EgressBody, ProfileFields } from '../toolservers/toolserver-routes.ts';
import { RUNTIME_EVENTS } from '../webhooks/events.ts';

/** The version of the portable configuration format; a bundle of another format is refused (400). */
export const CONFIG_FORMAT = 'keel.engine.config/v1';

/** Bounds of one bundle (a realm above them cannot be exported in one bundle: 409 RUNTIME_LIMIT_REACHED). */
export const BUNDLE_LIMITS = Object.freeze({
  providers: 100,
  prompt_keys: 200,
  prompt_versions: 50,
  tool_servers: 100,
  flows: 200,
  agents: 200,
  routing_rules: 500,
  runtime_webhooks: 20,
  integration_clients: 200,
  flow_triggers: 1000,
});

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const Price = Type.Number({ minimum: 0, maximum: 1_000_000 });
const Credential = Type.Union([Type.Literal('api_key'), Type.Null()], {
  description:
    'The secret this item needs (never its value). Supply it in the deploy body as `credentials["<section>/<name>"]`; when missing, the item is deployed inactive and reported in `missing_credentials`.',
});

export const ProviderItem = Type.Object(
  {
    name: Name,
    type: OneOf(PROVIDER_TEMPLATES.map((t) => t.type)),
    description: Nullable(Type.String({ maxLength: 2000 })),
    base_url: Nullable(Type.String({ minLength: 1, maxLength: 2048 })),
    supports_text: Type.Boolean(),
    supports_image: Type.Boolean(),
    text_model: Nullable(Type.String({ minLength: 1, maxLength: 255 })),
    image_model: Nullable(Type.String({ minLength: 1, maxLength: 255 })),
    input_price_per_million: Price,
    output_price_per_million: Price,
    image_price: Price,
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    is_default: Type.Boolean(),
    is_active: Type.Boolean(),
    settings: JsonRecord({ maxProperties: 50 }),
    credential: Credential,
  },
  { additionalProperties: false },
);

const PromptVersion = Type.Object(
  {
    version: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    name: Name,
    content: Type.String({ minLength: 1, maxLength: 100_000 }),
    variables: Type.Array(Type.String({ pattern: VARIABLE_NAME }), { maxItems: 50 }),
  },
  { additionalProperties: false },
);

export const PromptItem = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 120, pattern: '^[a-z0-9][a-z0-9._-]*$' }),
    active_version: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    versions: Type.Array(PromptVersion, { minItems: 1, maxItems: BUNDLE_LIMITS.prompt_versions }),
  },
  { additionalProperties: false },
);

export const ToolServerItem = Type.Object(
  {
    name: Name,
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    type: OneOf(['http', 'sse']),
    description: Nullable(Type.String({ maxLength: 2000 })),
    is_active: Type.Boolean(),
    capabilities: Type.Array(Type.String({ minLength: 1, maxLength: 120 }), { maxItems: 50 }),
    profile: Type.Object(
      {
        auth: AuthProfileBody,
        egress: EgressBody,
        region: ProfileFields.region,
        data_handling: ProfileFields.data_handling,
        estimated_cost: ProfileFields.estimated_cost,
      },
      { additionalProperties: false },
    ),
    credential: Credential,
  },
  { additionalProperties: false },
);

/** A flow config as `POST /api/v1/runtime/flows` takes it (compiled by the flow compiler on deploy). */
const FlowConfigBody = JsonRecord({
  maxProperties: 20,
  description:
    "A flow config (spec: Flow `config`), as POST /api/v1/runtime/flows takes it, except that nodes name items by name: a subflow node names its flow in `flow` (the flow's name, with the pinned `version`) instead of `flow_id`, a specialist node its agent in `agent` (the agent's username) instead of `agent_id`; a node naming an item by id, a config that does not compile, or a pinned subflow version that is not a published version of that flow in the target realm once the deploy is written, is a 400 naming the item",
});

export const FlowItem = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    description: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]),
    is_active: Type.Boolean({ description: 'true: `published_config` is the version the flow runs' }),
    published_version: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.Null()], {
        description:
          'The number of `published_config` in the exported realm (null: never published). A flow the deploy creates numbers its published version so (default 1), which keeps subflow pins of other flows true; an existing flow appends versions at its own numbers (the diff shows the number it will get)',
      }),
    ),
    published_config: Type.Union([FlowConfigBody, Type.Null()], {
      description:
        'The version the flow runs (its active version; else its newest published one); null: never published. Deploy publishes it through the normal path: it must compile, keep the contract of the published version before it, and pass every fixture of the item.',
    }),
    config: FlowConfigBody,
    fixtures: Type.Array(FixtureBodySchema, { maxItems: 50, description: 'By name; replayed before a publish' }),
    routing_profile: Type.Union([RoutingProfileBody, Type.Null()], {
      description: 'The routing profile (null: routing reads the manifest of the config)',
    }),
  },
  {
    additionalProperties: false,
    description:
      'A flow by name (archived flows are not part of a bundle). `config` is its newest version (a draft when it differs from `published_config`).',
  },
);

/** The stored agent settings as they are (no defaults filled in: a bundle carries exactly what the realm stores). */
const AgentSettings = Type.Object({
  ...SettingsSchema.properties,
  quality_tier: Type.Optional(OneOf(QUALITY_TIERS)),
  data_handling: Type.Optional(OneOf(DATA_HANDLING)),
});

export const AgentItem = Type.Object(
  {
    name: Username,
    display_name: Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()]),
    role: OneOf(['admin', 'developer', 'operator', 'viewer'] as const, { description: 'Its role in the realm' }),
    system_prompt: Type.Union(
      [
        Type.Object(
          { key: Type.String({ minLength: 1, maxLength: 120 }), version: Type.Integer({ minimum: 1 }) },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'A prompt version by key and version' },
    ),
    provider: Type.Union([Name, Type.Null()], { description: 'A provider by name (null: the realm default)' }),
    default_flow: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], {
      description: 'A flow by name',
    }),
    allowed_mcp_servers: Type.Array(Name, { maxItems: 50, description: 'Tool servers by name' }),
    metadata: Metadata,
    settings: AgentSettings,
    profile: AgentProfileSchema,
    is_default: Type.Boolean(),
  },
  {
    additionalProperties: false,
    description: 'An agent identity (by username) with its configuration; every reference is a name',
  },
);

const { servers: _serverIds, ...ruleFields } = RoutingRuleInputSchema.properties;
export const RoutingRuleItem = Type.Object(
  { ...ruleFields, servers: Type.Optional(Type.Array(Name, { minItems: 1, maxItems: 64 })) },
  { additionalProperties: false, description: 'A tool routing rule; `servers` are tool servers by name' },
);

export const ToolRoutingItem = Type.Object(
  { rules: Type.Array(RoutingRuleItem, { maxItems: BUNDLE_LIMITS.routing_rules }) },
  {
    additionalProperties: false,
    description: 'The realm routing rules as one set: a deploy replaces the whole set when it differs',
  },
);

export const FlowRoutingItem = Type.Object(
  {
    mode: OneOf(['automatic', 'explicit'] as const),
    compatibility_fallback: Type.Boolean(),
    fallback_flow: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], {
      description: 'A flow by name',
    }),
    canary_percentage: Type.Number({ minimum: 0, maximum: 100 }),
  },
  { additionalProperties: false, description: 'The realm flow routing policy' },
);

export const GovernanceItem = Type.Object(
  {
    policy: Type.Union(
      [
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 120 }),
            description: Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()]),
            rules: PolicyRules,
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description:
          'The content of the active policy version (null: none is active). A deploy whose policy differs creates the next version as a draft and activates it; null supersedes the active one.',
      },
    ),
    quota: Type.Union([Type.Object(QuotaFields, { additionalProperties: false }), Type.Null()], {
      description: 'The realm quota policy (null: none)',
    }),
  },
  { additionalProperties: false },
);

const SigningCredential = Type.Union([Type.Literal('signing_secret'), Type.Null()], {
  description:
    'A runtime webhook always has a signing secret; it is never exported. Supply it (`whsec_…`) as `credentials["runtime_webhooks/<url>"]`, or the webhook is deployed inactive with a new secret nobody knows and reported in `missing_credentials`.',
});

export const RuntimeWebhookItem = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    description: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
    events: Type.Array(OneOf([...RUNTIME_EVENTS, '*']), { minItems: 1, maxItems: 50 }),
    active: Type.Boolean(),
    credential: SigningCredential,
  },
  { additionalProperties: false, description: 'A runtime webhook by URL' },
);

export const IntegrationClientItem = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120 }),
    description: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
    role: OneOf(['admin', 'developer', 'operator', 'viewer'] as const),
  },
  {
    additionalProperties: false,
    description:
      'An integration client by name (never its client id or secret). A deployed new client gets its own key pair whose secret nobody receives: it is listed in `missing_credentials` (credential `client_secret`); rotate it (POST /api/v1/integrations/clients/{id}/rotate-secret) to obtain one.',
  },
);

/**
 * A flow trigger: the body `POST /api/v1/runtime/flows/{id}/triggers` takes (read from the trigger routes, so a
 * field they add travels too), with its flow and agent by name and without `start_at` (a deployed schedule starts
 * from the deploy, as a new one does).
 */
const { agent_id: _agentId, start_at: _startAt, ...triggerFields } = TriggerBody.properties;
export const FlowTriggerItem = Type.Object(
  {
    flow: Type.String({ minLength: 1, maxLength: 200, description: 'The flow by name' }),
    ...triggerFields,
    agent: Type.Union([Username, Type.Null()], { description: 'The agent executions run as, by username' }),
  },
  {
    additionalProperties: false,
    description:
      "An event or schedule trigger of a flow, keyed `<flow>/<name>`. Secret-free: a fire authenticates with the caller's bearer token, so a trigger holds no secret. A changed trigger is replaced (its fire records — the event ids it deduplicates — start anew)",
  },
);

export type ProviderItem = Static<typeof ProviderItem>;
export type FlowTriggerItem = Static<typeof FlowTriggerItem>;
export type FlowItem = Static<typeof FlowItem>;
export type AgentItem = Static<typeof AgentItem>;
export type RoutingRuleItem = Static<typeof RoutingRuleItem>;
export type ToolRoutingItem = Static<typeof ToolRoutingItem>;
export type FlowRoutingItem = Static<typeof FlowRoutingItem>;
export type GovernanceItem = Static<typeof GovernanceItem>;
export type RuntimeWebhookItem = Static<typeof RuntimeWebhookItem>;
export type IntegrationClientItem = Static<typeof IntegrationClientItem>;
export type PromptItem = Static<typeof PromptItem>;
export type ToolServerItem = Static<typeof ToolServerItem>;

/** The portable, secret-free and name-referenced configuration of a realm (ids never appear). */
export const ConfigBundle = Type.Object(
  {
    format: Type.Literal(CONFIG_FORMAT),
    providers: Type.Optional(Type.Array(ProviderItem, { maxItems: BUNDLE_LIMITS.providers })),
    prompts: Type.Optional(Type.Array(PromptItem, { maxItems: BUNDLE_LIMITS.prompt_keys })),
    tool_servers: Type.Optional(Type.Array(ToolServerItem, { maxItems: BUNDLE_LIMITS.tool_servers })),
    flows: Type.Optional(Type.Array(FlowItem, { maxItems: BUNDLE_LIMITS.flows })),
    agents: Type.Optional(Type.Array(AgentItem, { maxItems: BUNDLE_LIMITS.agents })),
    flow_triggers: Type.Optional(Type.Array(FlowTriggerItem, { maxItems: BUNDLE_LIMITS.flow_triggers })),
    tool_routing: Type.Optional(ToolRoutingItem),
    flow_routing: Type.Optional(FlowRoutingItem),
    governance: Type.Optional(GovernanceItem),
    runtime_webhooks: Type.Optional(Type.Array(RuntimeWebhookItem, { maxItems: BUNDLE_LIMITS.runtime_webhooks })),
    integration_clients: Type.Optional(
      Type.Array(IntegrationClientItem, { maxItems: BUNDLE_LIMITS.integration_clients }),
    ),
  },
  {
    title: 'Keel engine configuration bundle',
    description: `Format ${CONFIG_FORMAT}. List sections are keyed by name (prompts: by key; runtime webhooks: by URL; flow triggers: by flow and name); \`tool_routing\`, \`flow_routing\` and \`governance\` are one object each for the whole realm. A section left out of a deployed bundle is not touched (so a bundle of only the first sections — providers, prompts, tool_servers — stays valid). Every reference between items is a name, never an id. Secrets are never part of a bundle: an item names the credential it needs in \`credential\`.`,
    additionalProperties: false,
  },
);
export type ConfigBundle = Static<typeof ConfigBundle>;
