import { type App, type Cache, createApp, migrateToLatest } from '@keel/core';
import type { ModelProvider } from '@keel/models';
import { createModelProvider } from '@keel/models';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createAiValidatorClient } from './ai/ai-validator.ts';
import { createAuditRecorder } from './audit/audit-recorder.ts';
import { createCallerResolver, createTokenDirectory, installGuardAuth, rateLimitKeyFor } from './auth/guard-auth.ts';
import type { GuardConfig } from './config.ts';
import type { GuardContext } from './context.ts';
import { guardMigrations } from './db/migrations/index.ts';
import type { GuardDb } from './db/schema.ts';
import { registerDetectRoutes } from './detect-api/detect-routes.ts';
import { registerGatewayRoutes } from './gateway/gateway-routes.ts';
import { registerListRoutes } from './lists/list-routes.ts';
import { GUARD_EXAMPLES } from './openapi-examples.ts';
import { registerPatternRoutes } from './patterns/pattern-routes.ts';
import { createUserWork } from './sandbox/user-work.ts';
import { createActiveConfigCache } from './state/active-config.ts';
import { seedDefaultPatterns } from './system/seed.ts';
import { registerSystemRoutes } from './system/system-routes.ts';
import { registerTemplateRoutes } from './templates/template-routes.ts';
import { registerValidatorRoutes } from './validators/validator-routes.ts';

export const GUARD_VERSION = '2026-11-21';

export interface GuardAppOptions {
  config: GuardConfig;
  db: Kysely<GuardDb>;
  cache: Cache;
  /** Shared rate-limit counters when several instances run. */
  redis?: Redis | undefined;
  /** Where log lines go (stdout by default). */
  logStream?: NodeJS.WritableStream;
  /** Overrides the provider built from configuration (the gateway shares one). */
  provider?: ModelProvider | undefined;
}

/** Applies guard's migrations and seeds the default pattern library on first start. */
export async function prepareGuardDatabase(db: Kysely<GuardDb>): Promise<void> {
  await migrateToLatest(db, guardMigrations);
  await seedDefaultPatterns(db);
}

const DESCRIPTION = `PII and secret detection with a hybrid regex + AI confidence model, and the management APIs for
patterns, allow/block lists, validators and templates.

**Authentication.** When \`AUTH_ENABLED\` is true every endpoint except \`AUTH_PUBLIC_PATHS\` (default \`/healthz,/ready\`),
\`/openapi.json\` and \`/docs\` needs \`Authorization: Bearer <token name>\` for a token that holds the route's permission
(\`AUTH_TOKEN_PERMISSIONS\`); 401 when the credential is missing or unknown, 403 when it lacks the permission. Admin
routes also accept the legacy \`X-ADMIN-KEY\` header (value of \`ADMIN_KEY\`).

**Errors** use \`{"error": {"code", "message", "traceId", "details"?}}\`; every response carries \`x-request-id\`.
Write endpoints need \`Content-Type: application/json\` (415 otherwise). Bodies above \`MAX_REQUEST_SIZE_BYTES\` are a 413.
Rate limits answer 429 with \`Retry-After\` and the same error body.`;

/** Builds guard's HTTP app (not listening) on an already migrated database. */
export async function buildGuardApp(options: GuardAppOptions): Promise<{ app: App; ctx: GuardContext }> {
  const { config, db, cache } = options;
  const callerOf = createCallerResolver(config.auth, createTokenDirectory(config.auth));
  const app = await createApp({
    name: 'guard',
    version: GUARD_VERSION,
    description: DESCRIPTION,
    http: config.http,
    logLevel: config.core.logLevel,
    logFormat: config.core.logFormat,
    redis: options.redis,
    logStream: options.logStream,
    rateLimitKey: rateLimitKeyFor(callerOf),
    examples: GUARD_EXAMPLES,
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token name from AUTH_TOKEN_PERMISSIONS' },
      adminKey: { type: 'apiKey', in: 'header', name: 'X-ADMIN-KEY', description: 'Legacy admin key (ADMIN_KEY)' },
    },
    tags: [
      { name: 'detect', description: 'Detection and guardrails' },
      { name: 'gateway', description: 'OpenAI-compatible chat-completions gateway with input and output guardrails' },
      { name: 'patterns', description: 'Regex patterns' },
      { name: 'allowlist', description: 'Trusted values' },
      { name: 'blacklist', description: 'Forbidden values' },
      { name: 'validators', description: 'Guardrail validators' },
      { name: 'templates', description: 'Bulk import' },
      { name: 'system', description: 'Health, readiness and caches' },
    ],
  });
  installGuardAuth(app, config.auth, callerOf);

  const provider = options.provider ?? createModelProvider(config.ai);
  const ctx: GuardContext = {
    config,
    db,
    cache,
    activeConfig: await createActiveConfigCache(
      db,
      cache,
      {
        allowThreshold: config.detection.allowThreshold,
        blockThreshold: config.detection.blockThreshold,
        piiMode: config.detection.piiMode,
      },
      app.log,
    ),
    provider,
    aiValidator: provider ? createAiValidatorClient(provider, config.ai.model, config.ai.timeoutMs) : undefined,
    audit: createAuditRecorder(db, app.log, { retentionDays: config.audit.retentionDays }),
    userWork: createUserWork(),
    log: app.log,
  };
  app.addHook('onClose', async () => {
    await ctx.audit.close();
    await ctx.userWork.close();
    if (!options.provider) await provider?.close();
  });

  registerDetectRoutes(app, ctx);
  registerPatternRoutes(app, ctx);
  registerListRoutes(app, ctx, 'allowlist');
  registerListRoutes(app, ctx, 'blacklist');
  registerValidatorRoutes(app, ctx);
  registerTemplateRoutes(app, ctx);
  registerSystemRoutes(app, ctx);
  registerGatewayRoutes(app, ctx);
  return { app, ctx };
}
