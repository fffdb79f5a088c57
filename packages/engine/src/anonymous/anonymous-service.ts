import { hash, randomBytes } from 'node:crypto';
import { type Executor, fromJsonColumn, IdempotencyErrors, payloadHash, sha256Hex, toIsoString } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction, runWrite } from '../write.ts';
import {
  type AnonymousEventRow,
  countAnonymousEvents,
  findEventsByIdempotency,
  findPseudonymKey,
  insertAnonymousEvents,
  insertPseudonymKey,
  listAnonymousEvents,
  replacePseudonymKey,
} from './anonymous-store.ts';
import { createPiiScrubber, type PiiScrubber } from './pii-scrubber.ts';

/** At most this many events per batch. */
export const MAX_BATCH_EVENTS = 100;
/** A realm's pseudonymization key is replaced after this long; the old key is overwritten, not kept. */
export const PSEUDONYM_KEY_ROTATION_MS = 30 * 24 * 3600 * 1000;
/** How long a process reuses a key it read before reading it again (other instances may have rotated it). */
const KEY_CACHE_MS = 60_000;
/** occurred_at may be at most this far ahead of the server's clock, and at most this far behind. */
const MAX_FUTURE_MS = 5 * 60_000;
const MAX_PAST_MS = 366 * 24 * 3600 * 1000;
/** Summary windows: at most 31 days of hour buckets or 366 days of day buckets, and 5000 (bucket, type) groups. */
const MAX_SUMMARY_MS = { hour: 31 * 24 * 3600 * 1000, day: 366 * 24 * 3600 * 1000 } as const;
const MAX_SUMMARY_GROUPS = 5000;

export type AnonymousSource = 'api' | 'catalog' | 'runtime';
export type PropertyValue = string | number | boolean | null;

