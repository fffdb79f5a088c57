import { createHmac, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { GeoDb } from '../db/schema.ts';
import { dailySalt, deleteSaltsBefore, insertDailySaltIfAbsent } from './event-store.ts';

/**
 * Daily-rotating salts for visitor ids. One salt per UTC day, shared by every instance through the database
 * (the first instance to need it creates it; the others read it). Salts of earlier days are deleted as soon as a
 * new day's salt is taken, so old visitor ids can never be recomputed from an address and user agent.
 */
export class VisitorSalts {
  readonly #db: Kysely<GeoDb>;
  #day = '';
  #salt: Buffer | undefined;
  #loading: Promise<Buffer> | undefined;

  constructor(db: Kysely<GeoDb>) {
    this.#db = db;
  }

  async saltFor(now: Date): Promise<Buffer> {
    const day = now.toISOString().slice(0, 10);
    if (day === this.#day && this.#salt) return this.#salt;
    if (this.#loading && this.#day === day) return this.#loading;
    this.#day = day;
    this.#salt = undefined;
    this.#loading = this.#load(day, now).then((salt) => {
      if (this.#day === day) this.#salt = salt;
      return salt;
    });
    try {
      return await this.#loading;
    } finally {
      this.#loading = undefined;
    }
  }

  async #load(day: string, now: Date): Promise<Buffer> {
    await insertDailySaltIfAbsent(this.#db, day, randomBytes(32).toString('hex'), now.toISOString());
    const salt = await dailySalt(this.#db, day);
    // Destroy every earlier day's salt.
    await deleteSaltsBefore(this.#db, day);
    return Buffer.from(salt, 'hex');
  }
}

/** The pseudonymous visitor id of one day: a keyed hash of workspace, address and user agent (never stored). */
export function visitorId(salt: Buffer, workspaceId: string, ip: string, userAgent: string): string {
  return createHmac('sha256', salt)
    .update(workspaceId)
    .update('\u0000')
    .update(ip)
    .update('\u0000')
    .update(userAgent)
    .digest('hex')
    .slice(0, 32);
}
