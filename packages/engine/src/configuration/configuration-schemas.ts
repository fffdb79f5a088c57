import { type Static, Type } from 'typebox';
import { VARIABLE_NAME } from '../prompts/render.ts';
import { PROVIDER_TEMPLATES } from '../providers/provider-templates.ts';
import { JsonRecord, OneOf } from '../runtime/http-schemas.ts';
import { AuthProfileBody, EgressBody, ProfileFields } from '../toolservers/toolserver-routes.ts';

/** The version of the portable configuration format; a bundle of another format is refused (400). */
export const CONFIG_FORMAT = 'keel.engine.config/v1';

/** Bounds of one bundle (a realm above them cannot be exported in one bundle: 409 RUNTIME_LIMIT_REACHED). */
export const BUNDLE_LIMITS = Object.freeze({
  providers: 100,
  prompt_keys: 200,
  prompt_versions: 50,
  tool_servers: 100,
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

export type ProviderItem = Static<typeof ProviderItem>;
export type PromptItem = Static<typeof PromptItem>;
export type ToolServerItem = Static<typeof ToolServerItem>;

/** The portable, secret-free and name-referenced configuration of a realm (ids never appear). */
export const ConfigBundle = Type.Object(
  {
    format: Type.Literal(CONFIG_FORMAT),
    providers: Type.Optional(Type.Array(ProviderItem, { maxItems: BUNDLE_LIMITS.providers })),
    prompts: Type.Optional(Type.Array(PromptItem, { maxItems: BUNDLE_LIMITS.prompt_keys })),
    tool_servers: Type.Optional(Type.Array(ToolServerItem, { maxItems: BUNDLE_LIMITS.tool_servers })),
  },
  {
    title: 'Keel engine configuration bundle',
    description: `Format ${CONFIG_FORMAT}. Sections are lists keyed by name (prompts: by key); a section left out of a deployed bundle is not touched. Secrets are never part of a bundle: an item names the credential it needs in \`credential\`.`,
    additionalProperties: false,
  },
);
export type ConfigBundle = Static<typeof ConfigBundle>;
