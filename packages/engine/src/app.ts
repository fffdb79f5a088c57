import {
  type App,
  type Cache,
  compactOpenApi,
  createApp,
  createGroupCommit,
  createSecretBox,
  createServiceReadiness,
  type OpenApiPart,
  type OperationExamples,
  type Readiness,
  type SecretBox,
  serveOpenApiParts,
} from '@keel/core';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { registerCartRoutes } from './catalog/cart-routes.ts';
import { registerProductRoutes } from './catalog/product-routes.ts';
import { createCatalogSearch } from './catalog/search/index.ts';
import type { EngineConfig } from './config.ts';
import type { EngineContext } from './context.ts';
import type { EngineDb } from './db/schema.ts';
import { installMerchantAuth, rateLimitKey } from './http/merchant-auth.ts';
import { installPaymentDataGuard } from './http/payment-data-guard.ts';
import { addSharedSchemas } from './http/schemas.ts';
import { registerCatalogMcp } from './mcp/catalog-mcp.ts';
import { registerMerchantRoutes } from './merchants/merchant-routes.ts';
import { createPrincipalCache } from './merchants/principal.ts';
import { ENGINE_MCP_EXAMPLES, ENGINE_REST_EXAMPLES, ENGINE_WEBHOOK_EXAMPLES } from './openapi-examples.ts';

import { registerProcurementRoutes } from './procurement/procurement-routes.ts';
import { RUNTIME_AUTH_DOC, RUNTIME_TAGS, registerRuntime } from './runtime/register-runtime.ts';
import type { RuntimeContext } from './runtime/runtime-context.ts';
import { registerSystemRoutes } from './system/system-routes.ts';
import { createDestinationCache } from './webhooks/destination-cache.ts';
import { registerDestinationRoutes } from './webhooks/destination-routes.ts';
import { registerIngressRoute } from './webhooks/ingress-routes.ts';

export const ENGINE_VERSION = '2026-11-21';

export interface EngineAppsOptions {
  config: EngineConfig;
  db: Kysely<EngineDb>;
  cache: Cache;
  /** The key for stored third-party secrets (from KEEL_SECRET_KEY or the generated key file). */
  secretKeyHex: string;
  redis?: Redis | undefined;
  logStream?: NodeJS.WritableStream;
  /** Wakes the delivery worker; a no-op when this process runs none. */
  notifyOutbox?: () => void;
  /** HS256 key of runtime bearer tokens (ENGINE_TOKEN_SIGNING_KEY or the generated key file); derived from secretKeyHex when absent. */
  tokenSigningKeyHex?: string | undefined;
  /** The runtime's clock (tests move time to expire tokens and sessions). */
  clock?: (() => number) | undefined;
}

export interface EngineApps {
  /** REST (`ENGINE_PORT`): catalog, keys, webhook destinations, procurement, `/api/webhooks/catalog`, and the runtime's routes. */
  rest: App;
  /** Public MCP endpoint (`ENGINE_MCP_PORT`): `POST /` and `POST /mcp`. */
  mcp: App;
  /** Webhook ingress (`ENGINE_WEBHOOK_PORT`): `/webhooks/catalog`, `/webhooks/procurement`. */
  webhook: App;
  ctx: EngineContext;
  /** The agent runtime (realms, providers, prompts, agents, sessions, chat) on the REST listener. */
  runtime: RuntimeContext;
  /** The readiness checks every listener runs (database, cache); the service adds its delivery worker. */
  readiness: Readiness;
  close(): Promise<void>;
}

export { prepareEngineDatabase } from './db/open.ts';

const AUTH = `**Authentication.** Catalog routes need a merchant key: \`Authorization: Bearer <key>\`, \`x-api-key\` or \`X-Catalog-API-Key\`.
Scopes: \`merchant\` (all its stores), \`store\` (one store), \`merchant_network\` (the merchant and its direct sub-merchants),
\`custom\` (selected stores). Missing, unknown, revoked or expired keys and keys of inactive merchants get 401; a store outside the
key's scope is a 403; a resource outside it is a 404 (ids never reveal other merchants' data).

**Errors** use \`{"error": {"code", "message", "traceId", "details"?}}\`; every response carries \`x-request-id\`. Writes need
\`Content-Type: application/json\` (415). Card numbers, verification codes and payment authentication fields are rejected with 400
wherever they appear in a body. Money is exact: prices and totals are decimal strings in responses, never floats.`;

const securitySchemes = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'Merchant key (catalog routes)' },
  runtimeToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Runtime bearer token from POST /api/v1/auth/token (runtime routes only)',
  },
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Merchant key (also X-API-Key)' },
  catalogApiKey: { type: 'apiKey', in: 'header', name: 'X-Catalog-API-Key', description: 'Merchant key' },
};

/**
 * The REST listener's document is large (catalog and runtime on one listener), so each area is also served on its own
 * at `<prefix>/openapi.json` with paths relative to the prefix: a tool with a size limit (the fuzzer reads at most
 * 256 KiB) or a client generator for one area reads that. `/openapi.json` and `/docs` keep the whole document.
 */
export const REST_OPENAPI_PARTS: readonly OpenApiPart[] = [
  { prefix: '/api/v1/catalog' },
  { prefix: '/api/v1/runtime' },
  { prefix: '/api', exclude: ['/api/v1/catalog', '/api/v1/runtime'] },
  { prefix: '/catalog' },
];

