import {
  type App,
  type Cache,
  compactOpenApi,
  createApp,
  createServiceReadiness,
  registerHealthRoutes,
  type SecretBox,
  sha256Hex,
} from '@keel/core';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { registerActionRoutes } from './actions/action-routes.ts';
import { GEO_VERSION } from './app-version.ts';
import { isKnownKeyHash, presentedApiKey } from './auth/geo-auth.ts';
import type { GeoConfig } from './config.ts';
import type { GeoContext } from './context.ts';
import { registerDatasetRoutes } from './datasets/dataset-routes.ts';
import { geoSecretBox } from './db/open.ts';
import type { GeoDb } from './db/schema.ts';
import { registerEventRoutes } from './events/event-routes.ts';
import { registerExportRoutes } from './exports/export-routes.ts';
import { registerGraphRoutes } from './graph/graph-routes.ts';
import { registerKeyRoutes } from './keys/key-routes.ts';
import { registerGeoMcp } from './mcp/geo-tools.ts';
import { registerMeasureRoutes } from './measure/measure-routes.ts';
import { startMeasureWorker } from './measure/measure-worker.ts';
import { GEO_EXAMPLES } from './openapi-examples.ts';
import { registerPrivacyRoutes } from './privacy/privacy-routes.ts';
import { registerShareRoutes } from './shares/share-routes.ts';
import { registerViewRoutes } from './views/view-routes.ts';
import { startGeoWorker } from './worker/geo-worker.ts';

export { GEO_VERSION } from './app-version.ts';

export interface GeoAppOptions {
  config: GeoConfig;
  db: Kysely<GeoDb>;
  cache: Cache;
  redis?: Redis | undefined;
  logStream?: NodeJS.WritableStream;
  /** A clock for tests (expiry, salt rotation); the system clock by default. */
  now?: () => Date;
  /** Seals stored secrets; built from KEEL_SECRET_KEY (or the key generated into KEEL_DATA_DIR) when absent. */
  secrets?: SecretBox;
  /** Runs the background worker (privacy requests, exports) in this process. */
  startWorker?: boolean;
}

export { geoSecretBox, prepareGeoDatabase } from './db/open.ts';

const DESCRIPTION = `Workspace measurement for generative engine optimization (Document 1): versioned datasets, the target
graph, pseudonymous privacy requests, exports, an MCP tool endpoint, consent-aware tracking-event ingestion and
dashboard shares and saved views.

**Authentication.** Every endpoint except tracking-event ingestion, the tracker script, shared dashboards,
\`/openapi.json\` and \`/docs\` takes an API key as \`Authorization: Bearer <key>\` or \`x-api-key: <key>\`. A key belongs
to a tenant, is scoped to the tenant, one workspace or a custom set of workspaces, and holds permissions
(\`geo:read\`, \`geo:signals:write\`, \`geo:draft\`, \`geo:approve\`, \`geo:execute\`, \`geo:write\`). 401: missing, unknown
or revoked key. 403: missing permission, expired key, or workspace denial — a workspace of another tenant, one
outside the key's scope and one that does not exist all get the same 403 \`GEO_WORKSPACE_DENIED\`.

**Errors** are \`{"error": {"code", "message", "traceId", "details"?}}\` (the MCP endpoint answers JSON-RPC error
objects); every response carries \`x-request-id\`. Writes need \`Content-Type: application/json\` (415); bodies above
\`MAX_REQUEST_SIZE_BYTES\` are a 413; rate limits answer 429 with \`Retry-After\` (per key, else per address).
Clients must not retry 401, 403, 409 or 422 as transient failures.

**Versioning.** This description is version \`2026-09-20\`. Paths under \`/api/v1/geo\` (events: \`/api/v2/geo\`) keep
their shapes; additions are backwards compatible (new optional fields, new endpoints); a breaking change gets a new
path version and the old one stays served for at least 12 months after a \`Deprecation\` header announces it.
Timestamps are ISO 8601 UTC; each workspace has an explicit reporting time zone.`;

/**
 * Rate-limit key: a known API key counts on its own (so one busy integration does not starve others behind the same
 * address); anything else — no key, or a key never seen valid — counts on the client address, so inventing keys
 * does not buy fresh budgets.
 */
function rateLimitKey(request: FastifyRequest): string {
  const key = presentedApiKey(request);
  if (key) {
    const hash = sha256Hex(key);
    if (isKnownKeyHash(hash)) return `key:${hash.slice(0, 24)}`;
  }
  return `ip:${request.ip}`;
}

/** Builds geo's HTTP app (not listening) on an already migrated database. */
export async function buildGeoApp(options: GeoAppOptions): Promise<{ app: App; ctx: GeoContext }> {
  const { config, db, cache } = options;
  const app = await createApp({
    name: 'geo',
    version: GEO_VERSION,
    description: DESCRIPTION,
    http: config.http,
    logLevel: config.core.logLevel,
    logFormat: config.core.logFormat,
    examples: GEO_EXAMPLES,
    redis: options.redis,
    logStream: options.logStream,
    rateLimitKey,
    transformOpenApi: compactOpenApi,
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'A geo API key' },
      apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'A geo API key' },
      siteToken: {
        type: 'apiKey',
        in: 'header',
        name: 'x-site-token',
        description: 'A site token (tracking-event ingestion only)',
      },
    },
    tags: [
      { name: 'analytics', description: 'Datasets and signals' },
      { name: 'actions', description: 'Governed actions' },
      { name: 'target-graph', description: 'Targets and relations' },
      { name: 'privacy', description: 'Pseudonymous privacy requests' },
      { name: 'exports', description: 'Exports' },
      { name: 'mcp', description: 'JSON-RPC tool endpoint' },
      { name: 'events', description: 'Tracking-event ingestion' },
      { name: 'shares', description: 'Dashboard shares' },
      { name: 'keys', description: 'API keys and site tokens' },
      { name: 'system', description: 'Liveness and readiness' },
      { name: 'measurement', description: 'Tracked prompts, engines, runs, answers and schedules' },
      { name: 'saved-views', description: 'Saved views over the datasets (filters, sort, grouping, charts)' },
    ],
  });
  const ctx: GeoContext = {
    config,
    db,
    cache,
    log: app.log,
    secrets: options.secrets ?? geoSecretBox(config),
    now: options.now ?? (() => new Date()),
  };

  registerDatasetRoutes(app, ctx);
  registerActionRoutes(app, ctx);
  registerGraphRoutes(app, ctx);
  registerEventRoutes(app, ctx);
  registerPrivacyRoutes(app, ctx);
  registerExportRoutes(app, ctx);
  registerShareRoutes(app, ctx);
  registerKeyRoutes(app, ctx);
  registerMeasureRoutes(app, ctx);
  registerViewRoutes(app, ctx);
  await registerGeoMcp(app, ctx);
  const readiness = createServiceReadiness({ db, cache });
  registerHealthRoutes(app, readiness);
  if (options.startWorker) {
    const worker = startGeoWorker(ctx);
    readiness.add('geo-worker', () => worker.check());
    const measureWorker = startMeasureWorker(ctx);
    readiness.add('geo-measure-worker', () => measureWorker.check());
    app.addHook('onClose', () => Promise.all([worker.stop(), measureWorker.stop()]).then(() => undefined));
  }
  return { app, ctx };
}
