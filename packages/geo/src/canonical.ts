import { createHash } from 'node:crypto';

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source).sort();
  const sorted: Record<string, unknown> = {};
  for (const key of keys) sorted[key] = source[key];
  return sorted;
}

/**
 * SHA-256 of the request body in canonical form (keys sorted at every level, no whitespace — the same text as
 * core's canonicalJson for JSON bodies), computed with one native JSON.stringify pass: large graph imports are
 * several megabytes, and this is the idempotency fingerprint of every mutation.
 */
export function bodyFingerprint(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(body, sortKeys)).digest('hex');
}
