import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A new credential `<prefix>_<32 base62 characters>` (about 190 bits of entropy). */
export function generateKey(prefix: string, length = 32): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    const byte = bytes[i]!;
    if (byte < 248) out += BASE62[byte % 62]; // 248 = 4 * 62: rejection keeps the alphabet uniform
  }
  while (out.length < length) out += BASE62[randomBytes(1)[0]! % 62];
  return `${prefix}_${out}`;
}

/** SHA-256 hex digest: how issued keys and tokens are kept at rest (one-shot: no Hash object per call). */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Compares two secrets in time that depends on neither value (both are hashed to equal length first). */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

/** Reads a bearer credential from an Authorization header value, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}
