import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { EngineErrors } from './errors.ts';

/**
 * A UUIDv7 (RFC 9562): time-ordered row ids. The 74 random bits come from `randomUUID` (whose entropy Node draws
 * in batches) rather than a `randomBytes` call per id: its variant bits are already RFC 9562's.
 */
export function newId(now = Date.now()): string {
  const random = randomUUID(); // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx
  const time = now.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}-${random.slice(19)}`;
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
