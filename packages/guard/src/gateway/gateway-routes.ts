import { type App, AppError, idForLog } from '@keel/core';
import type { ChatCompletionsBody, UpstreamReply } from '@keel/models';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GuardContext } from '../context.ts';
import { resolveGuardrails } from '../detect-api/analyze-text.ts';
import { bearerSecurity } from '../http-schemas.ts';
import { forMeta, mergeBreakdowns } from './content-analysis.ts';
import { GatewayError, GatewayErrors, type GwMeta, toGatewayError } from './gateway-errors.ts';
import { parseGatewayHeaders, ridOrGenerated } from './gateway-headers.ts';
import {
  ChatCompletionSchema,
  ChatCompletionsRequestSchema,
  GatewayErrorSchema,
  ModelListSchema,
  UpstreamErrorSchema,
} from './gateway-schemas.ts';
import {
  blockingMessage,
  checkCompletion,
  errorBodyWithMeta,
  type GatewayCall,
  type JsonAnswer,
  passUpstreamError,
  redactUserMessages,
  warningFor,
} from './gateway-service.ts';
import { serveStream } from './gateway-stream.ts';
import { listUpstreamModels } from './models-service.ts';
import { createRequestPlaceholders } from './placeholders.ts';
import { createSecurityEvents } from './security-events.ts';

/** Log levels at which the per-call `gateway call` info line is written. */
const INFO_ON = new Set(['trace', 'debug', 'info']);

const DESCRIPTION = `A chat-completions-compatible guardrail gateway: point the official \`openai\` client's \`baseURL\` at this
service and it works unchanged, with \`stream: false\` and \`stream: true\`.

**Input.** Every \`user\` message (string content and the \`text\` parts of array content) is analyzed like \`/detect\`
(with the \`X-GW-Guardrails\` validators) and redacted with placeholders \`[<RID>_<TYPE>_<n>]\` (the same value gets
the same placeholder within a request). System, developer, assistant and tool messages and every other field
pass unchanged; \`model\` is forwarded as given.

**Blocking.** With \`GATEWAY_BLOCK_MODE=BLOCK\` (default) a blocked input (not forwarded) or a blocked output (the raw
answer is never sent) is an HTTP **400** with the gateway error object, code \`gw_content_blocked\` and message
\`Blocked due to high confidence detection: <TYPE>\`: 400 is the status OpenAI itself uses for content-policy
refusals, it is not retried by clients, and the \`openai\` client raises \`BadRequestError\` whose \`.error\` is the
gateway error object (\`gw_meta\` is in the body beside it). \`MASK\` answers 200 with the blocked values masked
(see the \`blocked\` flags in \`gw_meta\`); \`WARN\` does the same and adds an \`X-GW-Warning\` header.

**Headers.** \`X-GW-RID\` (default \`LLM-GW-<epoch ms>\`; 1–128 of \`A-Za-z0-9._:-\`), \`X-GW-Guardrails\` (comma-separated
validator names), \`X-GW-Guardrails-Mode\` (\`final-only\` default, \`stream-sync\`, \`stream-async\`; streaming only),
\`X-GW-Guardrails-OnFail\` (\`filter\` default, \`halt\`; streaming only), \`X-GW-Restore\` (\`true\` puts the user's own
values back in place of their placeholders in the answer). An invalid value is a 400 \`invalid_header\`.

**Streaming.** \`final-only\` proxies the stream unchanged after the input check. \`stream-sync\` checks the output while
it streams and releases only text that can no longer grow into a detection (per choice, a held-back tail of at
most \`GATEWAY_STREAM_HOLDBACK_MAX_CHARS\`, default 8192; past it the span is withheld, never sent unverified);
tool-call arguments are checked once reassembled; \`filter\` redacts and goes on, \`halt\` sends
\`data: {"error":{…}}\` then \`data: [DONE]\`. \`stream-async\` forwards the raw stream and checks the whole output
afterwards, sending a security event with the same rid to \`GATEWAY_SECURITY_EVENTS\`.

**Errors** of this route use \`{"error": {"message", "type": "invalid_request_error", "param": null, "code"}, "gw_meta"}\`,
including 401/403 (\`invalid_api_key\`, \`insufficient_permissions\`), 413, 415 and 429. Upstream errors pass through with
their status and OpenAI-style body (\`gw_meta\` added). 502 \`upstream_unreachable\`, 503 \`gw_detection_failed\`
(a check failed: nothing is forwarded unchecked), 504 \`gateway_timeout\` (\`GATEWAY_TIMEOUT_MS\`, default 300 s).
\`stream: true\` with \`AI_PROVIDER=MANAGED_MODEL\` is a 400 \`streaming_not_supported\`.`;

