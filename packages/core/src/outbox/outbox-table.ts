import type { Generated, Kysely } from 'kysely';
import { columnTypes } from '../db/dialect.ts';

export const OUTBOX_TABLE = 'outbox_message';
export const OUTBOX_ATTEMPT_TABLE = 'outbox_attempt';

/** One message to deliver to one target (e.g. one event for one webhook destination). */
export interface OutboxMessageTable {
  /** Stable across retries: sent as `webhook-id`. */
  id: string;
  /** Who receives it, in the service's terms (e.g. a destination id); resolved to a URL at delivery time. */
  target: string;
  /** What it is (e.g. the event name). */
  topic: string;
  /** The exact body sent, as JSON text, so every attempt sends (and signs) the same bytes. */
  payload: string;
  /** `pending`, `delivered`, `failed` (attempts exhausted) or `cancelled` (target gone). */
  status: string;
  attempts: number;
  next_attempt_at: string | Date;
  /** A claimed message is leased until this time; a worker that dies releases it when the lease ends. */
  locked_until: string | Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string | Date;
  delivered_at: string | Date | null;
  /**
   * The W3C `traceparent` of the work that queued the message and the tenant it belongs to (columns added by
   * `addOutboxTraceColumns`; absent in a service that has not run it): every attempt continues that trace.
   */
  traceparent?: string | null;
  trace_tenant?: string | null;
}

/** One delivery attempt: the delivery log. */
export interface OutboxAttemptTable {
  id: Generated<number>;
  message_id: string;
  target: string;
  topic: string;
  attempt: number;
  attempted_at: string | Date;
  duration_ms: number;
  status_code: number | null;
  success: boolean | number;
  error: string | null;
}

export interface OutboxDb {
  [OUTBOX_TABLE]: OutboxMessageTable;
  [OUTBOX_ATTEMPT_TABLE]: OutboxAttemptTable;
}

/**
 * Creates the outbox and delivery-log tables. Call it from a service migration; like any migration step it
 * must not change once shipped: a later change gets a new function.
 */
export async function createOutboxTables(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable(OUTBOX_TABLE)
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('target', 'varchar(255)', (c) => c.notNull())
    .addColumn('topic', 'varchar(255)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', t.timestamp, (c) => c.notNull())
    .addColumn('locked_until', t.timestamp)
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('delivered_at', t.timestamp)
    .execute();
  await db.schema.createIndex('outbox_message_due').on(OUTBOX_TABLE).columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('outbox_message_target').on(OUTBOX_TABLE).columns(['target', 'created_at']).execute();
  await db.schema
    .createTable(OUTBOX_ATTEMPT_TABLE)
    .addColumn('id', t.serial, (c) => (t.autoIncrement ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('message_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('target', 'varchar(255)', (c) => c.notNull())
    .addColumn('topic', 'varchar(255)', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', t.timestamp, (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('success', 'boolean', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
  await db.schema
    .createIndex('outbox_attempt_message')
    .on(OUTBOX_ATTEMPT_TABLE)
    .columns(['message_id', 'attempt'])
    .execute();
  await db.schema.createIndex('outbox_attempt_target').on(OUTBOX_ATTEMPT_TABLE).columns(['target', 'id']).execute();
}

/**
 * Adds the trace columns to the outbox (a later migration step than `createOutboxTables`): `traceparent`, the W3C
 * context of the work that queued a message, and `trace_tenant`, the tenant that work belonged to. Deliveries of
 * messages that carry them continue that trace: their span is a child of the queuing span, in the same tenant.
 */
export async function addOutboxTraceColumns(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable(OUTBOX_TABLE).addColumn('traceparent', 'varchar(55)').execute();
  await db.schema.alterTable(OUTBOX_TABLE).addColumn('trace_tenant', 'varchar(64)').execute();
}

/** Undoes `addOutboxTraceColumns`. */
export async function dropOutboxTraceColumns(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable(OUTBOX_TABLE).dropColumn('trace_tenant').execute();
  await db.schema.alterTable(OUTBOX_TABLE).dropColumn('traceparent').execute();
}
