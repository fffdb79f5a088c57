import type { App } from '@keel/core';
import { Type } from 'typebox';
import type { GeoContext } from '../context.ts';
import { commonErrors } from '../http-schemas.ts';
import { EVENT_LIMITS, ingestEvents, SiteTokenDirectory } from './event-service.ts';
import { EventWriter } from './event-writer.ts';
import { TRACKER_SCRIPT } from './tracker-script.ts';
import { VisitorSalts } from './visitor-salt.ts';

const tags = ['events'];

/** Ingestion is called from any site's pages: it answers CORS for every origin (no credentials are involved). */
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'content-type, x-site-token',
  'access-control-max-age': '600',
  'cross-origin-resource-policy': 'cross-origin',
};

/** The shape of one event (documented; validated per event by the service so one bad event does not fail the batch). */
export const EventInput = Type.Object(
  {
    type: Type.Union([Type.Literal('pageview'), Type.Literal('event')]),
    name: Type.Optional(Type.String({ maxLength: EVENT_LIMITS.maxName, description: 'Required for `event`' })),
    url: Type.Optional(
      Type.String({ maxLength: EVENT_LIMITS.maxUrl, description: 'Landing URL; only its path is kept' }),
    ),
    referrer: Type.Optional(Type.String({ maxLength: EVENT_LIMITS.maxUrl, description: 'Only its host is kept' })),
    occurredAt: Type.Optional(Type.String({ format: 'date-time', description: 'Within the last 7 days; default now' })),
    properties: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,64}$' }),
        Type.Union([Type.String({ maxLength: EVENT_LIMITS.maxPropertyValue }), Type.Number(), Type.Boolean()]),
        {
          maxProperties: EVENT_LIMITS.maxProperties,
          description: 'Kept only with analytics consent',
        },
      ),
    ),
    userId: Type.Optional(
      Type.String({ maxLength: EVENT_LIMITS.maxUserId, description: 'Kept only with consent, and only as an HMAC' }),
    ),
    userAgent: Type.Optional(
      Type.String({
        maxLength: EVENT_LIMITS.maxUserAgent,
        description:
          "Server-side integrations: the visitor's user agent (classification and visitor hash only; never stored)",
      }),
    ),
    consent: Type.Optional(Type.Object({ analytics: Type.Boolean() })),
  },
  {
    description:
      'One tracking event. Each is checked on its own: a bad one is listed in `rejected`, the others are kept.',
  },
);

export function registerEventRoutes(app: App, ctx: GeoContext): void {
  const directory = new SiteTokenDirectory(ctx);
  const salts = new VisitorSalts(ctx.db);
  const writer = new EventWriter(ctx.db);
  const maxBatch = ctx.config.events.maxBatch;

  app.options('/api/v2/geo/events', { schema: { hide: true } }, async (_request, reply) =>
    reply.headers(CORS_HEADERS).status(204).send(null),
  );

  app.post(
    '/api/v2/geo/events',
    {
      schema: {
        tags,
        security: [{ siteToken: [] }],
        summary: 'Ingest a batch of tracking events',
        description: `No API key: a site token, as header \`x-site-token\` or body field \`siteToken\` (401 \`GEO_INVALID_SITE_TOKEN\` when missing, unknown or revoked). 1–${maxBatch} events per batch (\`GEO_EVENTS_MAX_BATCH\`); at most ${EVENT_LIMITS.maxProperties} properties per event, keys ≤ ${EVENT_LIMITS.maxPropertyKey} characters, string values ≤ ${EVENT_LIMITS.maxPropertyValue}. Each event is validated alone: the answer is 202 with \`accepted\` and the \`rejected\` ones (index, code, message). A 202 means every accepted event is durably stored. The body is JSON as \`application/json\`, or as \`text/plain\` (what \`navigator.sendBeacon(url, JSON.stringify(batch))\` sends, with no CORS preflight). Consent-aware and pseudonymous: without \`consent.analytics: true\` (batch-wide, or per event) nothing identifying is kept; IP addresses and user agents are never stored; the visitor id is a keyed hash whose salt rotates daily and is then destroyed. AI referrals (ChatGPT, Perplexity, Gemini, Copilot, Claude, …) are classified from the referrer or \`utm_source\`; AI crawler hits (GPTBot, ClaudeBot, PerplexityBot, …) are kept as kind \`ai_crawler\`. CORS: any origin.`,
        headers: Type.Object({ 'x-site-token': Type.Optional(Type.String({ maxLength: 200 })) }),
        body: Type.Object({
          siteToken: Type.Optional(
            Type.String({ maxLength: 200, description: 'Alternative to the x-site-token header' }),
          ),
          consent: Type.Optional(
            Type.Object({
              analytics: Type.Boolean({ description: 'Analytics consent for the whole batch (default false)' }),
            }),
          ),
          events: Type.Array(Type.Unknown(), {
            minItems: 1,
            maxItems: maxBatch,
            description: 'Tracking events; each is validated on its own against `eventShape`',
          }),
        }),
        response: {
          202: Type.Object({
            accepted: Type.Integer(),
            rejected: Type.Array(Type.Object({ index: Type.Integer(), code: Type.String(), message: Type.String() })),
          }),
          ...commonErrors,
        },
      },
      // sendBeacon(url, jsonString) sends text/plain: the same JSON is accepted under that type.
      config: { rateLimit: false, textPlainJson: true },
    },
    async (request, reply) => {
      reply.headers(CORS_HEADERS);
      const headerToken = request.headers['x-site-token'];
      const site = await directory.identify(typeof headerToken === 'string' ? headerToken : request.body.siteToken);
      const userAgent =
        typeof request.headers['user-agent'] === 'string'
          ? request.headers['user-agent'].slice(0, EVENT_LIMITS.maxUserAgent)
          : '';
      const result = await ingestEvents(ctx, salts, writer, site, request.body, { ip: request.ip, userAgent });
      return reply.status(202).send(result);
    },
  );

  app.get(
    '/api/v2/geo/tracker.js',
    {
      schema: {
        tags,
        summary: 'The tracker script sites embed',
        description:
          'Public. `<script src=".../api/v2/geo/tracker.js" data-site-token="geosite_…" defer></script>`, then `keelGeo.consent(true|false)` from the consent banner. Nothing is sent before the consent call; afterwards `keelGeo.pageview()`, `keelGeo.track(name, properties)` and `keelGeo.identify(userId)` batch events to `POST /api/v2/geo/events`.',
        response: { 200: Type.String({ description: 'JavaScript' }) },
      },
    },
    async (_request, reply) =>
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .header('cross-origin-resource-policy', 'cross-origin')
        .send(TRACKER_SCRIPT),
  );
}
