import path from 'node:path';
import { LOG_FORMATS, type LogFormat } from './http/log-format.ts';

export type Env = Readonly<Record<string, string | undefined>>;

/** Thrown when an environment variable has a value Keel cannot use; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

interface NumberRule {
  min?: number;
  max?: number;
}

/**
 * Reads typed values out of an environment. Every problem is collected, so one start-up error lists every
 * bad variable at once; `done()` throws it. Values of variables marked secret are never echoed.
 */
export class ConfigReader {
  readonly #env: Env;
  readonly #problems: string[] = [];

  constructor(env: Env) {
    this.#env = env;
  }

  #raw(name: string): string | undefined {
    const value = this.#env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  #fail(name: string, expected: string, value: string, secret = false): void {
    this.#problems.push(`${name} must be ${expected} (got ${secret ? 'a value that is not' : JSON.stringify(value)})`);
  }

  string(name: string, fallback: string): string {
    return this.#raw(name) ?? fallback;
  }

  optionalString(name: string): string | undefined {
    return this.#raw(name);
  }

  int(name: string, fallback: number, rule: NumberRule = {}): number {
    const value = this.#raw(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = rule;
    if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
      this.#fail(name, `an integer from ${min} to ${max}`, value);
      return fallback;
    }
    return n;
  }

  number(name: string, fallback: number, rule: NumberRule = {}): number {
    const value = this.#raw(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    const { min = -Number.MAX_VALUE, max = Number.MAX_VALUE } = rule;
    if (!/^-?\d+(\.\d+)?$/.test(value) || !Number.isFinite(n) || n < min || n > max) {
      this.#fail(name, `a number from ${min} to ${max}`, value);
      return fallback;
    }
    return n;
  }

  port(name: string, fallback: number): number {
    return this.int(name, fallback, { min: 0, max: 65535 });
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.#raw(name);
    if (value === undefined) return fallback;
    const lower = value.toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(lower)) return true;
    if (['false', '0', 'no', 'off'].includes(lower)) return false;
    this.#fail(name, 'true or false', value);
    return fallback;
  }

  oneOf<const T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const value = this.#raw(name);
    if (value === undefined) return fallback;
    const match = choices.find((choice) => choice.toLowerCase() === value.toLowerCase());
    if (!match) {
      this.#fail(name, `one of ${choices.join(', ')}`, value);
      return fallback;
    }
    return match;
  }

  list(name: string, fallback: readonly string[]): string[] {
    const value = this.#raw(name);
    if (value === undefined) return [...fallback];
    return value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  }

  url(
    name: string,
    protocols: readonly string[],
    options: { secret?: boolean; expected?: string } = {},
  ): string | undefined {
    const value = this.#raw(name);
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
      return value;
    } catch {
      const expected = options.expected ?? `a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`;
      this.#fail(name, expected, value, options.secret);
      return undefined;
    }
  }

  /** Records a problem found by a rule that spans several variables. */
  problem(message: string): void {
    this.#problems.push(message);
  }

  /** Throws one ConfigError listing every problem found so far. */
  done(): void {
    if (this.#problems.length > 0) {
      throw new ConfigError(`Invalid configuration:\n  - ${this.#problems.join('\n  - ')}`);
    }
  }
}

export interface CoreConfig {
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  secretKey: string | undefined;
  allowPrivateUrls: boolean;
  logLevel: string;
  logFormat: LogFormat;
  ports: { guard: number; geo: number; engine: number; engineMcp: number; engineWebhook: number };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Reads the configuration every service shares (DESIGN.md, "Configuration names"). */
export function readCoreConfig(reader: ConfigReader): CoreConfig {
  const databaseUrl = reader.url('DATABASE_URL', ['postgres:', 'postgresql:', 'sqlite:', 'file:'], {
    secret: true,
    expected: 'a postgres://USER@HOST/DATABASE URL (PostgreSQL) or sqlite:PATH (another SQLite file)',
  });
  const secretKey = reader.optionalString('KEEL_SECRET_KEY');
  if (secretKey !== undefined && !/^[0-9a-fA-F]{64}$/.test(secretKey)) {
    reader.problem('KEEL_SECRET_KEY must be 64 hexadecimal characters (a 256-bit key)');
  }
  return {
    host: reader.string('KEEL_HOST', '127.0.0.1'),
    dataDir: path.resolve(reader.string('KEEL_DATA_DIR', './data')),
    databaseUrl,
    redisUrl: reader.url('REDIS_URL', ['redis:', 'rediss:'], { secret: true }),
    secretKey,
    allowPrivateUrls: reader.bool('KEEL_ALLOW_PRIVATE_URLS', false),
    logLevel: reader.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: reader.oneOf('LOG_FORMAT', LOG_FORMATS, 'auto'),
    ports: {
      guard: reader.port('GUARD_PORT', 8081),
      geo: reader.port('GEO_PORT', 8082),
      engine: reader.port('ENGINE_PORT', 8083),
      engineMcp: reader.port('ENGINE_MCP_PORT', 8084),
      engineWebhook: reader.port('ENGINE_WEBHOOK_PORT', 8085),
    },
  };
}

/** HTTP settings shared by every service: body limit, CORS, headers, rate limit. */
export interface HttpConfig {
  maxRequestSizeBytes: number;
  corsAllowedOrigins: string[];
  securityHeadersEnabled: boolean;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /**
   * TRUST_PROXY: which proxies' `X-Forwarded-For` decides the client address (rate limits, visitor hashes).
   * false (default) trusts none, true every hop, a number that many hops, or a list of addresses and CIDRs.
   */
  trustProxy?: boolean | number | string[];
  /** KEEL_METRICS_TOKEN: when set, `GET /metrics` asks for `Authorization: Bearer <token>`; unset, it is open. */
  metricsToken?: string | undefined;
}

function readTrustProxy(reader: ConfigReader): boolean | number | string[] {
  const raw = reader.optionalString('TRUST_PROXY')?.trim();
  if (raw === undefined || raw === '' || raw.toLowerCase() === 'false') return false;
  if (raw.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const address = /^(?:[0-9.]+|[0-9a-f:.]+)(?:\/\d{1,3})?$/i;
  if (entries.length === 0 || !entries.every((entry) => address.test(entry) && /[.:]/.test(entry))) {
    reader.problem('TRUST_PROXY must be true, false, a hop count, or comma-separated IP addresses/CIDRs');
    return false;
  }
  return entries;
}

export function readHttpConfig(reader: ConfigReader): HttpConfig {
  return {
    trustProxy: readTrustProxy(reader),
    maxRequestSizeBytes: reader.int('MAX_REQUEST_SIZE_BYTES', 10 * 1024 * 1024, { min: 1024, max: 1024 * 1024 * 1024 }),
    corsAllowedOrigins: reader.list('CORS_ALLOWED_ORIGINS', []),
    securityHeadersEnabled: reader.bool('SECURITY_HEADERS_ENABLED', true),
    rateLimitMax: reader.int('RATE_LIMIT_MAX', 6000, { min: 1 }),
    rateLimitWindowMs: reader.int('RATE_LIMIT_WINDOW_MS', 60_000, { min: 1000 }),
    metricsToken: reader.optionalString('KEEL_METRICS_TOKEN') || undefined,
  };
}