/** Builds the engine's three apps (not listening) around one shared context, on an already migrated database. */
export async function buildEngineApps(options: EngineAppsOptions): Promise<EngineApps> {
  const { config, db, cache } = options;
  const secrets: SecretBox = createSecretBox(options.secretKeyHex);
  const principals = await createPrincipalCache(db, cache);
  const destinations = await createDestinationCache(db, cache, secrets);
  const make = (
    name: string,
    description: string,
    tags: { name: string; description: string }[],
    examples: OperationExamples,
    ctx?: EngineContext,
  ) =>
    createApp({
      name,
      version: ENGINE_VERSION,
      description,
      http: config.http,
      logLevel: config.core.logLevel,
      logFormat: config.core.logFormat,
      redis: options.redis,
      logStream: options.logStream,
      ...(ctx ? { rateLimitKey: rateLimitKey(ctx) } : {}),
      securitySchemes,
      tags,
      transformOpenApi: compactOpenApi,
      examples,
    });

  // The context needs a logger; the REST app's is created first and shared.
  const ctx = {
    config,
    db,
    cache,
    secrets,
    principals,
    destinations,
    search: createCatalogSearch(db),
    writes: createGroupCommit(db),
    notifyOutbox: options.notifyOutbox ?? (() => undefined),
  } as EngineContext;

  const rest = await make(
    'engine',
    `The engine's REST API: the merchant catalog (stores, keys, products, carts, checkouts, orders), outbound webhook destinations and
their delivery log, procurement, the inbound webhook alias \`/api/webhooks/catalog\`, and the agent runtime (realms, providers,
prompts, agents, sessions, knowledge, chat and execute).\n\n${AUTH}\n\n${RUNTIME_AUTH_DOC}`,
    [
      { name: 'products', description: 'Products and search' },
      { name: 'carts', description: 'Carts and cart items' },
      { name: 'orders', description: 'Orders from checkouts' },
      { name: 'stores', description: 'Stores' },
      { name: 'keys', description: 'Merchant key lifecycle' },
      { name: 'webhooks', description: 'Outbound webhook destinations and delivery log' },
      { name: 'webhooks-inbound', description: 'Inbound webhook ingress' },
      { name: 'procurement', description: 'Suppliers, inventory items, procurement orders and quotes' },
      { name: 'system', description: 'Health and readiness' },
      ...RUNTIME_TAGS,
    ],
    ENGINE_REST_EXAMPLES,
    ctx,
  );
  ctx.log = rest.log;
  serveOpenApiParts(rest, REST_OPENAPI_PARTS);
  const webhook = await make(
    'engine-webhooks',
    `Inbound webhook ingress for merchant systems: catalog events at \`/webhooks/catalog\`, procurement events at \`/webhooks/procurement\`.\n\n${AUTH}`,
    [
      { name: 'webhooks-inbound', description: 'Inbound webhook ingress' },
      { name: 'system', description: 'Liveness and readiness' },
    ],
    ENGINE_WEBHOOK_EXAMPLES,
    ctx,
  );
  const mcp = await make(
    'engine-mcp',
    `The public tool endpoint (JSON-RPC, Model Context Protocol): \`POST /\` and \`POST /mcp\`. Catalog tools and the merchant commerce
reference contract, authenticated with a merchant key, and the Runtime group, authenticated with realm credentials (X-Engine-Realm-ID,
X-Engine-Access-Key, X-Engine-Secret-Key).\n\n${AUTH}`,
    [
      { name: 'mcp', description: 'JSON-RPC tool endpoint' },
      { name: 'system', description: 'Liveness and readiness' },
    ],
    ENGINE_MCP_EXAMPLES,
    ctx,
  );

  for (const app of [rest, webhook, mcp]) {
    addSharedSchemas(app);
    installMerchantAuth(app, ctx);
    installPaymentDataGuard(app);
  }

  const readiness = createServiceReadiness({ db, cache });
  registerSystemRoutes(rest, readiness, '/api/v1', { withJsonReady: true });
  registerMerchantRoutes(rest, ctx);
  registerProductRoutes(rest, ctx);
  registerCartRoutes(rest, ctx);
  registerDestinationRoutes(rest, ctx);
  registerProcurementRoutes(rest, ctx);
  registerIngressRoute(rest, ctx, '/api/webhooks/catalog', 'catalog');
  const runtime = await registerRuntime(rest, ctx, {
    secretKeyHex: options.secretKeyHex,
    tokenSigningKeyHex: options.tokenSigningKeyHex,
    clock: options.clock,
    redis: options.redis,
  });

  registerSystemRoutes(webhook, readiness, '', { withJsonReady: false });
  registerIngressRoute(webhook, ctx, '/webhooks/catalog', 'catalog');
  registerIngressRoute(webhook, ctx, '/webhooks/procurement', 'procurement');

  registerSystemRoutes(mcp, readiness, '', { withJsonReady: false });
  await registerCatalogMcp(mcp, ctx, { rt: runtime, rest });

  return {
    rest,
    mcp,
    webhook,
    ctx,
    runtime,
    readiness,
    close: async () => {
      await Promise.all([rest.close(), webhook.close(), mcp.close()]);
      await runtime.models.close();
    },
  };
}
