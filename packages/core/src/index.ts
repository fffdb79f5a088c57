export { bearerToken, constantTimeEqual, generateKey, sha256Hex } from './auth/secrets.ts';
export type { Cache } from './cache/cache.ts';
export { createMemoryCache } from './cache/memory-cache.ts';
export { type OpenedCache, openCache } from './cache/open-cache.ts';
export { createWindowCounters, type WindowCount, type WindowCounters } from './cache/window-counter.ts';
export { reportListening, resolveWorkerCount, startWorkerPool, type WorkerPool } from './cluster/workers.ts';
export {
  ConfigError,
  ConfigReader,
  type CoreConfig,
  type Env,
  type HttpConfig,
  readCoreConfig,
  readHttpConfig,
} from './config.ts';
export { loadKeyFile } from './crypto/key-file.ts';
export { createSecretBox, loadSecretKey, type SecretBox } from './crypto/secret-box.ts';
export { isDatabaseUnavailable } from './db/connection-errors.ts';
export { describeDatabase, describeServiceDatabase } from './db/describe-database.ts';
export {
  columnTypes,
  dialectOf,
  fromJsonColumn,
  isUniqueViolation,
  lockForTransaction,
  toBoolean,
  toIsoString,
} from './db/dialect.ts';
export { createGroupCommit, type GroupCommit } from './db/group-commit.ts';
export { insertMany } from './db/insert-many.ts';
export { type MigrationSet, migrateToLatest } from './db/migrate.ts';
export {
  type Database,
  type DialectName,
  defaultDatabaseUrl,
  openDatabase,
  pingDatabase,
} from './db/open-database.ts';
export { type Executor, withTransaction } from './db/transaction.ts';
export { AppError, CoreErrors, createError, type ErrorDetail, type ErrorFactory, registeredErrors } from './errors.ts';
export { ensurePrivateDirectory, restrictFiles } from './fs/private-files.ts';
export { HEALTH_PATHS, registerHealthRoutes } from './health/health-routes.ts';
export { createLoopHealth, type LoopHealth, type LoopLogger } from './health/loop-health.ts';
export {
  createReadiness,
  createServiceReadiness,
  describeNotReady,
  type Readiness,
  type ReadinessCheck,
  type ReadinessOutcome,
  type ReadinessReport,
} from './health/readiness.ts';

export { compactOpenApi } from './http/compact-openapi.ts';
export { type App, type CreateAppOptions, createApp } from './http/create-app.ts';
export { decodeCursor, encodeCursor, keysetPage } from './http/cursor.ts';
export { databaseUnavailable, type ErrorBody, errorBody } from './http/error-handler.ts';
export { commonErrorResponses, errorBodySchema } from './http/error-schema.ts';
export {
  LOG_FORMATS,
  type LogFormat,
  prettyLogDestination,
  prettyLogLine,
  selectLogFormat,
} from './http/log-format.ts';
export { idForLog } from './http/log-safe.ts';
export { type OpenApiPart, openApiPart, serveOpenApiParts } from './http/openapi-parts.ts';
export {
  attachOperationExample,
  type OperationExample,
  type OperationExamples,
  operationKey,
} from './http/operation-examples.ts';
export { type ReadableIssue, readableIssues, type SchemaIssue } from './http/validation.ts';
export { canonicalJson, payloadHash } from './idempotency/canonical-json.ts';
export {
  type ClaimOutcome,
  checkIdempotencyKey,
  claimIdempotencyKey,
  type IdempotencyClaim,
  IdempotencyErrors,
  type IdempotencyOptions,
  type IdempotentRequest,
  type IdempotentResponse,
  pruneIdempotencyKeys,
  runIdempotent,
} from './idempotency/idempotency.ts';
export {
  createIdempotencyTable,
  IDEMPOTENCY_TABLE,
  type IdempotencyKeyTable,
} from './idempotency/idempotency-table.ts';
export { sendIdempotent } from './idempotency/reply.ts';
export {
  defineMcpTool,
  type McpCall,
  type McpEndpointOptions,
  McpErrorCodes,
  type McpTool,
  registerMcpEndpoint,
} from './mcp/mcp-endpoint.ts';
export {
  checkOutboundUrl,
  checkOutboundUrlResolves,
  createSafeLookup,
  isPublicAddress,
  OutboundUrlErrors,
  type OutboundUrlPolicy,
} from './net/outbound-url.ts';
export { createSafeAgent, type SafePostResult, safePost } from './net/safe-fetch.ts';
export {
  createOutboxWorker,
  DEFAULT_RETRY_SCHEDULE_MS,
  type DeliveryTarget,
  enqueueOutbox,
  type NewOutboxMessage,
  newMessageId,
  type OutboxWorker,
  type OutboxWorkerOptions,
} from './outbox/outbox.ts';
export {
  addOutboxTraceColumns,
  createOutboxTables,
  dropOutboxTraceColumns,
  OUTBOX_ATTEMPT_TABLE,
  OUTBOX_TABLE,
  type OutboxAttemptTable,
  type OutboxDb,
  type OutboxMessageTable,
} from './outbox/outbox-table.ts';
export { generateSigningSecret, signWebhook } from './outbox/signature.ts';
export type { CliCommand, CommandIo, RunningService, ServiceAddress, ServiceDefinition } from './service.ts';
export {
  type ActiveSpan,
  collectMetrics,
  continueTrace,
  currentSpan,
  currentTraceId,
  currentTraceparent,
  type FinishedSpan,
  flushTelemetry,
  type OutboundPeer,
  observeQueueDepth,
  onSpanEnd,
  prometheusText,
  type RuntimeSignals,
  runInSpan,
  runtimeSignals,
  type SpanOrigin,
  type StepSpan,
  setSpanTenant,
  spanOrigin,
  startTelemetry,
  tracingExported,
  withClientSpan,
  withSpan,
  withStepSpan,
} from './telemetry/telemetry.ts';
export {
  formatTraceparent,
  isTraceId,
  newSpanId,
  newTraceId,
  parseTraceparent,
  type TraceContext,
} from './telemetry/trace-context.ts';
