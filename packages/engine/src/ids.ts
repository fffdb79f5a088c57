import { randomBytes, randomInt } from 'node:crypto';
import { EngineErrors } from './errors.ts';

/** A UUIDv7 (RFC 9562): time-ordered row ids. */
export function newId(now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';

/** A public identifier `<prefix>_<26 characters>`: time-ordered, unguessable (80 random bits). */
export function publicId(prefix: string, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = BASE32[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(16);
  let tail = '';
  for (let i = 0; i < 16; i++) tail += BASE32[random[i]! % 32];
  return `${prefix}_${time}${tail}`;
}

/** A 10-digit catalog id (no leading zero), as carts and tools use. */
export function newCatalogId(): string {
  return String(randomInt(1_000_000_000, 10_000_000_000));
}

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID = new RegExp(UUID_PATTERN);

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Checks a UUID argument; 400 naming the field otherwise. Returns it lower-cased. */
export function requireUuid(value: string, field: string): string {
  if (!isUuid(value)) throw EngineErrors.invalidId(field);
  return value.toLowerCase();
}
