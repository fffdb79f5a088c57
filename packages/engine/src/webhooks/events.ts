import { type Executor, enqueueOutbox, fromJsonColumn, type NewOutboxMessage, type SpanOrigin } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import { publicId } from '../ids.ts';
import { listActiveRuntimeWebhooksOf, RUNTIME_TARGET_PREFIX } from '../integrations/runtime-webhook-store.ts';
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

/** Version label of the runtime webhook envelope. */
export const RUNTIME_WEBHOOK_SCHEMA_VERSION = '2026-11-26';

/**
 * Events runtime webhooks receive: a chat or execute turn finished (`execution.succeeded`, `execution.failed`),
 * a durable flow execution reached a state a client acts on (`flow_execution.*`), usage in the quota window
 * crossed one of the quota policy's `notify_at_percent` thresholds (`usage.threshold_reached`).
 */
export const RUNTIME_EVENTS = [
  'execution.succeeded',
  'execution.failed',
  'flow_execution.waiting_for_approval',
  'flow_execution.succeeded',
  'flow_execution.terminal_failure',
  'flow_execution.cancelled',
  'flow_execution.compensated',
  'usage.threshold_reached',
] as const;
export type RuntimeEventName = (typeof RUNTIME_EVENTS)[number];

/** A runtime event for the realm's webhooks; `data` never holds chat text or credentials. */
export interface RuntimeOutboundEvent {
  event: RuntimeEventName;
  realmId: string;
  data: Record<string, unknown>;
}

/** The event of a durable flow execution entering `state`, when runtime webhooks receive that state. */
export function flowExecutionEvent(
  execution: {
    id: string;
    realm_id: string;
    flow_id: string;
    flow_version: number;
    agent_id: string | null;
    trace_id: string;
  },
  state: string,
  errorCode: string | null,
  at: string,
): RuntimeOutboundEvent | undefined {
  const event = `flow_execution.${state}`;
  if (!(RUNTIME_EVENTS as readonly string[]).includes(event)) return undefined;
  return {
    event: event as RuntimeEventName,
    realmId: execution.realm_id,
    data: {
      execution_id: execution.id,
      flow_id: execution.flow_id,
      flow_version: execution.flow_version,
      agent_id: execution.agent_id,
      state,
      trace_id: execution.trace_id,
      error_code: errorCode,
      updated_at: at,
    },
  };
}

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
  /** Queues a runtime event (undefined: nothing to send). */
  emitRuntime(event: RuntimeOutboundEvent | undefined): void;
  flush(trx: Executor<EngineDb>): Promise<number>;
  /** Every event emitted on this sink (flushed or not), in order. */
  emitted(): readonly OutboundEvent[];
}

/**
 * The events of one write. `origin` is the span of the request or job that makes the write: every outbox message it
 * queues records it, so each delivery continues that trace (`traceparent`) and shows in that realm's trace timeline.
 */
export function createEventSink(origin?: SpanOrigin): EventSink {
  let events: OutboundEvent[] = [];
  const all: OutboundEvent[] = [];
  const runtimeEvents: RuntimeOutboundEvent[] = [];
  const flushCatalog = async (trx: Executor<EngineDb>): Promise<number> => {
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
      for (const receiver of receivers) messages.push({ target: receiver.id, topic: event.event, payload, origin });
    }
    await enqueueOutbox(trx, messages, now);
    return messages.length;
  };
  return {
    emit(event) {
      events.push(event);
      all.push(event);
    },
    emitted: () => all,
    emitRuntime(event) {
      if (event) runtimeEvents.push(event);
    },
    async flush(trx) {
      return (await flushCatalog(trx)) + (await flushRuntime(trx, runtimeEvents.splice(0), origin));
    },
  };
}

/** One outbox message per (runtime event, selecting webhook of its realm), targets `runtime:<webhook id>`. */
async function flushRuntime(
  trx: Executor<EngineDb>,
  pending: RuntimeOutboundEvent[],
  origin: SpanOrigin | undefined,
): Promise<number> {
  if (pending.length === 0) return 0;
  const webhooks = await listActiveRuntimeWebhooksOf(trx, [...new Set(pending.map((e) => e.realmId))]);
  if (webhooks.length === 0) return 0;
  const now = new Date();
  const messages: NewOutboxMessage[] = [];
  for (const event of pending) {
    const payload = JSON.stringify({
      id: publicId('evt', now.getTime()),
      type: event.event,
      version: RUNTIME_WEBHOOK_SCHEMA_VERSION,
      timestamp: now.toISOString(),
      realm_id: event.realmId,
      data: event.data,
    });
    for (const webhook of webhooks) {
      const selected = fromJsonColumn<string[]>(webhook.events);
      if (webhook.realm_id === event.realmId && (selected.includes(event.event) || selected.includes('*')))
        messages.push({ target: `${RUNTIME_TARGET_PREFIX}${webhook.id}`, topic: event.event, payload, origin });
    }
  }
  await enqueueOutbox(trx, messages, now);
  return messages.length;
}
