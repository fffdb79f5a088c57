import { SETTING_BOUNDS } from '../agents/agent-settings.ts';
import { CONFIG_FORMAT } from '../configuration/configuration-schemas.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { PROVIDER_TEMPLATES } from '../providers/provider-templates.ts';
import { MAX_SESSION_MESSAGES } from '../sessions/session-service.ts';
import { ACTION_DESCRIPTIONS, ACTION_TYPES } from './actions.ts';
import { CONTRACT_VERSION } from './orchestrator.ts';
import type { RuntimeContext } from './runtime-context.ts';
import { realmRuntimeFacts } from './status-store.ts';

const ENGINE_RUNTIME_VERSION = '2026-11-22';

/** The realm's runtime: counts, defaults and configuration issues (what would stop a turn). */
export async function runtimeStatus(rt: RuntimeContext, principal: RuntimePrincipal) {
  const realmId = requirePermission(principal, 'config:read');
  const now = new Date(rt.clock()).toISOString();
  const facts = await realmRuntimeFacts(rt.db, realmId, now);
  const { defaultProvider } = facts;
  const issues: string[] = [];
  if (facts.activeProviders === 0) issues.push('no active provider');
  if (facts.agentsWithoutProvider > 0 && !defaultProvider)
    issues.push(`${facts.agentsWithoutProvider} agent(s) have no ai_provider_id and the realm has no default provider`);
  if (defaultProvider && !defaultProvider.is_active) issues.push('the default provider is inactive');
  if (!facts.defaultAgentId) issues.push('no default agent: requests without agent_id need a matching profile rule');
  return {
    realm_id: realmId,
    status: issues.length === 0 ? 'ready' : 'degraded',
    contract_version: CONTRACT_VERSION,
    counts: {
      providers: facts.providers,
      active_providers: facts.activeProviders,
      active_prompts: facts.activePrompts,
      agents: facts.agents,
      configured_agents: facts.configuredAgents,
      active_sessions: facts.activeSessions,
    },
    default_provider_id: defaultProvider?.id ?? null,
    default_agent_id: facts.defaultAgentId ?? null,
    issues,
    checked_at: now,
  };
}

function features(rt: RuntimeContext) {
  return {
    flows: rt.extensions.flows !== undefined,
    tool_servers: rt.extensions.toolServers !== undefined,
    async_executions: rt.extensions.flows !== undefined,
    streaming: false,
    sessions: true,
    knowledge_search: 'lexical',
    registration: rt.config.registrationEnabled,
  };
}

const LIMITS = {
  chat_messages_per_request: 50,
  message_characters: 16_000,
  session_messages: MAX_SESSION_MESSAGES,
  session_ttl_seconds: { minimum: 60, maximum: 2_592_000 },
  state_keys_per_session: 100,
  state_value_bytes: 16_384,
  user_context_bytes: 16_384,
  knowledge_content_characters: 20_000,
  list_page_size: { minimum: 1, maximum: 100 },
};

/** What this engine can do: contract versions, modes, provider types, actions, features, limits, settings bounds. */
export async function runtimeCapabilities(rt: RuntimeContext, principal: RuntimePrincipal) {
  requirePermission(principal, 'config:read');
  return {
    engine_version: ENGINE_RUNTIME_VERSION,
    contract_versions: [CONTRACT_VERSION],
    // `mode: async` queues the turn's flow as a durable execution: there only with the flow engine.
    modes: rt.extensions.flows ? ['sync', 'async'] : ['sync'],
    provider_types: PROVIDER_TEMPLATES.map((t) => t.type),
    normalized_actions: [...ACTION_TYPES],
    features: features(rt),
    token_ttl_seconds: rt.config.tokenTtlSeconds,
    limits: LIMITS,
    agent_setting_bounds: Object.fromEntries(
      Object.entries(SETTING_BOUNDS).map(([key, [minimum, maximum, fallback]]) => [
        key,
        { minimum, maximum, default: fallback },
      ]),
    ),
  };
}

const FALLBACK: Partial<Record<string, string>> = {
  OFFER_PRODUCT_ALTERNATIVES: 'RESPOND',
  RENDER_PRODUCT_ALTERNATIVES: 'DATA_RESULT',
  RENDER_PRODUCT_DETAILS: 'DATA_RESULT',
};

