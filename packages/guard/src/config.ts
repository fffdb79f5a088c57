import { ConfigReader, type CoreConfig, type Env, type HttpConfig, readCoreConfig, readHttpConfig } from '@keel/core';

export const PERMISSIONS = [
  'detect:read',
  'gateway:use',
  'patterns:admin',
  'validators:admin',
  'allowlist:admin',
  'blacklist:admin',
  'templates:admin',
  'cache:admin',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export interface GuardConfig {
  core: CoreConfig;
  http: HttpConfig;
  auth: {
    enabled: boolean;
    requireBearerToken: boolean;
    /** Token name → the permissions it holds (`*` grants all). */
    tokenPermissions: ReadonlyMap<string, ReadonlySet<string>>;
    publicPaths: readonly string[];
    adminKey: string | undefined;
  };
  detection: {
    allowThreshold: number;
    blockThreshold: number;
    piiMode: 'MASK' | 'BLOCK';
    timeoutMs: number;
  };
  ai: {
    provider: 'CHAT_COMPLETIONS_COMPATIBLE' | 'MANAGED_MODEL';
    modelUrl: string | undefined;
    apiKey: string | undefined;
    model: string;
    timeoutMs: number;
    cacheTtlMs: number;
    managedModel: { region: string | undefined; modelId: string | undefined; endpointOverride: string | undefined };
  };
  audit: { retentionDays: number };
  gateway: GatewayConfig;
  /** Processes serving guard's port (Node cluster); 1 runs guard inside the `keel start` process. */
  workers: number | 'auto';
}

/** Where stream-async security events go: JSON lines to stdout or a file, or POSTed to an HTTP(S) endpoint. */
export type SecurityEventSink = { kind: 'stdout' } | { kind: 'file'; path: string } | { kind: 'http'; url: string };

export interface GatewayConfig {
  /** GATEWAY_BLOCK_MODE: BLOCK answers 400 gw_content_blocked; MASK and WARN answer 200 with masked segments. */
  blockMode: 'BLOCK' | 'MASK' | 'WARN';
  securityEvents: SecurityEventSink;
  /** GATEWAY_TIMEOUT_MS: the whole /v1/chat/completions call, streaming included (spec: 300 s). */
  timeoutMs: number;
  /** GATEWAY_STREAM_HOLDBACK_MAX_CHARS: the longest tail stream-sync holds back per choice before failing closed. */
  holdbackMaxChars: number;
  /** GATEWAY_TOOL_ARGUMENTS_MAX_CHARS: the longest tool-call argument string stream-sync reassembles. */
  toolArgumentsMaxChars: number;
}

function parseSecurityEventSink(reader: ConfigReader, allowPrivateUrls: boolean): SecurityEventSink {
  const raw = reader.string('GATEWAY_SECURITY_EVENTS', 'stdout');
  if (raw === 'stdout') return { kind: 'stdout' };
  if (raw.startsWith('file:')) {
    const file = raw.slice('file:'.length);
    if (file.startsWith('/')) return { kind: 'file', path: file };
  } else if (raw.startsWith('https://') || (allowPrivateUrls && raw.startsWith('http://'))) {
    try {
      new URL(raw);
      return { kind: 'http', url: raw };
    } catch {
      // reported below
    }
  }
  reader.problem(
    'GATEWAY_SECURITY_EVENTS must be stdout, file:/absolute/path or an https:// URL (http:// only with KEEL_ALLOW_PRIVATE_URLS=true)',
  );
  return { kind: 'stdout' };
}

function readGatewayConfig(reader: ConfigReader, allowPrivateUrls: boolean): GatewayConfig {
  return {
    blockMode: reader.oneOf('GATEWAY_BLOCK_MODE', ['BLOCK', 'MASK', 'WARN'] as const, 'BLOCK'),
    securityEvents: parseSecurityEventSink(reader, allowPrivateUrls),
    timeoutMs: reader.int('GATEWAY_TIMEOUT_MS', 300_000, { min: 100, max: 3_600_000 }),
    holdbackMaxChars: reader.int('GATEWAY_STREAM_HOLDBACK_MAX_CHARS', 8192, { min: 256, max: 1_048_576 }),
    toolArgumentsMaxChars: reader.int('GATEWAY_TOOL_ARGUMENTS_MAX_CHARS', 1_048_576, { min: 1024, max: 16_777_216 }),
  };
}

function parseTokenPermissions(reader: ConfigReader, raw: string | undefined): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  if (!raw) return map;
  for (const entry of raw.split(',')) {
    const trimmed = entry.trim();
    if (!trimmed) continue;
    const eq = trimmed.indexOf('=');
    const name = eq > 0 ? trimmed.slice(0, eq).trim() : '';
    const permission = eq > 0 ? trimmed.slice(eq + 1).trim() : '';
    if (!name || !permission) {
      reader.problem('AUTH_TOKEN_PERMISSIONS must look like <token_name>=<permission>[,<token_name>=<permission>…]');
      continue;
    }
    if (permission !== '*' && !(PERMISSIONS as readonly string[]).includes(permission)) {
      reader.problem(
        `AUTH_TOKEN_PERMISSIONS names an unknown permission "${permission}" (known: *, ${PERMISSIONS.join(', ')})`,
      );
      continue;
    }
    const set = map.get(name) ?? new Set();
    map.set(name, set);
    set.add(permission);
  }
  return map;
}

