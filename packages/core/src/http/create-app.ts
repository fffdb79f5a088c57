import type { IncomingMessage, ServerResponse } from 'node:http';
import fastifyCors from '@fastify/cors';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
  type RawServerDefault,
} from 'fastify';
import type { Redis } from 'ioredis';
import { constantTimeEqual } from '../auth/secrets.ts';
import { watchRedis } from '../cache/redis-health.ts';
import type { HttpConfig } from '../config.ts';
import { CoreErrors } from '../errors.ts';
import {
  countActiveRequest,
  endServerSpan,
  prometheusText,
  runInSpan,
  startTelemetry,
} from '../telemetry/telemetry.ts';
import { requireJsonBodies } from './content-type.ts';
import { installErrorHandlers } from './error-handler.ts';
import { rejectUnstorableInput } from './input-guard.ts';
import { type LogFormat, prettyLogDestination, selectLogFormat } from './log-format.ts';
import { attachOperationExample, type OperationExamples } from './operation-examples.ts';
import { resilientRateLimitStore } from './rate-limit-store.ts';
import { requestIdFor, serverSpanOf } from './request-id.ts';
import { reusedValidatorCompiler, reusingSerializerFactory, schemaReuseEnabled } from './schema-cache.ts';
import { installSecurityHeaders } from './security-headers.ts';
import { createValidatorCompiler } from './validation.ts';

export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface CreateAppOptions {
  /** Service name: the OpenAPI title and the `service` field of every log line. */
  name: string;
  version: string;
  /** Markdown shown at the top of the OpenAPI description and the docs page. */
  description: string;
  http: HttpConfig;
  logLevel: string;
  /** `LOG_FORMAT`: JSON lines, the human format, or (`auto`, the default) the human format on a terminal. */
  logFormat?: LogFormat;
  /** When set, rate-limit counters live in Redis so several instances share them. */
  redis?: Redis | undefined;
  /** Key that identifies a client for rate limiting; the client address by default. */
  rateLimitKey?: (request: FastifyRequest) => string;
  securitySchemes?: Record<string, Record<string, unknown>>;
  tags?: { name: string; description: string }[];
  /** Where log lines go; stdout by default. Tests pass a stream to inspect them. */
  logStream?: NodeJS.WritableStream;
  /** Rewrites the generated OpenAPI document once before it is served (e.g. to share repeated parts); optional. */
  transformOpenApi?: (document: Record<string, unknown>) => Record<string, unknown>;
  /**
   * One example request per operation (`POST /detect` → body, query, params), written into the route schemas'
   * `examples` so the OpenAPI document and the docs page's "Try it out" start from a request that succeeds.
   */
  examples?: OperationExamples;
}

const DOCS_PREFIX = '/docs';

/**
 * Builds a Fastify app with everything every Keel service shares: request ids, one error shape, body limit,
 * JSON-only writes, security headers, deny-by-default CORS, rate limiting, OpenAPI 3.1 and a docs page.
 * Routes are added by the caller; nothing listens yet.
 */
