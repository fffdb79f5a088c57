import { randomBytes } from 'node:crypto';

let pool = Buffer.alloc(0);
let poolOffset = 0;

/** Fills `target` from a pooled block of random bytes (one getrandom call per 4 KiB instead of per id). */
function randomInto(target: Buffer): void {
  if (poolOffset + target.length > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  pool.copy(target, 0, poolOffset, poolOffset + target.length);
  poolOffset += target.length;
}

let lastMs = 0;
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then randomness, with a 12-bit counter in `rand_a` so ids made
 * in the same millisecond by this process still sort in creation order (pages are keyed on these ids).
 */
export function uuidv7(now = Date.now()): string {
  if (now <= lastMs) {
    sequence++;
    if (sequence > 0xfff) {
      lastMs++;
      sequence = 0;
    }
    now = lastMs;
  } else {
    lastMs = now;
    sequence = randomBytes(1)[0]! & 0x3f; // a small random start leaves room for the counter
  }
  const bytes = Buffer.allocUnsafe(16);
  randomInto(bytes);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID_RE = new RegExp(UUID_PATTERN);

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** Lower-case form used for lookups, so `ABC…` and `abc…` name the same row. */
export function normalizeUuid(value: string): string {
  return value.toLowerCase();
}
