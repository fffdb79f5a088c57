import type { App } from '@keel/core';
import { registerAgentRoutes } from '../agents/agent-routes.ts';
import { registerAnonymousRoutes } from '../anonymous/anonymous-routes.ts';
import { registerConfigurationRoutes } from '../configuration/configuration-routes.ts';
import type { EngineContext } from '../context.ts';
import { registerExecutionRoutes } from '../executions/execution-routes.ts';
import { registerFlowDraftRoutes } from '../flows/flow-draft-routes.ts';
import { registerFlowPromotionRoutes } from '../flows/flow-promotion-routes.ts';
import { registerFlowRoutes } from '../flows/flow-routes.ts';
import { registerFlowRoutingRoutes } from '../flows/flow-routing-routes.ts';
import { registerIdentityRoutes } from '../identity/identity-routes.ts';
import { installRuntimeAuth } from '../identity/runtime-auth.ts';
import { registerKnowledgeRoutes } from '../knowledge/knowledge-routes.ts';
import { registerPromptRoutes } from '../prompts/prompt-routes.ts';
import { registerProviderRoutes } from '../providers/provider-routes.ts';
import { registerSessionRoutes } from '../sessions/session-routes.ts';
import { registerToolServers } from '../toolservers/register-toolservers.ts';
import { addRuntimeSchemas } from './http-schemas.ts';
import { createRuntimeContext, type RuntimeContext, type RuntimeContextOptions } from './runtime-context.ts';
import { registerRuntimeRoutes } from './runtime-routes.ts';

/** OpenAPI tags of the runtime's routes. */
export const RUNTIME_TAGS = [
  { name: 'identity', description: 'Token exchange, registration, key pairs, identities' },
  { name: 'realms', description: 'Realms, members and roles, agent and service identities, theme' },
  { name: 'providers', description: 'Model providers (templates by type)' },
  { name: 'prompts', description: 'Prompt versions and activation' },
  { name: 'agents', description: 'Agent configuration and profile rules' },
  { name: 'sessions', description: 'Sessions, messages, resume tokens, typed state, user context, summaries' },
  { name: 'knowledge', description: 'Provenance-aware knowledge and search' },
  {
    name: 'tool-servers',
    description: 'MCP tool servers: registry, credentials, discovery, review, resources, proposals',
  },
  { name: 'tool-routing', description: 'Routing rules, route preview and traces, tool execution' },
  { name: 'flows', description: 'Flows: immutable versions, fixtures and tests, publish, activate, rollback, archive' },
  {
    name: 'executions',
    description: 'Durable flow executions: queue, state, cancel, retry, resume, approvals, events, actions',
  },
  { name: 'data', description: 'Anonymous events: PII removed and identifiers pseudonymized before storage' },
  { name: 'configuration', description: 'Portable configuration: schema, secret-free export, dry-run and deploy' },
  { name: 'runtime', description: 'Execute, chat, status, capabilities, client contract' },
];

export const RUNTIME_AUTH_DOC = `**Runtime** routes (\`/api/v1/auth/*\`, \`/api/v1/users/*\`, \`/api/v1/realms/*\`, \`/api/v1/runtime/*\`, \`/api/v1/data/*\`) use a short-lived
bearer token (scheme \`runtimeToken\`) from \`POST /api/v1/auth/token\` (\`access_key\` + \`secret_key\`); merchant keys do not work there and
runtime tokens do not work on catalog routes. A realm is the isolation boundary: the token's realm scopes every call, and an id from
another realm is a 404 like an unknown one; \`realm_id\` in a body must be the token's realm (403). Roles: owner > admin > developer >
operator > viewer (reading: any role; running sessions and chat: operator+; configuration: developer+; members and identities: admin+).
Runtime fields are snake_case; lists take \`limit\` (1–100, default 20) and \`cursor\` (the previous page's \`next_cursor\`).`;

/** Builds the runtime's context and registers its routes on the engine's REST app. */
export async function registerRuntime(
  rest: App,
  engine: EngineContext,
  options: RuntimeContextOptions,
): Promise<RuntimeContext> {
  const rt = await createRuntimeContext(engine, options);
  addRuntimeSchemas(rest);
  installRuntimeAuth(rest, rt.principals);
  registerIdentityRoutes(rest, rt);
  registerProviderRoutes(rest, rt);
  registerPromptRoutes(rest, rt);
  registerAgentRoutes(rest, rt);
  registerSessionRoutes(rest, rt);
  registerKnowledgeRoutes(rest, rt);
  registerFlowRoutes(rest, rt);
  registerFlowPromotionRoutes(rest, rt);
  registerFlowRoutingRoutes(rest, rt);
  registerFlowDraftRoutes(rest, rt);
  registerExecutionRoutes(rest, rt);
  registerAnonymousRoutes(rest, rt);
  registerRuntimeRoutes(rest, rt);
  await registerToolServers(rest, rt);
  registerConfigurationRoutes(rest, rt);
  return rt;
}
