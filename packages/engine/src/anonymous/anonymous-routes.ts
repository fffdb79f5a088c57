import type { App } from '@keel/core';
import { type Static, Type } from 'typebox';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  component,
  OneOf,
  PageQuery,
  page,
  ref,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import {
  type AnonymousEventInput,
  MAX_BATCH_EVENTS,
  queryEvents,
  recordEvent,
  recordEventBatch,
  summarizeEvents,
} from './anonymous-service.ts';

const EventType = Type.String({ pattern: '^[a-z][a-z0-9_.:-]{0,63}$', description: 'Event name, e.g. `product_view`' });
const Identifier = Type.String({ minLength: 1, maxLength: 255 });
const Pseudonym = Type.String({ pattern: '^p[0-9]{1,9}_[0-9a-f]{32}$' });
const Source = OneOf(['api', 'catalog', 'runtime']);
const PropertyValue = Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean(), Type.Null()]);

const EventBody = Type.Object(
  {
    type: EventType,
    occurred_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'Default: now; at most 5 minutes ahead, 366 days back' }),
    ),
    subject_id: Type.Optional({ ...Identifier, description: 'Stored only as a pseudonym (`subject`)' }),
    session_id: Type.Optional({ ...Identifier, description: 'Stored only as a pseudonym (`session`)' }),
    properties: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }), PropertyValue, {
        maxProperties: 30,
        description: 'Flat: strings (≤ 1000 characters), numbers, booleans, null; PII is removed before storage',
      }),
    ),
    idempotency_key: Type.Optional(
      Type.String({
        pattern: '^[\\x21-\\x7e]{1,255}$',
        description: 'Retries with the same key and event answer the event already recorded',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AnonymousEventSchema = component(
  'RtAnonymousEvent',
  Type.Object({
    id: Type.String(),
    type: Type.String(),
    source: Type.String({ description: 'api, catalog or runtime' }),
    occurred_at: Timestamp,
    received_at: Timestamp,
    subject: Type.Union([Type.String(), Type.Null()], {
      description: "Pseudonym of subject_id under the realm's current key",
    }),
    session: Type.Union([Type.String(), Type.Null()], { description: 'Pseudonym of session_id' }),
    properties: Type.Record(Type.String(), PropertyValue),
    redactions: Type.Integer({ description: 'How many PII detections were removed' }),
  }),
);
type AnonymousEvent = Static<typeof AnonymousEventSchema>;

const PRIVACY =
  "Stored only after server-side PII removal (guard's detection engine, in process: every string property and every number read as text; each detection becomes `[TYPE]`, a property whose name holds one is dropped) and pseudonymization (`subject_id` and `session_id` become `p<version>_<hex>`, HMAC-SHA256 under the realm's key; the key rotates every 30 days and the old one is destroyed, so earlier pseudonyms cannot be linked to an identifier any more). The idempotency key itself is kept only as a hash.";

export function registerAnonymousRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['data'], security: runtimeSecurity };
  const EventRef = ref<AnonymousEvent>('RtAnonymousEvent');
  app.post(
    '/api/v1/data/events',
    {
      schema: {
        ...base,
        summary: 'Record one anonymous event',
        description: `Operator role or stronger. ${PRIVACY} 201 with the stored event; a retry with the same \`idempotency_key\` and event answers the same event with \`Idempotent-Replayed: true\`, with a different event 409 IDEMPOTENCY_KEY_REUSED.`,
        body: EventBody,
        response: { 201: EventRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      const { event, replayed } = await recordEvent(rt, principalOf(request), request.body as AnonymousEventInput);
      if (replayed) reply.header('idempotent-replayed', 'true');
      return reply.status(201).send(event);
    },
  );
  app.post(
    '/api/v1/data/events/batch',
    {
      schema: {
        ...base,
        summary: 'Record a batch of anonymous events',
        description: `Operator role or stronger; 1 to ${MAX_BATCH_EVENTS} events, recorded all or none. ${PRIVACY} \`data\` holds the events in request order; an event whose \`idempotency_key\` was recorded before with the same event is answered from the store (counted in \`replayed\`), with a different event the whole batch is a 409 IDEMPOTENCY_KEY_REUSED.`,
        body: Type.Object(
          { events: Type.Array(EventBody, { minItems: 1, maxItems: MAX_BATCH_EVENTS }) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ data: Type.Array(EventRef), recorded: Type.Integer(), replayed: Type.Integer() }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await recordEventBatch(rt, principalOf(request), request.body.events as AnonymousEventInput[])),
  );
  app.get(
    '/api/v1/data/query',
    {
      schema: {
        ...base,
        summary: "Query the realm's anonymous events",
        description:
          'Any role. Newest recorded first; filters `type`, `source`, `subject` and `session` (pseudonyms as stored), `from` (inclusive) and `to` (exclusive) on occurred_at.',
        querystring: Type.Object({
          ...PageQuery,
          type: Type.Optional(EventType),
          source: Type.Optional(Source),
          subject: Type.Optional(Pseudonym),
          session: Type.Optional(Pseudonym),
          from: Type.Optional(Type.String({ format: 'date-time' })),
          to: Type.Optional(Type.String({ format: 'date-time' })),
        }),
        response: { 200: page(EventRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => queryEvents(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.get(
    '/api/v1/data/summary',
    {
      schema: {
        ...base,
        summary: 'Realm event aggregations',
        description:
          'Any role. Counts over [from, to) on occurred_at (default: the 7 days before now) by `type`, by UTC `bucket` (hour: at most 31 days; day, the default: at most 366 days) and by both (`groups`, at most 5000; `truncated` when more exist).',
        querystring: Type.Object({
          from: Type.Optional(Type.String({ format: 'date-time' })),
          to: Type.Optional(Type.String({ format: 'date-time' })),
          bucket: Type.Optional(OneOf(['hour', 'day'], { default: 'day' })),
          type: Type.Optional(EventType),
          source: Type.Optional(Source),
        }),
        response: {
          200: Type.Object({
            from: Timestamp,
            to: Timestamp,
            bucket: Type.String(),
            total: Type.Integer(),
            by_type: Type.Array(Type.Object({ type: Type.String(), count: Type.Integer() })),
            buckets: Type.Array(Type.Object({ start: Timestamp, count: Type.Integer() })),
            groups: Type.Array(Type.Object({ start: Timestamp, type: Type.String(), count: Type.Integer() })),
            truncated: Type.Boolean(),
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) =>
      summarizeEvents(rt, principalOf(request), { ...request.query, bucket: request.query.bucket ?? 'day' }),
  );
}