interface RequestState {
  meta: GwMeta;
}

const emptyMeta = (rid: string): GwMeta => ({ rid, guardrails: [], input: [], output: [] });

function isEventStream(contentType: string | undefined): boolean {
  return contentType?.toLowerCase().startsWith('text/event-stream') === true;
}

/** POST /v1/chat/completions (the guardrail gateway in front of the configured upstream) and GET /v1/models. */
export function registerGatewayRoutes(app: App, ctx: GuardContext): void {
  const settings = ctx.config.gateway;
  const events = createSecurityEvents(settings.securityEvents, ctx.log);
  app.addHook('onClose', async () => events.close());
  const states = new WeakMap<FastifyRequest, RequestState>();

  const errorHandler = (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const gatewayError = toGatewayError(error, ctx.config.http.maxRequestSizeBytes);
    if (gatewayError.status >= 500 && gatewayError.code === 'internal_error') {
      request.log.error({ err: error }, 'unhandled gateway error');
    }
    const meta = states.get(request)?.meta ?? emptyMeta(ridOrGenerated(request.headers));
    if (gatewayError.headers) reply.headers(gatewayError.headers);
    reply.header('x-gw-rid', meta.rid);
    return reply
      .status(gatewayError.status)
      .type('application/json')
      .send(JSON.stringify(errorBodyWithMeta(gatewayError, meta)));
  };

  app.post(
    '/v1/chat/completions',
    {
      schema: {
        tags: ['gateway'],
        security: bearerSecurity,
        summary: 'Chat completions through the guardrail gateway (OpenAI-compatible, streaming and not)',
        description: DESCRIPTION,
        body: ChatCompletionsRequestSchema,
        response: {
          200: ChatCompletionSchema,
          400: GatewayErrorSchema,
          401: GatewayErrorSchema,
          403: GatewayErrorSchema,
          413: GatewayErrorSchema,
          415: GatewayErrorSchema,
          429: GatewayErrorSchema,
          500: GatewayErrorSchema,
          502: GatewayErrorSchema,
          503: GatewayErrorSchema,
          504: GatewayErrorSchema,
          '4XX': UpstreamErrorSchema,
          '5XX': UpstreamErrorSchema,
        },
      },
      config: { permission: 'gateway:use', acceptsNul: true },
      errorHandler,
    },
    async (request, reply) => {
      const options = parseGatewayHeaders(request.headers);
      const meta: GwMeta = { rid: options.rid, guardrails: options.guardrails, input: [], output: [] };
      states.set(request, { meta });
      reply.header('x-gw-rid', options.rid);
      const provider = ctx.provider;
      if (!provider) throw GatewayErrors.notConfigured();
      const body = request.body as ChatCompletionsBody;
      const stream = body.stream === true;
      if (stream && !provider.supportsStreaming) throw GatewayErrors.streamingNotSupported();
      resolveGuardrails(await ctx.activeConfig.get(), { guardrails: options.guardrails });

      const started = performance.now();
      const timestamp = new Date().toISOString();
      const call: GatewayCall = {
        ctx,
        options,
        placeholders: createRequestPlaceholders(options.rid),
        meta,
        inputResults: [],
        outputResults: [],
        deadline: Date.now() + settings.timeoutMs,
      };
      // One controller aborts the upstream call for every reason: client gone, deadline, halt or failure.
      const upstreamAbort = new AbortController();
      const signal = upstreamAbort.signal;
      let clientGone = false;
      const timeout = { aborted: false };
      const timer = setTimeout(() => {
        timeout.aborted = true;
        upstreamAbort.abort();
      }, settings.timeoutMs);
      const onClose = () => {
        if (!reply.raw.writableFinished) {
          clientGone = true;
          upstreamAbort.abort();
        }
      };
      reply.raw.on('close', onClose);
      let outcome = 'forwarded';
      let statusCode = 200;

      try {
        try {
          call.inputResults = await redactUserMessages(call, body);
        } catch (error) {
          throw detectionFailure(error, request);
        }
        meta.input = call.inputResults.map(forMeta);
        const inputBlock = blockingMessage(call.inputResults);
        if (inputBlock !== undefined && settings.blockMode === 'BLOCK') {
          outcome = 'input_blocked';
          throw GatewayErrors.blocked(inputBlock);
        }
        call.placeholders.endInput();

        let upstream: UpstreamReply;
        try {
          upstream = await provider.chat(body, { signal, timeoutMs: settings.timeoutMs });
        } catch (error) {
          if (timeout.aborted) throw GatewayErrors.timeout(settings.timeoutMs);
          if (clientGone) {
            outcome = 'client_aborted';
            throw GatewayErrors.upstreamUnreachable('the client went away');
          }
          throw GatewayErrors.upstreamUnreachable((error as Error).message.replace(/^upstream request failed: /, ''));
        }

        let answer: JsonAnswer;
        if (upstream.status < 200 || upstream.status >= 300) {
          outcome = 'upstream_error';
          answer = await passUpstreamError(call, upstream);
        } else if (stream && isEventStream(upstream.contentType)) {
          const active = await ctx.activeConfig.get().catch((error: unknown) => {
            void upstream.dump().catch(() => {});
            throw detectionFailure(error, request);
          });
          reply.hijack();
          const result = await serveStream({
            call,
            upstream,
            res: reply.raw,
            headers: reply.getHeaders() as Record<string, string | number | string[]>,
            abortUpstream: () => upstreamAbort.abort(),
            clientGone: () => clientGone,
            timedOut: () => timeout.aborted,
            signal,
            events,
            model: body.model,
            active,
          });
          call.outputResults.push(...result.output);
          outcome = `stream_${result.status}`;
          return reply;
        } else {
          try {
            answer = await checkCompletion(call, upstream);
          } catch (error) {
            if (timeout.aborted) throw GatewayErrors.timeout(settings.timeoutMs);
            if (error instanceof GatewayError) {
              if (error.code === 'gw_content_blocked') outcome = 'output_blocked';
              throw error;
            }
            throw detectionFailure(error, request);
          }
        }
        statusCode = answer.status;
        if (settings.blockMode === 'WARN') {
          const warning = warningFor([...call.inputResults, ...call.outputResults]);
          if (warning) reply.header('x-gw-warning', warning);
        }
        return reply
          .status(answer.status)
          .headers(answer.headers)
          .type('application/json')
          .send(answer.body as never);
      } catch (error) {
        statusCode = error instanceof GatewayError ? error.status : 500;
        throw error;
      } finally {
        clearTimeout(timer);
        reply.raw.off('close', onClose);
        const all = [...call.inputResults, ...call.outputResults];
        const { total, breakdown } = mergeBreakdowns(all);
        ctx.audit.record({
          rid: options.rid,
          timestamp,
          durationMs: Math.round((performance.now() - started) * 1000) / 1000,
          total,
          breakdown,
          blocked: all.some((r) => r.blocked),
        });
        // The rid's hash for the log line is only computed when the line is written (LOG_LEVEL info or lower).
        if (INFO_ON.has(request.log.level)) {
          request.log.info(
            {
              gateway: {
                rid: idForLog(options.rid),
                mode: stream ? options.mode : 'non-streaming',
                outcome,
                status: statusCode,
              },
            },
            'gateway call',
          );
        }
      }
    },
  );

  app.get(
    '/v1/models',
    {
      schema: {
        tags: ['gateway'],
        security: bearerSecurity,
        summary: "The upstream's models (OpenAI-compatible `models.list()`)",
        description:
          "Passed through from the configured upstream (`AI_MODEL_URL` + `/models`, with the gateway's own `AI_API_KEY`), so clients that list models before chatting work unchanged. Needs the `gateway:use` permission like the chat route. With `AI_PROVIDER=MANAGED_MODEL` the list is the configured model. Upstream errors pass through with their status; 502 `upstream_unreachable`, 503 `upstream_not_configured`, 504 `gateway_timeout`.",
        response: {
          200: ModelListSchema,
          401: GatewayErrorSchema,
          403: GatewayErrorSchema,
          429: GatewayErrorSchema,
          502: GatewayErrorSchema,
          503: GatewayErrorSchema,
          504: GatewayErrorSchema,
          '4XX': UpstreamErrorSchema,
          '5XX': UpstreamErrorSchema,
        },
      },
      config: { permission: 'gateway:use' },
      errorHandler,
    },
    async (_request, reply) => {
      const answer = await listUpstreamModels(ctx);
      // The upstream's JSON text as it came (a string payload is sent without re-serializing).
      return reply
        .status(answer.status)
        .type('application/json')
        .send(answer.body as never);
    },
  );
}

/** A check that failed for any reason other than a client mistake blocks the call (fail closed): 503. */
function detectionFailure(error: unknown, request: FastifyRequest): unknown {
  if (error instanceof GatewayError) return error;
  if (error instanceof AppError && error.statusCode < 500) return error;
  if (!(error instanceof AppError)) request.log.error({ err: error }, 'gateway content check failed');
  return GatewayErrors.detectionFailed();
}
