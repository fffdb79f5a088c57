import type { App } from '@keel/core';
import { type Static, Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import { ACTION_TYPES } from '../runtime/actions.ts';
import {
  component,
  JsonRecord,
  Metadata,
  NullableTimestamp,
  OneOf,
  ref,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Uuid,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { getAgentConfig, putAgentConfig, selectAgentFlow, setServerAttachment } from './agent-service.ts';
import { SettingsSchema } from './agent-settings.ts';

const Labels = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 20 });
const ActionName = OneOf(ACTION_TYPES);

export const ProfileSchema = Type.Union([
  Type.Object(
    {
      priority: Type.Integer({ minimum: 0, maximum: 1000, description: 'Higher is evaluated first' }),
      channel: Type.Optional(Labels),
      client_capabilities: Type.Optional(
        Type.Object({
          vision: Type.Optional(Type.Boolean()),
          actions: Type.Optional(Type.Array(ActionName, { maxItems: 14, description: 'All must be supported' })),
        }),
      ),
      user_segment: Type.Optional(Labels),
      deployment: Type.Optional(Labels),
    },
    { description: 'Matches when every criterion given matches (metadata.user_segment, metadata.deployment)' },
  ),
  Type.Null(),
]);

export const AgentConfigSchema = component(
  'RtAgentConfig',
  Type.Object({
    agent_id: Type.String(),
    realm_id: Type.String(),
    name: Type.String(),
    status: Type.String(),
    system_prompt_id: Type.Union([Type.String(), Type.Null()]),
    ai_provider_id: Type.Union([Type.String(), Type.Null()]),
    default_flow_id: Type.Union([Type.String(), Type.Null()]),
    allowed_mcp_servers: Type.Array(Type.String()),
    metadata: Metadata,
    settings: JsonRecord({ description: 'Effective settings (defaults filled in)' }),
    profile: ProfileSchema,
    is_default: Type.Boolean(),
    updated_at: NullableTimestamp,
  }),
);

export const ConfigBody = Type.Object({
  realm_id: Type.Optional(Uuid()),
  system_prompt_id: Type.Optional(Type.Union([Uuid(), Type.Null()])),
  ai_provider_id: Type.Optional(Type.Union([Uuid(), Type.Null()], { description: 'Null: the realm default provider' })),
  default_flow_id: Type.Optional(Type.Union([Uuid(), Type.Null()])),
  allowed_mcp_servers: Type.Optional(Type.Array(Uuid(), { maxItems: 50 })),
  metadata: Type.Optional(Metadata),
  settings: Type.Optional(Type.Union([SettingsSchema, Type.Null()])),
  profile: Type.Optional(ProfileSchema),
  is_default: Type.Optional(Type.Boolean({ description: 'The realm default agent (one per realm)' })),
});

type AgentConfig = Static<typeof AgentConfigSchema>;

export function registerAgentRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['agents'], security: runtimeSecurity, params: Type.Object({ agentId: Uuid() }) };
  const ConfigRef = ref<AgentConfig>('RtAgentConfig');
  app.get(
    '/api/v1/runtime/agents/:agentId/config',
    {
      schema: {
        ...base,
        summary: 'Read an agent configuration',
        description:
          'Agents are created as agent identities (POST /api/v1/realms/{id}/agents); never configured = defaults.',
        response: { 200: ConfigRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => (await getAgentConfig(rt, principalOf(request), request.params.agentId)) as never,
  );
  app.put(
    '/api/v1/runtime/agents/:agentId/config',
    {
      schema: {
        ...base,
        summary: 'Replace an agent configuration',
        description:
          'Unsent fields take their defaults. Referenced prompt, provider, flow and tool servers must exist in the realm (404). `system_prompt_id` names a prompt; the agent runs the active version of its key. Settings bounds (400 outside them; node_timeout_ms ≤ max_latency_ms) are enforced on every execution. `profile` rules choose the agent when a request omits agent_id (descending priority; else the `is_default` agent).',
        body: ConfigBody,
        response: { 200: ConfigRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      (await putAgentConfig(rt, principalOf(request), request.params.agentId, request.body as never)) as never,
  );
  app.post(
    '/api/v1/runtime/agents/:agentId/mcp-servers',
    {
      schema: {
        ...base,
        summary: 'Attach an allowed tool server',
        description:
          "Adds a registered tool server of the realm to the agent's `allowed_mcp_servers` (at most 50; attaching twice changes nothing). Only attached servers are reachable from the agent's sessions and flows. Answers the configuration.",
        body: Type.Object({ server_id: Uuid() }, { examples: [{ server_id: '0194f3a2-7c1d-7abc-8def-0123456789ab' }] }),
        response: { 200: ConfigRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      (await setServerAttachment(
        rt,
        principalOf(request),
        request.params.agentId,
        request.body.server_id,
        true,
      )) as never,
  );
  app.post(
    '/api/v1/runtime/agents/:agentId/flows/:flowId/select',
    {
      schema: {
        ...base,
        summary: 'Select the active flow',
        description:
          "Makes an active flow of the realm the agent's flow (`default_flow_id`): a turn of the agent runs it when it names no `flow_id`, its session has no pinned flow and intent routing picks none. 404 for an unknown or foreign agent or flow; 409 FLOW_NOT_ACTIVE for a draft, deactivated or archived flow. Needs developer or above. Selecting the same flow again changes nothing. Answers the configuration.",
        params: Type.Object({ agentId: Uuid(), flowId: Uuid() }),
        response: { 200: ConfigRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      (await selectAgentFlow(rt, principalOf(request), request.params.agentId, request.params.flowId)) as never,
  );
  app.delete(
    '/api/v1/runtime/agents/:agentId/mcp-servers/:serverId',
    {
      schema: {
        ...base,
        summary: 'Detach a tool server',
        description: 'Removes it from `allowed_mcp_servers`; 404 when it is not attached. Answers the configuration.',
        params: Type.Object({ agentId: Uuid(), serverId: Uuid() }),
        response: { 200: ConfigRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      (await setServerAttachment(
        rt,
        principalOf(request),
        request.params.agentId,
        request.params.serverId,
        false,
      )) as never,
  );
}
