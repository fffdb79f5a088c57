import type { App } from '@keel/core';
import { type Static, Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  component,
  IdParams,
  NullableTimestamp,
  PageQuery,
  page,
  ref,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { RUNTIME_EVENTS } from '../webhooks/events.ts';
import {
  createRuntimeWebhook,
  deleteRuntimeWebhook,
  getRuntimeWebhook,
  listRuntimeWebhookDeliveries,
  listRuntimeWebhookPage,
  MAX_RUNTIME_WEBHOOKS,
} from './runtime-webhook-service.ts';

const WebhookFields = {
  id: Type.String(),
  url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  events: Type.Array(Type.String()),
  active: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const RuntimeWebhookSchema = component('RtRuntimeWebhook', Type.Object(WebhookFields));
type RuntimeWebhook = Static<typeof RuntimeWebhookSchema>;

const DELIVERY = `Deliveries go through the engine's one outbox, the same as catalog webhooks: each (event, webhook) is a message written in the transaction of the change that caused it, POSTed after the commit with the same retries (ENGINE_WEBHOOK_RETRY_SCHEDULE, ±20% jitter, then \`failed\`), timeout and SSRF-safe connection (names resolved and vetted at connect time, redirects not followed). Each attempt also sends a W3C \`traceparent\` continuing the trace of the request or execution that queued the event (the attempt shows in \`GET /api/v1/observability/traces/{trace_id}\`). Standard Webhooks headers: \`webhook-id\` (the message id, stable across retries: deduplicate on it), \`webhook-timestamp\` (Unix seconds) and \`webhook-signature\` = \`v1,\` + base64 HMAC-SHA256 of \`id.timestamp.body\` keyed with the base64-decoded part of the \`whsec_\` secret; verify with any Standard Webhooks library and reject old timestamps. Body: \`{id, type, version: "2026-11-26", timestamp, realm_id, data}\`. Events: ${RUNTIME_EVENTS.map((event) => `\`${event}\``).join(', ')}. \`execution.*\` are chat and execute turns (\`data\`: execution_id, kind, status, agent_id, session_id, flow_id, trace_id, action_type, usage); \`flow_execution.*\` are durable executions reaching that state (\`data\`: execution_id, flow_id, flow_version, agent_id, state, trace_id, error code); \`usage.threshold_reached\`: usage of a metric in the realm's quota window crossed one of the quota policy's \`notify_at_percent\` thresholds, once per threshold, metric and window (\`data\`: metric — requests, tokens, cost or tool_calls —, threshold_percent, limit, used, window_seconds, window_started_at, window_resets_at; see PUT /api/v1/governance/quotas). No chat text, customer or payment data is ever sent.`;

export function registerRuntimeWebhookRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['integrations'], security: runtimeSecurity };
  const WebhookRef = ref<RuntimeWebhook>('RtRuntimeWebhook');
  app.post(
    '/api/v1/runtime/webhooks',
    {
      schema: {
        ...base,
        summary: 'Create a signed HTTPS runtime webhook',
        description: `Developer role or stronger. \`url\` must be public HTTPS (a private, loopback or reserved address, or \`http://\`, is a 400 OUTBOUND_URL_REJECTED; the development switch KEEL_ALLOW_PRIVATE_URLS=true allows them). \`events\`: names below or \`*\`. Answers \`signing_secret\` (\`whsec_…\`) once; it is stored encrypted and never shown again. At most ${MAX_RUNTIME_WEBHOOKS} per realm (409 RUNTIME_LIMIT_REACHED). ${DELIVERY}`,
        body: Type.Object(
          {
            url: Type.String({ minLength: 1, maxLength: 2048, format: 'uri' }),
            events: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 20 }),
            description: Type.Optional(Type.String({ maxLength: 1000 })),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            ...WebhookFields,
            signing_secret: Type.String({ description: 'Standard Webhooks secret (`whsec_` + base64); shown once' }),
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      reply.status(201).send(await createRuntimeWebhook(rt, principalOf(request), request.body)),
  );
  app.get(
    '/api/v1/runtime/webhooks',
    {
      schema: {
        ...base,
        summary: 'List runtime webhooks',
        description: 'Any role. Newest first; signing secrets are never shown.',
        querystring: Type.Object(PageQuery),
        response: { 200: page(WebhookRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listRuntimeWebhookPage(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.get(
    '/api/v1/runtime/webhooks/:id',
    {
      schema: {
        ...base,
        summary: 'Read a runtime webhook',
        description: "Any role. Another realm's webhook is a 404 like an unknown one.",
        params: IdParams,
        response: { 200: WebhookRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => getRuntimeWebhook(rt, principalOf(request), request.params.id),
  );
  app.delete(
    '/api/v1/runtime/webhooks/:id',
    {
      schema: {
        ...base,
        summary: 'Delete a runtime webhook',
        description:
          'Developer role or stronger. Messages not yet delivered are cancelled when their turn comes (nothing more is sent).',
        params: IdParams,
        response: { 204: Type.Null(), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      await deleteRuntimeWebhook(rt, principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
  app.get(
    '/api/v1/runtime/webhooks/:id/deliveries',
    {
      schema: {
        ...base,
        summary: 'Delivery log of a runtime webhook',
        description:
          'Any role. Its outbox messages, newest first, each with every attempt (status code, duration, error). `status`: pending, delivered, failed or cancelled.',
        params: IdParams,
        querystring: Type.Object(PageQuery),
        response: {
          200: page(
            Type.Object({
              id: Type.String({ description: 'The `webhook-id` sent' }),
              event: Type.String(),
              status: Type.String(),
              attempts: Type.Integer(),
              last_status_code: Type.Union([Type.Integer(), Type.Null()]),
              last_error: Type.Union([Type.String(), Type.Null()]),
              created_at: Timestamp,
              delivered_at: NullableTimestamp,
              next_attempt_at: NullableTimestamp,
              log: Type.Array(
                Type.Object({
                  attempt: Type.Integer(),
                  attempted_at: Timestamp,
                  duration_ms: Type.Integer(),
                  status_code: Type.Union([Type.Integer(), Type.Null()]),
                  success: Type.Boolean(),
                  error: Type.Union([Type.String(), Type.Null()]),
                }),
              ),
            }),
          ),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) =>
      listRuntimeWebhookDeliveries(rt, principalOf(request), request.params.id, {
        ...request.query,
        limit: request.query.limit ?? 20,
      }),
  );
}