/** The versioned client contract of GET /api/v1/sdk/config. */
export function sdkConfig(rt: RuntimeContext, schemas: Record<string, unknown>) {
  const e = (method: string, path: string) => ({ method, path });
  return {
    contract_version: CONTRACT_VERSION,
    config_version: 1,
    base_path: '/api/v1',
    auth: {
      token_endpoint: e('POST', '/api/v1/auth/token'),
      request: ['access_key', 'secret_key'],
      token_type: 'Bearer',
      header: 'Authorization: Bearer <access_token>',
      token_ttl_seconds: rt.config.tokenTtlSeconds,
      refresh: 'exchange the key pair again shortly before expires_in elapses, and after any 401',
      resume_token: { header: 'X-Resume-Token', body_field: 'resume_token' },
    },
    endpoints: {
      execute: e('POST', '/api/v1/runtime/execute'),
      chat: e('POST', '/api/v1/runtime/ai/chat'),
      session_create: e('POST', '/api/v1/runtime/sessions'),
      session_get: e('GET', '/api/v1/runtime/sessions/{session_id}'),
      session_status: e('GET', '/api/v1/runtime/sessions/{session_id}/status'),
      session_messages: e('GET', '/api/v1/runtime/sessions/{session_id}/messages'),
      session_complete: e('POST', '/api/v1/runtime/sessions/{session_id}/complete'),
      session_cancel: e('POST', '/api/v1/runtime/sessions/{session_id}/cancel'),
      session_reset: e('POST', '/api/v1/runtime/sessions/{session_id}/reset'),
      resume_token_refresh: e('POST', '/api/v1/runtime/sessions/{session_id}/resume-token/refresh'),
      session_state: e('GET', '/api/v1/runtime/sessions/{session_id}/state'),
      session_message_add: e('POST', '/api/v1/runtime/sessions/{session_id}/messages'),
      session_state_set: e('PUT', '/api/v1/runtime/sessions/{session_id}/state'),
      execution_create: e('POST', '/api/v1/runtime/executions'),
      executions_list: e('GET', '/api/v1/runtime/executions'),
      execution_get: e('GET', '/api/v1/runtime/executions/{execution_id}'),
      execution_cancel: e('POST', '/api/v1/runtime/executions/{execution_id}/cancel'),
      execution_retry: e('POST', '/api/v1/runtime/executions/{execution_id}/retry'),
      execution_resume: e('POST', '/api/v1/runtime/executions/{execution_id}/resume'),
      execution_events: e('GET', '/api/v1/runtime/executions/{execution_id}/events'),
      execution_actions: e('GET', '/api/v1/runtime/executions/{execution_id}/actions'),
      approval_approve: e('POST', '/api/v1/runtime/executions/{execution_id}/approvals/{approval_id}/approve'),
      approval_deny: e('POST', '/api/v1/runtime/executions/{execution_id}/approvals/{approval_id}/deny'),
      capabilities: e('GET', '/api/v1/runtime/capabilities'),
      status: e('GET', '/api/v1/runtime/status'),
      configuration_schema: e('GET', '/api/v1/runtime/configuration/schema'),
      configuration_export: e('GET', '/api/v1/runtime/configuration/export'),
      configuration_deploy: e('POST', '/api/v1/runtime/configuration/deploy'),
    },
    versioning: {
      contract_versions: [CONTRACT_VERSION],
      pin: 'send `version` on execute to pin the contract; omitted, the current one applies',
      configuration_format: CONFIG_FORMAT,
      configuration_schema: e('GET', '/api/v1/runtime/configuration/schema'),
    },
    transports: [
      { type: 'rest', content_type: 'application/json', base_path: '/api/v1', streaming: false },
      {
        type: 'mcp',
        description: 'JSON-RPC tool endpoint on the engine MCP listener (POST / or /mcp)',
        protocol_versions: ['2024-11-05', '2025-03-26', '2025-06-18'],
      },
      {
        type: 'sse',
        description:
          'Execution events as Server-Sent Events: GET execution_events with Accept: text/event-stream; resume with Last-Event-ID (a stream ends after 10 minutes; a keepalive comment every 15 s)',
        endpoint: e('GET', '/api/v1/runtime/executions/{execution_id}/events'),
        resume_header: 'Last-Event-ID',
      },
    ],
    normalized_actions: ACTION_TYPES.map((type) => ({
      type,
      description: ACTION_DESCRIPTIONS[type],
      fallback: FALLBACK[type] ?? null,
    })),
    client_downgrades: {
      rule: 'When client_capabilities.actions is sent, an unsupported OFFER_PRODUCT_ALTERNATIVES becomes RESPOND, and an unsupported RENDER_PRODUCT_ALTERNATIVES or RENDER_PRODUCT_DETAILS becomes DATA_RESULT with metadata.original_type',
    },
    schemas,
    limits: LIMITS,
    features: features(rt),
  };
}
