import { addOutboxTraceColumns, dropOutboxTraceColumns } from '@keel/core';
import type { Kysely } from 'kysely';

// Webhook deliveries linked to the originating trace (issue 15 leftover): each outbox message records the
// `traceparent` and realm of the request or job that queued it; the delivery worker continues that trace.
export async function up(db: Kysely<any>): Promise<void> {
  await addOutboxTraceColumns(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropOutboxTraceColumns(db);
}