/** A hop count becomes a function (Fastify's types take booleans, address lists and functions). */
function trustProxyOption(
  value: HttpConfig['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof value === 'number') return (_address, hop) => hop < value;
  return value ?? false;
}

export async function createApp(options: CreateAppOptions): Promise<App> {
  const { http } = options;
  // Before the first request: its server span and metrics need the SDK (loaded once per process).
  await startTelemetry();
  const logTarget: NodeJS.WritableStream & { isTTY?: boolean } = options.logStream ?? process.stdout;
  const pretty = selectLogFormat(options.logFormat ?? 'auto', logTarget) === 'pretty';
  const logStream = pretty ? prettyLogDestination(logTarget, logTarget.isTTY === true) : options.logStream;
  const app = Fastify({
    logger: {
      level: options.logLevel,
      base: { service: options.name },
      ...(logStream ? { stream: logStream } : {}),
      // Headers and bodies are never logged; these paths are a second line of defence.
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-admin-key"]'],
    },
    bodyLimit: http.maxRequestSizeBytes,
    trustProxy: trustProxyOption(http.trustProxy),
    genReqId: requestIdFor,
    requestIdHeader: false,
    // One line per request, written by the onResponse hook below (the route, never the raw path or query).
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    routerOptions: { maxParamLength: 500, ignoreTrailingSlash: false },
    // Tests only (see schema-cache.ts): compiled validators and serializers are shared by the apps of a process.
    ...(schemaReuseEnabled()
      ? { schemaController: { compilersFactory: { buildSerializer: reusingSerializerFactory } } }
      : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(
    schemaReuseEnabled() ? reusedValidatorCompiler(createValidatorCompiler) : createValidatorCompiler(),
  );

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const span = serverSpanOf(request.raw);
    if (!span) return done();
    // The rest of the request (hooks, handler, the calls it makes) runs inside its server span.
    countActiveRequest(options.name, 1);
    reply.raw.once('close', () => {
      countActiveRequest(options.name, -1);
      endServerSpan(span, {
        service: options.name,
        method: request.method,
        route: request.routeOptions.url ?? '(unmatched)',
        statusCode: reply.statusCode,
        seconds: reply.elapsedTime / 1000,
      });
    });
    runInSpan(span, done);
  });
  // Body parsing resumes in the socket's own async context: re-enter the span for validation, hooks and handler.
  app.addHook('preValidation', (request, _reply, done) => {
    const span = serverSpanOf(request.raw);
    if (span) runInSpan(span, done);
    else done();
  });
  // The request line is logged at info; below that level the object is not even built.
  const logRequests = ['info', 'debug', 'trace'].includes(options.logLevel);
  app.addHook('onResponse', (request, reply, done) => {
    if (!logRequests) return done();
    // The route pattern (`/shares/:token`), not the path: path segments and query strings are chosen by the
    // client and may carry personal data or credentials. A request that matched no route logs `(unmatched)`.
    const route = request.routeOptions.url ?? '(unmatched)';
    request.log.info(
      { method: request.method, route, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request completed',
    );
    done();
  });

  // Once shutdown begins, responses close their connection, so a client's kept-alive socket cannot hold
  // the server open after its in-flight request has finished.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  // Redis outages and recoveries are logged once each, by the first app sharing the client.
  if (options.redis) watchRedis(options.redis).useLogger(app.log);
  installErrorHandlers(app, http.maxRequestSizeBytes);
  if (http.securityHeadersEnabled) installSecurityHeaders(app, [DOCS_PREFIX]);
  requireJsonBodies(app);
  rejectUnstorableInput(app);

  await app.register(fastifyCors, {
    // An empty list means no cross-origin caller is allowed: no CORS headers are ever sent.
    origin: http.corsAllowedOrigins.length === 0 ? false : http.corsAllowedOrigins,
    credentials: false,
    maxAge: 600,
  });

  await app.register(fastifyRateLimit, {
    global: true,
    max: http.rateLimitMax,
    timeWindow: http.rateLimitWindowMs,
    ...(options.redis
      ? {
          store: resilientRateLimitStore(
            options.redis,
            watchRedis(options.redis),
            `keel:${options.name}:ratelimit:`,
          ) as never,
        }
      : {}),
    keyGenerator: options.rateLimitKey ?? ((request) => request.ip),
    skipOnError: true,
    errorResponseBuilder: (_request, context) => CoreErrors.rateLimited(Math.max(1, Math.ceil(context.ttl / 1000))),
  });

  // Before the OpenAPI generator's own hook, so it reads the schemas with their examples.
  const examples = options.examples;
  if (examples) app.addHook('onRoute', (route) => attachOperationExample(route, examples));

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: `Keel ${options.name}`, version: options.version, description: options.description },
      components: { securitySchemes: (options.securitySchemes ?? {}) as never },
      tags: options.tags ?? [],
    },
    ...(options.transformOpenApi
      ? {
          transformObject: (document: unknown) =>
            options.transformOpenApi!((document as { openapiObject: Record<string, unknown> }).openapiObject),
        }
      : {}),
  });
  await app.register(fastifySwaggerUi, { routePrefix: DOCS_PREFIX, uiConfig: { deepLinking: true } });

  app.get('/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async () => app.swagger());
  registerMetricsRoute(app, http.metricsToken);

  return app;
}

const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * `GET /metrics`: the process's OpenTelemetry metrics in the Prometheus text format, on every listener. Aggregates
 * only (route patterns, status codes, durations, queue depths) — no ids, no personal data. With KEEL_METRICS_TOKEN
 * set, a scraper must send `Authorization: Bearer <token>`; otherwise it is open like the health probes.
 */
function registerMetricsRoute(app: App, token: string | undefined): void {
  app.get('/metrics', { schema: { hide: true }, config: { rateLimit: false } }, async (request, reply) => {
    if (token !== undefined) {
      const sent = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
      if (!constantTimeEqual(sent, token)) throw CoreErrors.unauthorized();
    }
    return reply.type(PROMETHEUS_CONTENT_TYPE).send(await prometheusText());
  });
}
