import { Type } from 'typebox';
import { OneOf } from '../runtime/http-schemas.ts';

/** The bounded agent settings of the spec: [minimum, maximum, default]. Enforced at save time and at run time. */
export const SETTING_BOUNDS = {
  max_tool_calls: [0, 50, 8],
  max_latency_ms: [100, 300_000, 30_000],
  max_concurrency: [1, 1000, 20],
  max_dependency_concurrency: [1, 32, 4],
  node_timeout_ms: [100, 120_000, 20_000],
  max_node_retries: [0, 5, 1],
  retry_base_ms: [10, 10_000, 200],
  max_orchestration_depth: [1, 10, 3],
} as const;

export const QUALITY_TIERS = ['economy', 'standard', 'premium'] as const;
export const DATA_HANDLING = ['standard', 'no_retention'] as const;

export interface AgentSettings {
  max_tool_calls: number;
  max_latency_ms: number;
  max_concurrency: number;
  max_dependency_concurrency: number;
  node_timeout_ms: number;
  max_node_retries: number;
  retry_base_ms: number;
  /** Most an execution may cost, in the provider currency; null = no cap. */
  max_execution_cost: number | null;
  max_orchestration_depth: number;
  quality_tier: (typeof QUALITY_TIERS)[number];
  /** Required region of the provider (its `settings.region`); null = any. */
  provider_region: string | null;
  /** `no_retention`: message text is never stored and only zero-data-retention providers may serve. */
  data_handling: (typeof DATA_HANDLING)[number];
}

const bounded = (key: keyof typeof SETTING_BOUNDS, description: string) => {
  const [minimum, maximum, fallback] = SETTING_BOUNDS[key];
  return Type.Optional(Type.Integer({ minimum, maximum, description: `${description} (default ${fallback})` }));
};

/** The settings object of PUT .../config (every key optional; unsent keys take their defaults). */
export const SettingsSchema = Type.Object({
  max_tool_calls: bounded('max_tool_calls', 'Tool calls per execution'),
  max_latency_ms: bounded('max_latency_ms', 'Deadline of a whole execution'),
  max_concurrency: bounded(
    'max_concurrency',
    'Executions of this agent at once (chat/execute turns across instances when REDIS_URL is set; durable executions by their leases); 429 beyond',
  ),
  max_dependency_concurrency: bounded('max_dependency_concurrency', 'Tool or node calls in parallel'),
  node_timeout_ms: bounded('node_timeout_ms', 'Deadline of one node (a model or tool call); ≤ max_latency_ms'),
  max_node_retries: bounded('max_node_retries', 'Retries of a failed node (transient failures only)'),
  retry_base_ms: bounded('retry_base_ms', 'First retry delay; doubles each retry'),
  max_execution_cost: Type.Optional(
    Type.Union([Type.Number({ minimum: 0, maximum: 10_000 }), Type.Null()], {
      description: 'Cost cap in the provider currency (default none); estimated before each call',
    }),
  ),
  max_orchestration_depth: bounded('max_orchestration_depth', 'Nested subflows and agent handoffs'),
  quality_tier: Type.Optional(OneOf(QUALITY_TIERS, { default: 'standard' })),
  provider_region: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  data_handling: Type.Optional(OneOf(DATA_HANDLING, { default: 'standard' })),
});

/** Stored (partial) settings merged over the defaults. */
export function effectiveSettings(stored: Partial<AgentSettings> | null | undefined): AgentSettings {
  const settings = stored ?? {};
  const number = (key: keyof typeof SETTING_BOUNDS) => {
    const value = settings[key];
    return typeof value === 'number' ? value : SETTING_BOUNDS[key][2];
  };
  return {
    max_tool_calls: number('max_tool_calls'),
    max_latency_ms: number('max_latency_ms'),
    max_concurrency: number('max_concurrency'),
    max_dependency_concurrency: number('max_dependency_concurrency'),
    node_timeout_ms: number('node_timeout_ms'),
    max_node_retries: number('max_node_retries'),
    retry_base_ms: number('retry_base_ms'),
    max_execution_cost: typeof settings.max_execution_cost === 'number' ? settings.max_execution_cost : null,
    max_orchestration_depth: number('max_orchestration_depth'),
    quality_tier: settings.quality_tier ?? 'standard',
    provider_region: settings.provider_region ?? null,
    data_handling: settings.data_handling ?? 'standard',
  };
}
