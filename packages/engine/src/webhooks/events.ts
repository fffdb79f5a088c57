import { type Executor, enqueueOutbox, type NewOutboxMessage } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import { publicId } from '../ids.ts';
import { listActiveDestinationsOf } from './destination-store.ts';

/** Version label of the outbound envelope schema. */
export const WEBHOOK_SCHEMA_VERSION = '2026-11-21';

/** Every outbound event of the spec's trigger table (plus the procurement events). */
export const OUTBOUND_EVENTS = [
  'product.created',
  'product.updated',
  'product.upserted',
  'product.deleted',
  'product.inventory.updated',
  'product.price.updated',
  'catalog.batch.upserted',
  'catalog.batch.deleted',
  'cart.created',
  'cart.item.added',
  'cart.item.updated',
  'cart.item.removed',
  'cart.bundle.added',
  'cart.bundle.updated',
  'cart.bundle.removed',
  'cart.updated',
  'cart.cleared',
  'cart.closed',
  'cart.archived',
  'checkout.created',
  'checkout.cancelled',
  'order.created',
  'order.completed',
  'order.updated',
  'order.cancelled',
  'procurement.order.created',
  'procurement.order.sent',
] as const;
export type OutboundEventName = (typeof OUTBOUND_EVENTS)[number];

/** Who made the change: `api` (REST), `webhook` (ingress), `mcp` (tools), `service` (CLI import and the engine itself). */
export type WriteSource = 'api' | 'webhook' | 'mcp' | 'service';

export interface OutboundEvent {
  event: OutboundEventName;
  merchantId: string;
  storeId: string;
  source: WriteSource;
  /** The object snapshot(s): `product`, `products`, `cart`, `order`, `procurementOrder`. */
  body: Record<string, unknown>;
}

/**
 * Collects the events of one write; `flush` writes one outbox message per (event, selecting destination) in the
 * caller's transaction, so the state change and its notifications commit together.
 */
export interface EventSink {
  emit(event: OutboundEvent): void;
  flush(trx: Executor<EngineDb>): Promise<number>;
  /** Every event emitted on this sink (flushed or not), in order. */
  emitted(): readonly OutboundEvent[];
}

export function createEventSink(): EventSink {
  let events: OutboundEvent[] = [];
  const all: OutboundEvent[] = [];
  return {
    emit(event) {
      events.push(event);
      all.push(event);
    },
    emitted: () => all,
    async flush(trx) {
      if (events.length === 0) return 0;
      const pending = events;
      events = [];
      const merchantIds = [...new Set(pending.map((e) => e.merchantId))];
      const destinations = await listActiveDestinationsOf(trx, merchantIds);
      if (destinations.length === 0) return 0;
      const selected = destinations.map((d) => ({
        id: d.id,
        merchantId: d.merchant_id,
        events: new Set(JSON.parse(d.events) as string[]),
      }));
      const messages: NewOutboxMessage[] = [];
      const now = new Date();
      for (const event of pending) {
        const receivers = selected.filter(
          (d) => d.merchantId === event.merchantId && (d.events.has(event.event) || d.events.has('*')),
        );
        if (receivers.length === 0) continue;
        const payload = JSON.stringify({
          id: publicId('evt', now.getTime()),
          event: event.event,
          direction: 'outbound',
          source: event.source,
          version: WEBHOOK_SCHEMA_VERSION,
          timestamp: now.toISOString(),
          scope: { merchantId: event.merchantId, storeId: event.storeId },
          ...event.body,
        });
        for (const receiver of receivers) messages.push({ target: receiver.id, topic: event.event, payload });
      }
      await enqueueOutbox(trx, messages, now);
      return messages.length;
    },
  };
}