/** Reads guard's configuration (the spec's variables plus the shared ones); throws ConfigError naming every bad one. */
export function readGuardConfig(env: Env): GuardConfig {
  const reader = new ConfigReader(env);
  const core = readCoreConfig(reader);
  const http = readHttpConfig(reader);
  const enabled = reader.bool('AUTH_ENABLED', false);
  const tokenPermissions = parseTokenPermissions(reader, reader.optionalString('AUTH_TOKEN_PERMISSIONS'));
  const adminKey = reader.optionalString('ADMIN_KEY');
  if (enabled && tokenPermissions.size === 0 && !adminKey) {
    reader.problem('AUTH_ENABLED is true but neither AUTH_TOKEN_PERMISSIONS nor ADMIN_KEY grants anything');
  }
  const allowThreshold = reader.number('CONFIDENCE_ALLOW_THRESHOLD', 0.3, { min: 0, max: 1 });
  const blockThreshold = reader.number('CONFIDENCE_BLOCK_THRESHOLD', 0.85, { min: 0, max: 1 });
  if (allowThreshold > blockThreshold) {
    reader.problem('CONFIDENCE_ALLOW_THRESHOLD must not be greater than CONFIDENCE_BLOCK_THRESHOLD');
  }
  const provider = reader.oneOf(
    'AI_PROVIDER',
    ['CHAT_COMPLETIONS_COMPATIBLE', 'MANAGED_MODEL'] as const,
    'CHAT_COMPLETIONS_COMPATIBLE',
  );
  const managedModel = {
    region: reader.optionalString('MANAGED_MODEL_REGION'),
    modelId: reader.optionalString('MANAGED_MODEL_ID'),
    endpointOverride: reader.url('MANAGED_MODEL_ENDPOINT_OVERRIDE', ['http:', 'https:']),
  };
  if (provider === 'MANAGED_MODEL' && !managedModel.region) {
    reader.problem('MANAGED_MODEL_REGION is required when AI_PROVIDER is MANAGED_MODEL');
  }
  const config: GuardConfig = {
    core,
    http,
    auth: {
      enabled,
      requireBearerToken: reader.bool('AUTH_REQUIRE_BEARER_TOKEN', true),
      tokenPermissions,
      publicPaths: reader.list('AUTH_PUBLIC_PATHS', ['/healthz', '/ready']),
      adminKey,
    },
    detection: {
      allowThreshold,
      blockThreshold,
      piiMode: reader.oneOf('PII_MODE', ['MASK', 'BLOCK'] as const, 'MASK'),
      timeoutMs: reader.int('DETECT_TIMEOUT_MS', 30_000, { min: 100, max: 300_000 }),
    },
    ai: {
      provider,
      modelUrl: reader.url('AI_MODEL_URL', ['http:', 'https:']),
      apiKey: reader.optionalString('AI_API_KEY'),
      model: reader.string('AI_MODEL', 'gpt-4o-mini'),
      timeoutMs: reader.int('AI_TIMEOUT_MS', 3000, { min: 100, max: 120_000 }),
      cacheTtlMs: 24 * 60 * 60 * 1000,
      managedModel,
    },
    audit: { retentionDays: reader.int('AUDIT_RETENTION_DAYS', 30, { min: 1, max: 3650 }) },
    gateway: readGatewayConfig(reader, core.allowPrivateUrls),
    workers:
      reader.optionalString('GUARD_WORKERS')?.toLowerCase() === 'auto'
        ? 'auto'
        : reader.int('GUARD_WORKERS', 1, { min: 1, max: 64 }),
  };
  reader.done();
  return config;
}
