import { sha256Hex } from '@keel/core';
import { LRUCache } from 'lru-cache';
import type { GeoContext } from '../context.ts';
import { GeoErrors } from '../errors.ts';
import { hashSubject, workspaceSecret } from '../privacy/subject-hash.ts';
import { findSiteTokenByHash } from '../tenancy/tenancy-store.ts';
import { classifyCrawler, classifyReferral } from './classify.ts';
import type { EventRow } from './event-store.ts';
import type { EventWriter } from './event-writer.ts';
import { type VisitorSalts, visitorId } from './visitor-salt.ts';

export const EVENT_LIMITS = {
  maxProperties: 20,
  maxPropertyKey: 64,
  maxPropertyValue: 256,
  maxName: 100,
  maxUrl: 2048,
  maxUserId: 256,
  maxUserAgent: 512,
  /** Events older than this are rejected (late beacons are fine, backfills are not). */
  maxAgeMs: 7 * 24 * 60 * 60 * 1000,
  /** Clock skew allowed for events dated in the future. */
  maxFutureMs: 5 * 60 * 1000,
} as const;

export interface SiteIdentity {
  siteTokenId: string;
  workspaceId: string;
  tenantId: string;
}

/** Site tokens by hash, remembered for a few seconds so ingestion costs no lookup per batch. */
export class SiteTokenDirectory {
  readonly #cache: LRUCache<string, SiteIdentity | false>;
  readonly #ctx: GeoContext;

