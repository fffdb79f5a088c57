import type { App } from '@keel/core';
import { registerAgentRoutes } from '../agents/agent-routes.ts';
import { registerAnonymousRoutes } from '../anonymous/anonymous-routes.ts';
import { createCatalogActivityRecorder } from '../anonymous/catalog-events.ts';
import { registerConfigurationRoutes } from '../configuration/configuration-routes.ts';
import type { EngineContext } from '../context.ts';
import { registerExecutionRoutes } from '../executions/execution-routes.ts';
import { createFlowChatEngine } from '../flows/flow-chat-service.ts';
import { registerFlowDraftRoutes } from '../flows/flow-draft-routes.ts';
import { registerFlowPromotionRoutes } from '../flows/flow-promotion-routes.ts';
import { registerFlowRoutes } from '../flows/flow-routes.ts';
import { registerFlowRoutingRoutes } from '../flows/flow-routing-routes.ts';
import { registerFlowTriggerRoutes } from '../flows/flow-trigger-routes.ts';
import { registerGovernanceRoutes } from '../governance/governance-routes.ts';
import { registerIdentityRoutes } from '../identity/identity-routes.ts';
import { installRuntimeAuth } from '../identity/runtime-auth.ts';
import { registerIntegrationRoutes } from '../integrations/integration-routes.ts';
import { registerRuntimeWebhookRoutes } from '../integrations/runtime-webhook-routes.ts';
import { registerKnowledgeRoutes } from '../knowledge/knowledge-routes.ts';
import { createCatalogFlowTools, createCatalogPort, productCatalog } from '../mcp/catalog-flow-tools.ts';
import { registerObservabilityRoutes } from '../observability/observability-routes.ts';
import { createObservabilityRecorder } from '../observability/observability-service.ts';
import { registerPromptRoutes } from '../prompts/prompt-routes.ts';
import { registerProviderRoutes } from '../providers/provider-routes.ts';
import { registerSessionRoutes } from '../sessions/session-routes.ts';
import { registerToolServers } from '../toolservers/register-toolservers.ts';
import { registerUsageRoutes } from '../usage/usage-routes.ts';
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
  { name: 'usage', description: 'AI usage priced from provider prices, usage entries, summaries, streamed exports' },
  {
    name: 'integrations',
    description: 'Integration clients (one-time secrets, rotation with overlap) and runtime webhooks',
  },
  {
    name: 'governance',
    description:
      'Policy versions, maker-checker allowlists, quotas, evaluation datasets and runs, deployment profiles, support access, lawful requests, audit',
  },
  { name: 'configuration', description: 'Portable configuration: schema, secret-free export, dry-run and deploy' },
  { name: 'runtime', description: 'Execute, chat, status, capabilities, client contract' },
  { name: 'observability', description: 'Structured events, trace timelines, realm metrics and alert rules' },
];

export const RUNTIME_AUTH_DOC = `**Runtime** routes (\`/api/v1/auth/*\`, \`/api/v1/users/*\`, \`/api/v1/realms/*\`, \`/api/v1/runtime/*\`, \`/api/v1/data/*\`, \`/api/v1/usages*\`,
\`/api/v1/integrations/*\`, \`/api/v1/governance*\`, \`/api/v1/observability/*\`) use a short-lived
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
  rest.addHook('onClose', async () => rt.turns.close());
  rt.extensions.flows = createFlowChatEngine(rt);
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
  registerFlowTriggerRoutes(rest, rt);
  registerExecutionRoutes(rest, rt);
  registerAnonymousRoutes(rest, rt);
  registerUsageRoutes(rest, rt);
  registerIntegrationRoutes(rest, rt);
  registerRuntimeWebhookRoutes(rest, rt);
  registerGovernanceRoutes(rest, rt);
  registerRuntimeRoutes(rest, rt);
  const observability = createObservabilityRecorder(rt);
  rest.addHook('onClose', () => observability.close());
  registerObservabilityRoutes(rest, rt, observability);
  await registerToolServers(rest, rt);
  // Catalog tools of flows run in-process against the realm's linked merchant; other tools go to the registry.
  rt.extensions.flowTools = createCatalogFlowTools(engine, rt.extensions.flowTools);
  rt.extensions.catalog = createCatalogPort(engine);
  rt.extensions.products = productCatalog(rt.extensions.catalog);
  // The catalog records anonymous events in the realm its merchant is linked to (after the fact, off the request path).
  const activity = createCatalogActivityRecorder(rt);
  engine.catalogActivity = activity;
  rest.addHook('onClose', () => activity.close());
  registerConfigurationRoutes(rest, rt);
  return rt;
}
