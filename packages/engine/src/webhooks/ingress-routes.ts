import type { App } from '@keel/core';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { EngineContext } from '../context.ts';
import { EngineErrors } from '../errors.ts';
import { principalOf } from '../http/merchant-auth.ts';
import { commonErrors, ErrorSchema, merchantKeySecurity } from '../http/schemas.ts';
import {
  CATALOG_EVENTS,
  type Envelope,
  EnvelopeSchema,
  IngressResponseSchema,
  PROCUREMENT_EVENTS,
} from './ingress-schemas.ts';
import { type IngressKind, receiveEvent } from './ingress-service.ts';

const INGRESS_DESCRIPTION = `Inbound webhook. Authenticate with the merchant key (Authorization: Bearer, X-API-Key or X-Catalog-API-Key); the key's
scope applies to every object. \`X-Webhook-Event-ID\` (1–255 characters) is required (400 without it); a replay of the same id for the same
key answers 200 with the first response and \`duplicate: true\`. Batches (\`products\`, at most 250) are validated whole first and applied in one
transaction: all or nothing. Inventory events are absolute snapshots; deleting an unknown product answers mode \`ignored\`.
Every store an event names is checked against the key's scope before anything is looked up (403, as for an unknown store).
Responses: 200 \`{success, mode, count, data: {id}, results: [{success, mode, data: {id}}]}\`; 400 schema errors (do not retry unchanged),
401/403 credential or scope (do not retry), 409 conflicts (retry when expected to clear), 429/5xx (retry with backoff).`;

/** Registers the inbound webhook route of one kind at `url`. */
export function registerIngressRoute(app: App, ctx: EngineContext, url: string, kind: IngressKind): void {
  const events = kind === 'catalog' ? CATALOG_EVENTS : PROCUREMENT_EVENTS;
  app.post(
    url,
    {
      schema: {
        tags: ['webhooks-inbound'],
        security: merchantKeySecurity,
        summary: `Receive a ${kind} event`,
        description: `${INGRESS_DESCRIPTION}\n\nEvents: ${events.join(', ')}.`,
        headers: Type.Object({
          'x-webhook-event-id': Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 255,
              description: "Required: the sender's event id, the replay key",
            }),
          ),
        }),
        body: EnvelopeSchema,
        response: { 200: IngressResponseSchema, 404: ErrorSchema, 409: ErrorSchema, ...commonErrors },
      },
      config: { merchantKey: true },
    },
    async (request: FastifyRequest) => {
      const principal = principalOf(request);
      const eventId = request.headers['x-webhook-event-id'];
      if (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > 255)
        throw EngineErrors.eventIdRequired();
      return receiveEvent(ctx, principal, eventId, request.body as Envelope, kind);
    },
  );
}
