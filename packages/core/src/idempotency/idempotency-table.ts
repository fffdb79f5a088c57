import type { Kysely } from 'kysely';
import { columnTypes } from '../db/dialect.ts';

export const IDEMPOTENCY_TABLE = 'idempotency_key';

/** The columns a service's database needs for idempotency keys. */
export interface IdempotencyKeyTable {
  scope: string;
  key: string;
  request_hash: string;
  state: string;
  status_code: number | null;
  response_body: string | null;
  created_at: string | Date;
  expires_at: string | Date;
}

/**
 * Creates the idempotency table. Call it from a service migration; like any migration step it must not
 * change once shipped: a later change gets a new function.
 */
export async function createIdempotencyTable(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable(IDEMPOTENCY_TABLE)
    .addColumn('scope', 'varchar(300)', (c) => c.notNull())
    .addColumn('key', 'varchar(255)', (c) => c.notNull())
    .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_key_pk', ['scope', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_key_expires_at').on(IDEMPOTENCY_TABLE).column('expires_at').execute();
}
