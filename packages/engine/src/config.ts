import { ConfigReader, type CoreConfig, type Env, type HttpConfig, readCoreConfig, readHttpConfig } from '@keel/core';

export interface EngineConfig {
  core: CoreConfig;
  http: HttpConfig;
  webhooks: {
    /** Receiver deadline per delivery attempt (the spec's 10 s, lower only for tests). */
    timeoutMs: number;
    /** Delay before each retry, in ms. */
    retryScheduleMs: number[];
    concurrency: number;
    pollIntervalMs: number;
    /** Whether this instance runs the delivery worker (API-only instances may turn it off). */
    workerEnabled: boolean;
    retentionDays: number;
  };
  /** The agent runtime. */
  runtime: RuntimeConfig;
}

export interface RuntimeConfig {
  /** Lifetime of a runtime bearer token, in seconds. */
  tokenTtlSeconds: number;
  /** HS256 key (hex); unset → generated into KEEL_DATA_DIR/engine-token.key. */
  tokenSigningKey: string | undefined;
  /** A previous signing key that still verifies tokens during a rotation. */
  tokenSigningKeyPrevious: string | undefined;
  /** Whether POST /api/v1/auth/register accepts sign-ups. */
  registrationEnabled: boolean;
  /** Session lifetime when a session is created without ttl_seconds. */
  sessionTtlSeconds: number;
  /** Earlier messages of a session sent to the model with each turn. */
  historyMessages: number;
  /** How often each active tool server is probed in the background (seconds; 0 turns the prober off). */
  toolProbeIntervalSeconds: number;
  /** The durable-execution worker of this instance. */
  executions: {
    /** Whether this instance runs executions (API-only instances may turn it off). */
    workerEnabled: boolean;
    /** Executions run at once by this instance. */
    concurrency: number;
    /** How long a claim lasts without renewal (a dead worker's executions are taken over after this). */
    leaseMs: number;
    /** How often an idle worker looks for due executions. */
    pollMs: number;
  };
}

function readRuntimeConfig(reader: ConfigReader): RuntimeConfig {
  const key = (name: string) => {
    const value = reader.optionalString(name);
    if (value !== undefined && !/^(?:[0-9a-fA-F]{2}){32,64}$/.test(value)) {
      reader.problem(`${name} must be 64 to 128 hexadecimal characters (a 256- to 512-bit key)`);
      return undefined;
    }
    return value;
  };
  return {
    tokenTtlSeconds: reader.int('ENGINE_TOKEN_TTL_SECONDS', 900, { min: 60, max: 86_400 }),
    tokenSigningKey: key('ENGINE_TOKEN_SIGNING_KEY'),
    tokenSigningKeyPrevious: key('ENGINE_TOKEN_SIGNING_KEY_PREVIOUS'),
    registrationEnabled: reader.bool('ENGINE_REGISTRATION_ENABLED', false),
    sessionTtlSeconds: reader.int('ENGINE_SESSION_TTL_SECONDS', 86_400, { min: 60, max: 2_592_000 }),
    historyMessages: reader.int('ENGINE_CHAT_HISTORY_MESSAGES', 20, { min: 0, max: 200 }),
    toolProbeIntervalSeconds: reader.int('ENGINE_TOOL_PROBE_INTERVAL_SECONDS', 60, { min: 0, max: 86_400 }),
    executions: {
      workerEnabled: reader.bool('ENGINE_FLOW_WORKER', true),
      concurrency: reader.int('ENGINE_FLOW_CONCURRENCY', 16, { min: 1, max: 512 }),
      leaseMs: reader.int('ENGINE_FLOW_LEASE_MS', 30_000, { min: 500, max: 600_000 }),
      pollMs: reader.int('ENGINE_FLOW_POLL_MS', 500, { min: 10, max: 60_000 }),
    },
  };
}

/** Reads the engine's configuration (its own variables plus the shared ones); throws ConfigError naming every bad one. */
export function readEngineConfig(env: Env): EngineConfig {
  const reader = new ConfigReader(env);
  const core = readCoreConfig(reader);
  const http = readHttpConfig(reader);
  const schedule = reader.list('ENGINE_WEBHOOK_RETRY_SCHEDULE', [
    '10',
    '30',
    '120',
    '600',
    '1800',
    '3600',
    '7200',
    '14400',
    '28800',
    '43200',
  ]);
  const retryScheduleMs: number[] = [];
  for (const entry of schedule) {
    const seconds = Number(entry);
    if (!/^\d+(\.\d+)?$/.test(entry) || seconds <= 0 || seconds > 7 * 24 * 3600) {
      reader.problem(
        'ENGINE_WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of delays in seconds, each > 0 and ≤ 604800',
      );
      break;
    }
    retryScheduleMs.push(Math.round(seconds * 1000));
  }
  if (retryScheduleMs.length > 30) reader.problem('ENGINE_WEBHOOK_RETRY_SCHEDULE allows at most 30 retries');
  const config: EngineConfig = {
    core,
    http,
    webhooks: {
      timeoutMs: reader.int('ENGINE_WEBHOOK_TIMEOUT_MS', 10_000, { min: 100, max: 10_000 }),
      retryScheduleMs,
      concurrency: reader.int('ENGINE_WEBHOOK_CONCURRENCY', 64, { min: 1, max: 1024 }),
      pollIntervalMs: reader.int('ENGINE_WEBHOOK_POLL_MS', 1000, { min: 10, max: 60_000 }),
      workerEnabled: reader.bool('ENGINE_WEBHOOK_WORKER', true),
      retentionDays: reader.int('ENGINE_WEBHOOK_LOG_RETENTION_DAYS', 30, { min: 1, max: 3650 }),
    },
    runtime: readRuntimeConfig(reader),
  };
  reader.done();
  return config;
}