  constructor(ctx: GeoContext) {
    this.#ctx = ctx;
    this.#cache = new LRUCache({ max: 10_000, ttl: Math.max(1, ctx.config.events.siteTokenCacheMs) });
    // A revocation anywhere empties every instance's cache (Redis pub/sub when configured).
    void ctx.cache.subscribe('geo:site-token-revoked', () => this.#cache.clear());
  }

  /** The site a token belongs to; 401 for a missing, unknown or revoked token. */
  async identify(token: string | undefined): Promise<SiteIdentity> {
    if (!token || token.length > 200) throw GeoErrors.invalidSiteToken();
    const hash = sha256Hex(token);
    let identity = this.#ctx.config.events.siteTokenCacheMs > 0 ? this.#cache.get(hash) : undefined;
    if (identity === undefined) {
      const row = await findSiteTokenByHash(this.#ctx.db, hash);
      identity =
        row && row.revoked_at === null
          ? { siteTokenId: row.id, workspaceId: row.workspace_id, tenantId: row.tenant_id }
          : false;
      this.#cache.set(hash, identity);
    }
    if (identity === false) throw GeoErrors.invalidSiteToken();
    return identity;
  }
}

export interface Rejection {
  index: number;
  code: string;
  message: string;
}

class EventRejected extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

const PROPERTY_KEY = /^[A-Za-z0-9_.:-]{1,64}$/;

function stringField(event: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = event[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new EventRejected('INVALID_FIELD', `${name} must be a string`);
  if (value.length > max) throw new EventRejected('FIELD_TOO_LONG', `${name} is longer than ${max} characters`);
  return value;
}

function parseUrl(value: string, field: string): URL {
  try {
    return new URL(value, 'https://site.invalid');
  } catch {
    throw new EventRejected('INVALID_URL', `${field} is not a URL`);
  }
}

const SIMPLE_URL = /^(?:https?:\/\/[^/?#\s]*)?(\/[^?#\s]*)?(?:\?([^#\s]*))?(?:#\S*)?$/i;

/** Path and utm_source of a landing URL; a regular expression for the common shapes, the URL parser for the rest. */
function landingParts(url: string): { path: string; utmSource: string | null } {
  const match = SIMPLE_URL.exec(url);
  if (match && !match[1]?.includes('%') && !match[1]?.includes('/.')) {
    const query = match[2];
    let utmSource: string | null = null;
    if (query?.includes('utm_source=')) utmSource = new URLSearchParams(query).get('utm_source');
    return { path: (match[1] ?? '/').slice(0, 1024), utmSource };
  }
  const parsed = parseUrl(url, 'url');
  return { path: parsed.pathname.slice(0, 1024), utmSource: parsed.searchParams.get('utm_source') };
}

function checkProperties(value: unknown): Record<string, string | number | boolean> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new EventRejected('INVALID_PROPERTIES', 'properties must be an object');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > EVENT_LIMITS.maxProperties)
    throw new EventRejected('TOO_MANY_PROPERTIES', `at most ${EVENT_LIMITS.maxProperties} properties`);
  const out: Record<string, string | number | boolean> = {};
  for (const [key, v] of entries) {
    if (!PROPERTY_KEY.test(key))
      throw new EventRejected(
        'INVALID_PROPERTY_KEY',
        `property keys are 1–${EVENT_LIMITS.maxPropertyKey} characters of A–Z a–z 0–9 _ . : -`,
      );
    if (typeof v === 'string') {
      if (v.length > EVENT_LIMITS.maxPropertyValue)
        throw new EventRejected(
          'PROPERTY_VALUE_TOO_LONG',
          `property ${key} is longer than ${EVENT_LIMITS.maxPropertyValue} characters`,
        );
    } else if (!(typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) {
      throw new EventRejected(
        'INVALID_PROPERTY_VALUE',
        `property ${key} must be a string, a finite number or a boolean`,
      );
    }
    out[key] = v as string | number | boolean;
  }
  return out;
}

export interface IngestBatch {
  consent?: { analytics?: boolean } | undefined;
  events: unknown[];
}

/**
 * Validates each event on its own (a bad one is rejected with its index, the others are kept), strips what may
 * identify a person unless analytics consent was given, classifies AI referrals and AI crawler hits, and writes
 * every accepted event in one transaction before answering: a 202 means the batch is durably stored.
 *
 * Never stored: IP addresses, user agents, query strings, full referrer URLs, user ids in clear. With consent:
 * a daily visitor id (keyed hash whose salt is destroyed after the day), the user id as an HMAC with the workspace
 * secret, and the event's properties. Without consent: kind, name, path, referrer host, AI engine and time only.
 */
export async function ingestEvents(
  ctx: GeoContext,
  salts: VisitorSalts,
  writer: EventWriter,
  site: SiteIdentity,
  batch: IngestBatch,
  client: { ip: string; userAgent: string },
): Promise<{ accepted: number; rejected: Rejection[] }> {
  const now = ctx.now();
  const nowMs = now.getTime();
  const receivedAt = now.toISOString();
  const batchConsent = batch.consent?.analytics === true;
  const rows: EventRow[] = [];
  const rejected: Rejection[] = [];
  let salt: Buffer | undefined;
  let secret: string | undefined;
  // A batch comes from one client: hash each (user agent) and each user id once per batch.
  const visitors = new Map<string, string>();
  const referrerHosts = new Map<string, string | null>();
  const crawlers = new Map<string, string | null>();
  const subjects = new Map<string, string>();

  for (let index = 0; index < batch.events.length; index++) {
    const raw = batch.events[index];
    try {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
        throw new EventRejected('INVALID_EVENT', 'an event is a JSON object');
      const event = raw as Record<string, unknown>;
      const type = event.type;
      if (type !== 'pageview' && type !== 'event')
        throw new EventRejected('INVALID_TYPE', 'type must be "pageview" or "event"');
      const name = stringField(event, 'name', EVENT_LIMITS.maxName);
      if (type === 'event' && !name) throw new EventRejected('NAME_REQUIRED', 'an event of type "event" needs a name');
      const url = stringField(event, 'url', EVENT_LIMITS.maxUrl);
      const referrer = stringField(event, 'referrer', EVENT_LIMITS.maxUrl);
      const userId = stringField(event, 'userId', EVENT_LIMITS.maxUserId);
      const userAgent = stringField(event, 'userAgent', EVENT_LIMITS.maxUserAgent) ?? client.userAgent;
      const occurred = stringField(event, 'occurredAt', 40);
      let occurredAt = receivedAt;
      if (occurred !== undefined) {
        const ms = Date.parse(occurred);
        if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(occurred))
          throw new EventRejected('INVALID_TIME', 'occurredAt must be an ISO 8601 date-time');
        if (ms > nowMs + EVENT_LIMITS.maxFutureMs || ms < nowMs - EVENT_LIMITS.maxAgeMs) {
          throw new EventRejected('TIME_OUT_OF_RANGE', 'occurredAt must be within the last 7 days');
        }
        occurredAt = new Date(ms).toISOString();
      }
      const properties = checkProperties(event.properties);
      const eventConsent = event.consent;
      if (
        eventConsent !== undefined &&
        (typeof eventConsent !== 'object' || eventConsent === null || Array.isArray(eventConsent))
      ) {
        throw new EventRejected('INVALID_CONSENT', 'consent must be an object like {"analytics": true}');
      }
      const consent =
        eventConsent !== undefined ? (eventConsent as { analytics?: unknown }).analytics === true : batchConsent;

      const landing = url !== undefined ? landingParts(url) : undefined;
      let referrerHost: string | null = null;
      if (referrer !== undefined && referrer !== '') {
        const known = referrerHosts.get(referrer);
        referrerHost = known !== undefined ? known : parseUrl(referrer, 'referrer').hostname || null;
        if (known === undefined) referrerHosts.set(referrer, referrerHost);
      }
      const path = landing ? landing.path : null;
      let crawler = crawlers.get(userAgent);
      if (crawler === undefined) {
        crawler = classifyCrawler(userAgent);
        crawlers.set(userAgent, crawler);
      }
      const aiEngine = classifyReferral(referrerHost, landing?.utmSource ?? null);

      if (crawler) {
        // A crawler hit is its own measurable kind; bots give no consent and nothing personal is kept.
        rows.push({
          workspace_id: site.workspaceId,
          kind: 'ai_crawler',
          name: name ?? null,
          path,
          referrer_host: null,
          ai_engine: null,
          crawler,
          consent: 0,
          visitor_id: null,
          subject_hash: null,
          properties: null,
          occurred_at: occurredAt,
          received_at: receivedAt,
        });
        continue;
      }
      let visitor: string | null = null;
      let subject: string | null = null;
      if (consent) {
        salt ??= await salts.saltFor(now);
        visitor = visitors.get(userAgent) ?? null;
        if (visitor === null) {
          visitor = visitorId(salt, site.workspaceId, client.ip, userAgent);
          visitors.set(userAgent, visitor);
        }
        if (userId) {
          secret ??= await workspaceSecret(ctx, site.workspaceId);
          subject = subjects.get(userId) ?? null;
          if (subject === null) {
            subject = hashSubject(secret, userId);
            subjects.set(userId, subject);
          }
        }
      }
      rows.push({
        workspace_id: site.workspaceId,
        kind: type,
        name: name ?? null,
        path,
        referrer_host: referrerHost,
        ai_engine: aiEngine,
        crawler: null,
        consent: consent ? 1 : 0,
        visitor_id: visitor,
        subject_hash: subject,
        properties: consent && properties ? JSON.stringify(properties) : null,
        occurred_at: occurredAt,
        received_at: receivedAt,
      });
    } catch (error) {
      if (!(error instanceof EventRejected)) throw error;
      rejected.push({ index, code: error.code, message: error.message });
    }
  }

  if (rows.length > 0) await writer.write(rows);
  return { accepted: rows.length, rejected };
}