export interface AnonymousEventInput {
  type: string;
  occurred_at?: string | undefined;
  subject_id?: string | undefined;
  session_id?: string | undefined;
  properties?: Record<string, PropertyValue> | undefined;
  idempotency_key?: string | undefined;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Timestamps this area writes are already `toISOString()` text (SQLite hands them back as written). */
function iso(value: string | Date): string {
  return typeof value === 'string' && ISO_UTC.test(value) ? value : toIsoString(value);
}

export function toAnonymousEventView(row: AnonymousEventRow) {
  return {
    id: row.id,
    type: row.type,
    source: row.source,
    occurred_at: iso(row.occurred_at),
    received_at: iso(row.received_at),
    subject: row.subject,
    session: row.session,
    properties: fromJsonColumn<Record<string, PropertyValue>>(row.properties),
    redactions: row.redactions,
  };
}
export type AnonymousEventView = ReturnType<typeof toAnonymousEventView>;

interface RealmKey {
  version: number;
  /** The key XOR HMAC's inner and outer pads (RFC 2104), computed once per key. */
  innerPad: Buffer;
  outerPad: Buffer;
  createdAt: number;
  readAt: number;
  /** Pseudonyms computed under this key (bounded; dropped with the key). */
  memo: Map<string, string>;
}

/** What anonymous ingestion keeps per process: guard's detector and the realms' current pseudonymization keys. */
export interface AnonymousData {
  scrubber: PiiScrubber;
  keys: Map<string, RealmKey>;
}

const states = new WeakMap<RuntimeContext, AnonymousData>();

function stateOf(rt: RuntimeContext): AnonymousData {
  let state = states.get(rt);
  if (!state) {
    state = { scrubber: createPiiScrubber(), keys: new Map() };
    states.set(rt, state);
  }
  return state;
}

/**
 * The realm's current HMAC key: created on first use, replaced once it is PSEUDONYM_KEY_ROTATION_MS old (the row is
 * overwritten, so earlier pseudonyms cannot be recomputed from an identifier by anyone, the operator included).
 */
async function realmKey(rt: RuntimeContext, realmId: string): Promise<RealmKey> {
  const state = stateOf(rt);
  const now = rt.clock();
  const cached = state.keys.get(realmId);
  if (cached && cached.readAt + KEY_CACHE_MS > now && cached.createdAt + PSEUDONYM_KEY_ROTATION_MS > now) return cached;
  for (let attempt = 0; attempt < 3; attempt++) {
    const row = await findPseudonymKey(rt.db, realmId);
    const fresh = {
      realm_id: realmId,
      version: (row?.version ?? 0) + 1,
      key_sealed: rt.secrets.encrypt(randomBytes(32).toString('hex')),
      created_at: new Date(now).toISOString(),
    };
    if (!row) {
      await inTransaction(rt.engine, (trx) => insertPseudonymKey(trx, fresh));
      continue;
    }
    const createdAt = new Date(toIsoString(row.created_at)).getTime();
    if (createdAt + PSEUDONYM_KEY_ROTATION_MS <= now) {
      await inTransaction(rt.engine, (trx) => replacePseudonymKey(trx, row.version, fresh));
      continue;
    }
    const entry = {
      version: row.version,
      ...hmacPads(Buffer.from(rt.secrets.decrypt(row.key_sealed), 'hex')),
      createdAt,
      readAt: now,
      memo: new Map<string, string>(),
    };
    if (state.keys.size > 10_000) state.keys.clear();
    state.keys.set(realmId, entry);
    return entry;
  }
  throw RuntimeErrors.conflict('The pseudonymization key is being rotated: retry');
}

/** HMAC-SHA256's padded keys (RFC 2104) for a key of at most 64 bytes. */
export function hmacPads(key: Buffer): { innerPad: Buffer; outerPad: Buffer } {
  const innerPad = Buffer.alloc(64, 0x36);
  const outerPad = Buffer.alloc(64, 0x5c);
  for (let i = 0; i < key.length; i++) {
    innerPad[i]! ^= key[i]!;
    outerPad[i]! ^= key[i]!;
  }
  return { innerPad, outerPad };
}

/**
 * `p<version>_<32 hex>`: HMAC-SHA256 (RFC 2104) of the kind and identifier under the realm's current key, computed
 * as two one-shot hashes over the pads prepared once per key (several times faster than a `createHmac` per value,
 * which sets the key up each time); the test checks it against `createHmac`.
 */
export function pseudonym(
  key: Pick<RealmKey, 'version' | 'innerPad' | 'outerPad'>,
  kind: 'subject' | 'session',
  value: string,
): string {
  const inner = hash('sha256', Buffer.concat([key.innerPad, Buffer.from(`${kind}\n${value}`)]), 'buffer');
  return `p${key.version}_${hash('sha256', Buffer.concat([key.outerPad, inner]), 'hex').slice(0, 32)}`;
}

/** `pseudonym`, remembered per key for identifiers seen again (sessions and subjects repeat across events). */
function pseudonymOf(key: RealmKey, kind: 'subject' | 'session', value: string): string {
  const memoKey = `${kind}\n${value}`;
  let known = key.memo.get(memoKey);
  if (known === undefined) {
    known = pseudonym(key, kind, value);
    if (key.memo.size >= 20_000) key.memo.clear();
    key.memo.set(memoKey, known);
  }
  return known;
}

function checkOccurredAt(value: string | undefined, now: number, nowText: string, index: number | undefined): string {
  if (value === undefined) return nowText;
  const at = Date.parse(value);
  const where = index === undefined ? 'occurred_at' : `events/${index}/occurred_at`;
  if (Number.isNaN(at)) throw RuntimeErrors.invalid(`${where} must be a date-time`);
  if (at > now + MAX_FUTURE_MS) throw RuntimeErrors.invalid(`${where} is more than 5 minutes in the future`);
  if (at < now - MAX_PAST_MS) throw RuntimeErrors.invalid(`${where} is more than 366 days in the past`);
  return new Date(at).toISOString();
}

/**
 * Rows for events, after PII removal and pseudonymization: identifiers become pseudonyms, every string property
 * (and every number, read as text) goes through guard's detector; a property whose name holds a detection is dropped.
 */
function sanitize(
  state: AnonymousData,
  key: RealmKey,
  realmId: string,
  source: AnonymousSource,
  inputs: readonly AnonymousEventInput[],
  now: number,
  batch: boolean,
): AnonymousEventRow[] {
  const texts: string[] = [];
  const entries = inputs.map((input) =>
    Object.entries(input.properties ?? {}).map(([name, value]) => {
      const nameAt = texts.push(name) - 1;
      const valueAt = typeof value === 'string' || typeof value === 'number' ? texts.push(String(value)) - 1 : -1;
      return { name, value, nameAt, valueAt };
    }),
  );
  const scrubbed = state.scrubber.scrubAll(texts);
  const receivedAt = new Date(now).toISOString();
  return inputs.map((input, i) => {
    const occurredAt = checkOccurredAt(input.occurred_at, now, receivedAt, batch ? i : undefined);
    let redactions = 0;
    const properties: Record<string, PropertyValue> = {};
    for (const e of entries[i]!) {
      if (scrubbed[e.nameAt]!.removed > 0) {
        redactions += scrubbed[e.nameAt]!.removed;
        continue;
      }
      if (e.valueAt < 0) {
        properties[e.name] = e.value;
        continue;
      }
      const clean = scrubbed[e.valueAt]!;
      redactions += clean.removed;
      properties[e.name] = clean.removed === 0 ? e.value : clean.text;
    }
    return {
      id: newId(now),
      realm_id: realmId,
      type: input.type,
      source,
      occurred_at: occurredAt,
      occurred_hour: `${occurredAt.slice(0, 13)}:00:00.000Z`,
      occurred_day: occurredAt.slice(0, 10),
      subject: input.subject_id === undefined ? null : pseudonymOf(key, 'subject', input.subject_id),
      session: input.session_id === undefined ? null : pseudonymOf(key, 'session', input.session_id),
      properties: JSON.stringify(properties),
      redactions,
      idempotency_hash: input.idempotency_key === undefined ? null : sha256Hex(`${realmId}\n${input.idempotency_key}`),
      payload_hash: input.idempotency_key === undefined ? null : payloadHash(input),
      received_at: receivedAt,
    };
  });
}

/**
 * Records events of one realm on the write path, all or none. An event whose idempotency_key was recorded before
 * with the same event answers the stored one (nothing is written for it); with a different event, the whole
 * request is a 409 IDEMPOTENCY_KEY_REUSED. Returns the events in request order and whether each was a replay.
 */
export async function recordAnonymousEvents(
  rt: RuntimeContext,
  realmId: string,
  source: AnonymousSource,
  inputs: readonly AnonymousEventInput[],
  batch: boolean,
): Promise<{ events: AnonymousEventView[]; replayed: boolean[] }> {
  const state = stateOf(rt);
  const now = rt.clock();
  const key = await realmKey(rt, realmId);
  const rows = sanitize(state, key, realmId, source, inputs, now, batch);
  const { body } = await runWrite(rt.engine, undefined, async (trx) => {
    const hashes = [...new Set(rows.flatMap((r) => (r.idempotency_hash ? [r.idempotency_hash] : [])))];
    const known = new Map((await findEventsByIdempotency(trx, realmId, hashes)).map((r) => [r.idempotency_hash, r]));
    const chosen: { row: AnonymousEventRow; replayed: boolean }[] = [];
    const fresh: AnonymousEventRow[] = [];
    for (const row of rows) {
      const earlier = row.idempotency_hash ? known.get(row.idempotency_hash) : undefined;
      if (earlier) {
        if (earlier.payload_hash !== row.payload_hash) throw IdempotencyErrors.reused();
        chosen.push({ row: earlier, replayed: fresh.indexOf(earlier) < 0 });
        continue;
      }
      fresh.push(row);
      if (row.idempotency_hash) known.set(row.idempotency_hash, row);
      chosen.push({ row, replayed: false });
    }
    await insertAnonymousEvents(trx, fresh);
    return { statusCode: 201, body: chosen };
  });
  return { events: body.map((c) => toAnonymousEventView(c.row)), replayed: body.map((c) => c.replayed) };
}

/**
 * Rows for events the engine records itself (source `catalog` or `runtime`), sanitized like client events, for the
 * caller to write with `writeOwnAnonymousEvents` in the transaction of the business write they describe: nothing
 * is recorded for writes that roll back, and nothing earlier is ever backfilled. Callers pass no free text
 * (no chat text, no customer or payment details): ids, kinds and counts.
 */
export async function prepareOwnAnonymousEvents(
  rt: RuntimeContext,
  realmId: string,
  source: Exclude<AnonymousSource, 'api'>,
  inputs: readonly AnonymousEventInput[],
): Promise<AnonymousEventRow[]> {
  const now = rt.clock();
  return sanitize(stateOf(rt), await realmKey(rt, realmId), realmId, source, inputs, now, true);
}

/** Writes rows from `prepareOwnAnonymousEvents` in the caller's transaction. */
export function writeOwnAnonymousEvents(trx: Executor<EngineDb>, rows: readonly AnonymousEventRow[]): Promise<void> {
  return insertAnonymousEvents(trx, rows);
}

/** POST /api/v1/data/events (operator+). */
export async function recordEvent(rt: RuntimeContext, principal: RuntimePrincipal, input: AnonymousEventInput) {
  const realmId = requirePermission(principal, 'runtime:run');
  const { events, replayed } = await recordAnonymousEvents(rt, realmId, 'api', [input], false);
  return { event: events[0]!, replayed: replayed[0]! };
}

/** POST /api/v1/data/events/batch (operator+). */
export async function recordEventBatch(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  inputs: readonly AnonymousEventInput[],
) {
  const realmId = requirePermission(principal, 'runtime:run');
  if (inputs.length > MAX_BATCH_EVENTS) throw RuntimeErrors.invalid(`events holds at most ${MAX_BATCH_EVENTS} events`);
  const { events, replayed } = await recordAnonymousEvents(rt, realmId, 'api', inputs, true);
  return {
    data: events,
    recorded: new Set(events.filter((_, i) => !replayed[i]).map((e) => e.id)).size,
    replayed: replayed.filter((r) => r).length,
  };
}

export interface AnonymousQuery {
  type?: string | undefined;
  source?: AnonymousSource | undefined;
  subject?: string | undefined;
  session?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** GET /api/v1/data/query (any role): the realm's events, newest recorded first. */
export async function queryEvents(rt: RuntimeContext, principal: RuntimePrincipal, query: AnonymousQuery) {
  const realmId = requirePermission(principal, 'config:read');
  const from = query.from === undefined ? undefined : new Date(query.from).toISOString();
  const to = query.to === undefined ? undefined : new Date(query.to).toISOString();
  if (from && to && from >= to) throw RuntimeErrors.invalid('from must be before to');
  const afterId = cursorAfterId('data-events', query.cursor);
  const rows = await listAnonymousEvents(
    rt.db,
    realmId,
    { afterId, type: query.type, source: query.source, subject: query.subject, session: query.session, from, to },
    query.limit + 1,
  );
  return idPage('data-events', rows, query.limit, toAnonymousEventView);
}

/** GET /api/v1/data/summary (any role): counts by type and by hour or day bucket over [from, to). */
export async function summarizeEvents(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: { from?: string | undefined; to?: string | undefined; bucket: 'hour' | 'day'; type?: string; source?: string },
) {
  const realmId = requirePermission(principal, 'config:read');
  const now = Date.parse(nowIso(rt));
  const to = query.to === undefined ? new Date(now) : new Date(query.to);
  const from = query.from === undefined ? new Date(to.getTime() - 7 * 24 * 3600 * 1000) : new Date(query.from);
  if (from >= to) throw RuntimeErrors.invalid('from must be before to');
  if (to.getTime() - from.getTime() > MAX_SUMMARY_MS[query.bucket])
    throw RuntimeErrors.invalid(
      query.bucket === 'hour' ? 'An hour summary spans at most 31 days' : 'A day summary spans at most 366 days',
    );
  const groups = await countAnonymousEvents(
    rt.db,
    realmId,
    { from: from.toISOString(), to: to.toISOString(), type: query.type, source: query.source },
    query.bucket,
    MAX_SUMMARY_GROUPS + 1,
  );
  const shown = groups.slice(0, MAX_SUMMARY_GROUPS);
  const byType = new Map<string, number>();
  const byBucket = new Map<string, number>();
  for (const g of shown) {
    byType.set(g.type, (byType.get(g.type) ?? 0) + g.count);
    byBucket.set(g.bucket, (byBucket.get(g.bucket) ?? 0) + g.count);
  }
  const bucketStart = (b: string) => (query.bucket === 'day' ? `${b}T00:00:00.000Z` : b);
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    bucket: query.bucket,
    total: shown.reduce((sum, g) => sum + g.count, 0),
    by_type: [...byType]
      .map(([type, count]) => ({ type, count }))
      .sort((a, b) => b.count - a.count || (a.type < b.type ? -1 : 1)),
    buckets: [...byBucket].map(([b, count]) => ({ start: bucketStart(b), count })),
    groups: shown.map((g) => ({ start: bucketStart(g.bucket), type: g.type, count: g.count })),
    truncated: groups.length > MAX_SUMMARY_GROUPS,
  };
}
