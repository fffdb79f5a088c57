import { createHash } from 'node:crypto';

/** A key JavaScript orders before all others in an object ("array index"); sorting then needs the slow path. */
const INDEX_LIKE = /^(?:0|[1-9][0-9]*)$/;
const INDEX_KEYS_FOUND = Symbol('index-like keys');

function sortedCopy(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('non-finite numbers are not JSON');
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  // Objects list index-like keys first and in numeric order, so an object holding one cannot carry the sorted order.
  if (keys.length > 0 && INDEX_LIKE.test(keys[0]!)) throw INDEX_KEYS_FOUND;
  keys.sort();
  const sorted: Record<string, unknown> = {};
  for (const key of keys) sorted[key] = (value as Record<string, unknown>)[key];
  return sorted;
}

function canonicalSlow(input: unknown): string {
  const value =
    input !== null && typeof input === 'object' && typeof (input as { toJSON?: unknown }).toJSON === 'function'
      ? (input as { toJSON(): unknown }).toJSON()
      : input;
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('non-finite numbers are not JSON');
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value))
    return `[${value.map((item) => canonicalSlow(item === undefined ? null : item)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalSlow(v)}`).join(',')}}`;
}

/**
 * Canonical JSON (RFC 8785 for JSON documents): object keys sorted by UTF-16 code units (so `"10"` before `"9"`), no
 * whitespace, numbers and strings as ECMAScript serializes them. Equal documents give equal text. One native
 * `JSON.stringify` pass when no object has an index-like key (bodies of several megabytes stay cheap), else a walk.
 */
export function canonicalJson(value: unknown): string {
  try {
    return JSON.stringify(value, sortedCopy) ?? 'null';
  } catch (error) {
    if (error !== INDEX_KEYS_FOUND) throw error;
    return canonicalSlow(value);
  }
}

/** SHA-256 of the canonical JSON: how a request payload is remembered without keeping it (the one request hash). */
export function payloadHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
