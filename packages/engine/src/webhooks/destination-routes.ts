import type { App } from '@keel/core';
import { Type } from 'typebox';
import type { EngineContext } from '../context.ts';
import { principalOf } from '../http/merchant-auth.ts';
import { commonErrors, ErrorSchema, merchantKeySecurity, Nullable, PageQuery, Timestamp } from '../http/schemas.ts';
import { requireMerchantWide } from '../merchants/principal.ts';
import {
  createDestination,
  deleteDestination,
  getDestination,
  listDeliveries,
  listDestinations,
  rotateSigningSecret,
  updateDestination,
} from './destination-service.ts';
import { OUTBOUND_EVENTS } from './events.ts';

const config = { merchantKey: true };
const tags = ['webhooks'];
const DestinationSchema = Type.Object({
  id: Type.String(),
  merchantId: Type.String(),
  url: Type.String(),
  description: Nullable(Type.String()),
  events: Type.Array(Type.String()),
  hasSecret: Type.Boolean({
    description: 'Whether deliveries carry x-webhook-secret; the secret itself is never returned',
  }),
  active: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const EventName = Type.String({ maxLength: 64, description: `* or one of: ${OUTBOUND_EVENTS.join(', ')}` });
const fields = {
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'Public https:// URL with a publicly resolving host; checked now and again at every delivery',
  }),
  events: Type.Array(EventName, {
    minItems: 1,
    maxItems: 40,
    description: 'The events this destination receives (`*` for all)',
  }),
  secret: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: 256, description: 'Sent as x-webhook-secret; write only' })),
  ),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  active: Type.Optional(Type.Boolean({ default: true })),
};
const Params = Type.Object({ destinationId: Type.String({ maxLength: 100 }) });
const DeliverySchema = Type.Object({
  id: Type.String({ description: 'Message id: the webhook-id header, stable across retries' }),
  event: Type.String(),
  status: Type.String({
    description: 'pending, delivered, failed (attempts exhausted) or cancelled (destination deleted or disabled)',
  }),
  attempts: Type.Integer(),
  lastStatusCode: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  createdAt: Timestamp,
  deliveredAt: Nullable(Timestamp),
  nextAttemptAt: Nullable(Timestamp),
  log: Type.Array(
    Type.Object({
      attempt: Type.Integer(),
      attemptedAt: Timestamp,
      durationMs: Type.Integer(),
      statusCode: Nullable(Type.Integer()),
      success: Type.Boolean(),
      error: Nullable(Type.String()),
    }),
  ),
});

const DELIVERY_RULES = `Deliveries are JSON POSTs, at least once, with a 10 s receiver deadline; any 2xx is success. Failures (non-2xx, timeout,
DNS, TLS, URL policy, network) are logged and retried after 10 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h and 12 h (±20% jitter;
ENGINE_WEBHOOK_RETRY_SCHEDULE), then marked failed. Redirects are not followed. Every delivery is signed with Standard Webhooks headers
(webhook-id, webhook-timestamp, webhook-signature) using the destination's signing secret, and carries x-webhook-secret when a secret is set.
Needs a merchant or merchant_network key.`;

export function registerDestinationRoutes(app: App, ctx: EngineContext): void {
  const base = '/api/v1/catalog/webhooks/destinations';
  app.get(
    base,
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'List webhook destinations',
        description: DELIVERY_RULES,
        response: { 200: Type.Object({ data: Type.Array(DestinationSchema) }), ...commonErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return { data: await listDestinations(ctx, principal) };
    },
  );

  app.post(
    base,
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Add a webhook destination',
        description: `${DELIVERY_RULES} The response carries \`signingSecret\` (whsec_…) once. At most 50 destinations per merchant.`,
        body: Type.Object(fields),
        response: {
          201: Type.Intersect([DestinationSchema, Type.Object({ signingSecret: Type.String() })]),
          ...commonErrors,
        },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return reply.status(201).send(await createDestination(ctx, principal, request.body));
    },
  );

  app.get(
    `${base}/:destinationId`,
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'One destination',
        params: Params,
        response: { 200: DestinationSchema, 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return getDestination(ctx, principal, request.params.destinationId);
    },
  );

  app.patch(
    `${base}/:destinationId`,
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Change a destination',
        description:
          'Any of url, events, secret (null removes it), description, active. A new URL passes the same checks.',
        params: Params,
        body: Type.Partial(Type.Object(fields), { minProperties: 1 }),
        response: { 200: DestinationSchema, 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return updateDestination(ctx, principal, request.params.destinationId, request.body);
    },
  );

  app.delete(
    `${base}/:destinationId`,
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Delete a destination',
        description: 'Undelivered messages are cancelled.',
        params: Params,
        response: { 204: Type.Null(), 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      await deleteDestination(ctx, principal, request.params.destinationId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    `${base}/:destinationId/rotate-signing-secret`,
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Rotate the signing secret',
        description: 'Returns the new whsec_… secret once; deliveries from now on are signed with it.',
        params: Params,
        response: { 200: Type.Object({ signingSecret: Type.String() }), 404: ErrorSchema, ...commonErrors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return rotateSigningSecret(ctx, principal, request.params.destinationId);
    },
  );

  app.get(
    `${base}/:destinationId/deliveries`,
    {
      schema: {
        tags,
        security: merchantKeySecurity,
        summary: 'Delivery log',
        description:
          'Messages to this destination, newest first, each with every attempt (time, duration, status code, error). Kept ENGINE_WEBHOOK_LOG_RETENTION_DAYS days.',
        params: Params,
        querystring: Type.Object({
          status: Type.Optional(
            Type.Union(['pending', 'delivered', 'failed', 'cancelled'].map((s) => Type.Literal(s))),
          ),
          ...PageQuery,
        }),
        response: {
          200: Type.Object({ data: Type.Array(DeliverySchema), nextCursor: Nullable(Type.String()) }),
          404: ErrorSchema,
          ...commonErrors,
        },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      requireMerchantWide(principal);
      return listDeliveries(ctx, principal, request.params.destinationId, {
        ...request.query,
        limit: request.query.limit ?? 20,
      });
    },
  );
}
