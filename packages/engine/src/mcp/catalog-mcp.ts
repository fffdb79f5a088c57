import { type App, type McpTool, registerMcpEndpoint } from '@keel/core';
import { ENGINE_VERSION } from '../app.ts';
import type { EngineContext } from '../context.ts';
import { authenticateRequest } from '../http/merchant-auth.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { catalogGroupTools } from './catalog-group-tools.ts';
import type { Tool } from './mcp-tool-kit.ts';
import { publishedFlowMcpTools } from './published-flow-tools.ts';
import { referenceContractTools } from './reference-tools.ts';
import {
  authenticateRealmCaller,
  type EndpointCaller,
  isRealmCaller,
  RUNTIME_PERMISSION,
  runtimeGroupTools,
} from './runtime-tools.ts';

/** The catalog tool group and the merchant commerce reference contract. */
export function catalogTools(ctx: EngineContext): Tool[] {
  return [...catalogGroupTools(ctx), ...referenceContractTools(ctx)];
}

/**
 * Mounts the public MCP endpoint at `POST /` and `POST /mcp`. A merchant key reaches the catalog groups (its scope
 * applies to every tool); realm credentials (X-Engine-Realm-ID, X-Engine-Access-Key, X-Engine-Secret-Key) reach the
 * Runtime group. Each caller lists and calls only its own group.
 */
export async function registerCatalogMcp(
  app: App,
  ctx: EngineContext,
  runtime?: { rt: RuntimeContext; rest: App },
): Promise<void> {
  const tools: McpTool<EndpointCaller>[] = [
    ...(catalogTools(ctx) as unknown as McpTool<EndpointCaller>[]),
    ...(runtime ? runtimeGroupTools(runtime.rt, (options) => runtime.rest.inject(options as never) as never) : []),
  ];
  for (const path of ['/', '/mcp']) {
    await registerMcpEndpoint<EndpointCaller>(app, {
      path,
      serverInfo: { name: 'keel-engine', version: ENGINE_VERSION, title: 'Keel engine catalog tools' },
      instructions:
        'Catalog tools and the merchant commerce reference contract (merchant key: the merchant and its stores come from the key), and the Runtime group (realm credentials in X-Engine-Realm-ID, X-Engine-Access-Key, X-Engine-Secret-Key). Cart ids, checkout ids (chk_…) and handoff references are separate namespaces. Never send card data.',
      tools,
      principalTools: async (caller) =>
        runtime && isRealmCaller(caller) ? publishedFlowMcpTools(runtime.rt, caller) : [],
      authenticate: async (request) =>
        (runtime ? await authenticateRealmCaller(runtime.rt, request) : undefined) ??
        (await authenticateRequest(ctx, request)),
      authorize: (caller, permission) =>
        permission === RUNTIME_PERMISSION ? isRealmCaller(caller) : !isRealmCaller(caller),
      docs: {
        tags: ['mcp'],
        summary: path === '/' ? 'JSON-RPC tool endpoint' : 'JSON-RPC tool endpoint (alias path)',
        description:
          "Model Context Protocol over HTTP, stateless, JSON responses: `initialize`, `tools/list`, `tools/call` (2024-11-05 … 2025-11-25 and 2026-07-28 clients). Catalog groups: authenticate with the merchant key (Authorization: Bearer, x-api-key or X-Catalog-API-Key). Runtime group (`engine_api_request`, `engine_mcp_authenticate`, `engine_auth_register`, `engine_runtime_ai_chat`, `engine_runtime_list_providers`, `engine_runtime_mcp_execute_tool`, `engine_usage_summary`, and each active published flow of the realm as `engine_flow_<normalized_flow_name>_v<version>` with its contract's input and output schemas plus the controls `agentId`, `sessionId`, `idempotencyKey`; a deactivated or archived flow leaves later listings): send X-Engine-Realm-ID, X-Engine-Access-Key and X-Engine-Secret-Key of a realm service identity (all three; a realm id that is not the credentials' realm is a JSON-RPC -32003 with HTTP 403). When the realm headers are sent they decide, and only the Runtime group is listed; a merchant key lists only the catalog groups. A missing or invalid credential is a JSON-RPC error -32001 with HTTP 401. Bad arguments and business failures are tool results with `isError: true`.",
        security: [{ bearerAuth: [] }, { apiKey: [] }, { catalogApiKey: [] }],
      },
    });
  }
}
