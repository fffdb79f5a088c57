/** How a setting of a provider type is validated. */
interface SettingRule {
  type: 'number' | 'integer' | 'string' | 'boolean';
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  required?: boolean;
  description: string;
}

export interface ProviderTemplate {
  type: 'openai_compatible' | 'bedrock';
  name: string;
  description: string;
  /** `required`, `optional` or `unsupported`. */
  api_key: 'required' | 'optional' | 'unsupported';
  base_url: { required: boolean; default: string | null; description: string };
  capabilities: { text: boolean; image: boolean };
  defaults: Record<string, unknown>;
  settings: Record<string, SettingRule>;
  presets: { name: string; base_url: string; note?: string }[];
}

const COMMON_SETTINGS: Record<string, SettingRule> = {
  temperature: { type: 'number', minimum: 0, maximum: 2, description: 'Sampling temperature' },
  max_tokens: { type: 'integer', minimum: 1, maximum: 65_536, description: 'Most tokens per answer' },
  top_p: { type: 'number', minimum: 0, maximum: 1, description: 'Nucleus sampling' },
  zero_data_retention: {
    type: 'boolean',
    description: 'The upstream keeps no request data (needed by agents with data_handling no_retention)',
  },
};

/** The provider types this engine can run, with their rules (GET /api/v1/runtime/providers/templates). */
export const PROVIDER_TEMPLATES: readonly ProviderTemplate[] = [
  {
    type: 'openai_compatible',
    name: 'OpenAI-compatible chat completions',
    description:
      'Any chat-completions API: OpenAI, Azure OpenAI-compatible gateways, Ollama, vLLM, LM Studio, llama.cpp server. POST {base_url}/chat/completions with Authorization: Bearer <api_key> when a key is set.',
    api_key: 'optional',
    base_url: {
      required: true,
      default: 'https://api.openai.com/v1',
      description: 'Public https URL (loopback and private hosts only with KEEL_ALLOW_PRIVATE_URLS=true)',
    },
    capabilities: { text: true, image: true },
    defaults: { supports_text: true, supports_image: false, text_model: 'gpt-4o-mini', currency: 'USD' },
    settings: {
      ...COMMON_SETTINGS,
      region: { type: 'string', maxLength: 64, description: 'Where the upstream runs (for agent provider_region)' },
    },
    presets: [
      { name: 'OpenAI', base_url: 'https://api.openai.com/v1' },
      { name: 'Ollama', base_url: 'http://127.0.0.1:11434/v1', note: 'local: needs KEEL_ALLOW_PRIVATE_URLS=true' },
      { name: 'vLLM', base_url: 'http://127.0.0.1:8000/v1', note: 'local: needs KEEL_ALLOW_PRIVATE_URLS=true' },
      { name: 'LM Studio', base_url: 'http://127.0.0.1:1234/v1', note: 'local: needs KEEL_ALLOW_PRIVATE_URLS=true' },
    ],
  },
  {
    type: 'bedrock',
    name: 'Amazon Bedrock (Converse API)',
    description:
      "Managed models through the AWS SDK's Converse API (the provider layer guard uses). Credentials come from the AWS credential chain of the engine's host (environment, shared files, SSO, instance or container role), never from api_key. Text only.",
    api_key: 'unsupported',
    base_url: { required: false, default: null, description: 'Optional endpoint override (VPC endpoint)' },
    capabilities: { text: true, image: false },
    defaults: {
      supports_text: true,
      supports_image: false,
      text_model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
      currency: 'USD',
    },
    settings: {
      ...COMMON_SETTINGS,
      region: { type: 'string', maxLength: 64, required: true, description: 'AWS region, e.g. eu-central-1' },
    },
    presets: [],
  },
];

export function findTemplate(type: string): ProviderTemplate | undefined {
  return PROVIDER_TEMPLATES.find((template) => template.type === type);
}

/** Problems of a settings object against a template (unknown keys, types, bounds, required keys). */
export function settingsProblems(template: ProviderTemplate, settings: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(settings)) {
    const rule = template.settings[key];
    if (!rule) {
      problems.push(`settings.${key} is not a setting of ${template.type}`);
      continue;
    }
    const ok =
      rule.type === 'boolean'
        ? typeof value === 'boolean'
        : rule.type === 'string'
          ? typeof value === 'string' && value.length > 0 && value.length <= (rule.maxLength ?? 255)
          : typeof value === 'number' &&
            Number.isFinite(value) &&
            (rule.type === 'number' || Number.isInteger(value)) &&
            value >= (rule.minimum ?? Number.NEGATIVE_INFINITY) &&
            value <= (rule.maximum ?? Number.POSITIVE_INFINITY);
    if (!ok) {
      const bounds = rule.minimum !== undefined ? ` from ${rule.minimum} to ${rule.maximum}` : '';
      problems.push(`settings.${key} must be ${rule.type === 'integer' ? 'an integer' : `a ${rule.type}`}${bounds}`);
    }
  }
  for (const [key, rule] of Object.entries(template.settings))
    if (rule.required && settings[key] === undefined) problems.push(`settings.${key} is required for ${template.type}`);
  return problems;
}
