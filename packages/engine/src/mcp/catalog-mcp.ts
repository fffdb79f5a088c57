import { type App, registerMcpEndpoint } from '@keel/core';
import { ENGINE_VERSION } from '../app.ts';
import type { EngineContext } from '../context.ts';
import { authenticateRequest } from '../http/merchant-auth.ts';
import type { Principal } from '../merchants/principal.ts';
import { catalogGroupTools } from './catalog-group-tools.ts';
import type { Tool } from './mcp-tool-kit.ts';
import { referenceContractTools } from './reference-tools.ts';

/** The catalog tool group and the merchant commerce reference contract. */
export function catalogTools(ctx: EngineContext): Tool[] {
  return [...catalogGroupTools(ctx), ...referenceContractTools(ctx)];
}

/** Mounts the public MCP endpoint at `POST /` and `POST /mcp`: the merchant key authenticates, its scope applies to every tool. */
export async function registerCatalogMcp(app: App, ctx: EngineContext): Promise<void> {
  const tools = catalogTools(ctx);
  for (const path of ['/', '/mcp']) {
    await registerMcpEndpoint<Principal>(app, {
      path,
      serverInfo: { name: 'keel-engine', version: ENGINE_VERSION, title: 'Keel engine catalog tools' },
      instructions:
        'Catalog tools and the merchant commerce reference contract. The merchant and its stores come from the key. Cart ids, checkout ids (chk_…) and handoff references are separate namespaces. Never send card data.',
      tools,
      authenticate: (request) => authenticateRequest(ctx, request),
      authorize: () => true,
      docs: {
        tags: ['mcp'],
        summary: path === '/' ? 'JSON-RPC tool endpoint' : 'JSON-RPC tool endpoint (alias path)',
        description:
          'Model Context Protocol over HTTP, stateless, JSON responses: `initialize`, `tools/list`, `tools/call` (2024-11-05 … 2025-11-25 and 2026-07-28 clients). Authenticate with the merchant key (Authorization: Bearer, x-api-key or X-Catalog-API-Key); a missing or invalid key is a JSON-RPC error -32001 with HTTP 401. Bad arguments and business failures are tool results with `isError: true`.',
        security: [{ bearerAuth: [] }, { apiKey: [] }, { catalogApiKey: [] }],
      },
    });
  }
}
