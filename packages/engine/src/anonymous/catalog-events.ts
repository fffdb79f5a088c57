import type { ProductView } from '../catalog/product-schemas.ts';
import { realmOfMerchant } from '../merchants/realm-link-service.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import type { OutboundEvent } from '../webhooks/events.ts';
import { inTransaction } from '../write.ts';
import {
  type AnonymousEventInput,
  MAX_BATCH_EVENTS,
  prepareOwnAnonymousEvents,
  writeOwnAnonymousEvents,
} from './anonymous-service.ts';

/** Events waiting for their write, across realms; beyond this, new ones are dropped (and counted). */
const MAX_PENDING = 10_000;
/** How often pending events are written. */
const FLUSH_MS = 250;
/** How long closing waits for the last write. */
const CLOSE_MS = 2000;
/** How long a merchant's realm link (or its absence) is reused before it is read again. */
const LINK_CACHE_MS = 30_000;

/**
 * What the catalog tells the anonymous store (issue 15 item 4). Set on the engine context by the runtime; the catalog
 * calls it and never waits for it.
 */
export interface CatalogActivity {
  /** A product list (`search` with a nonempty query, else a listing) that answered `results` products. */
  listed(merchantId: string, kind: 'search' | 'listing', results: number, terms: number): void;
  /** One product's details were read. */
  viewed(product: ProductView): void;
  /** The events of a committed catalog write (cart creation and completed orders are recorded). */
  committed(events: readonly OutboundEvent[]): void;
}

export interface CatalogActivityRecorder extends CatalogActivity {
  /** Writes what is pending now (tests, shutdown). */
  flush(): Promise<void>;
  /** Events dropped because the buffer was full or their write failed. */
  readonly dropped: number;
  close(): Promise<void>;
}

/**
 * The catalog's anonymous events, recorded after the fact and off the request path: a call only appends to a bounded
 * in-process buffer; every 250 ms the buffer is written per linked realm through the anonymous service (guard's PII
 * removal, pseudonymization of the cart id as the event's session) on the write path, at most 100 events per
 * transaction. A merchant without a linked realm records nothing. Properties are ids, kinds, counts and amounts only:
 * never the search text, a customer, an address or payment data. Trade-off (documented): the catalog's own write never
 * waits for or fails with the recording, and the price is that events buffered when a process dies are lost (at most
 * a quarter of a second of activity); there is no backfill.
 */
export function createCatalogActivityRecorder(rt: RuntimeContext): CatalogActivityRecorder {
  const pending: { merchantId: string; event: AnonymousEventInput }[] = [];
  const links = new Map<string, { realmId: string | undefined; readAt: number }>();
  let dropped = 0;
  let writing: Promise<void> | undefined;
  let closed = false;
  const timer = setInterval(() => void flush(), FLUSH_MS);
  timer.unref();

  const push = (merchantId: string, event: AnonymousEventInput) => {
    if (closed) return;
    if (pending.length >= MAX_PENDING) {
      dropped++;
      return;
    }
    pending.push({ merchantId, event: { ...event, occurred_at: new Date(rt.clock()).toISOString() } });
  };

  const realmOf = async (merchantId: string) => {
    const now = rt.clock();
    const cached = links.get(merchantId);
    if (cached && cached.readAt + LINK_CACHE_MS > now) return cached.realmId;
    const realmId = await realmOfMerchant(rt.db, merchantId);
    if (links.size > 10_000) links.clear();
    links.set(merchantId, { realmId, readAt: now });
    return realmId;
  };

  async function write(): Promise<void> {
    const batch = pending.splice(0, pending.length);
    const byRealm = new Map<string, AnonymousEventInput[]>();
    for (const { merchantId, event } of batch) {
      const realmId = await realmOf(merchantId).catch(() => undefined);
      if (!realmId) continue;
      const list = byRealm.get(realmId) ?? [];
      list.push(event);
      byRealm.set(realmId, list);
    }
    for (const [realmId, events] of byRealm)
      for (let i = 0; i < events.length; i += MAX_BATCH_EVENTS) {
        const chunk = events.slice(i, i + MAX_BATCH_EVENTS);
        try {
          const rows = await prepareOwnAnonymousEvents(rt, realmId, 'catalog', chunk);
          await inTransaction(rt.engine, (trx) => writeOwnAnonymousEvents(trx, rows));
        } catch (error) {
          dropped += chunk.length;
          rt.log.warn({ err: error, realmId, events: chunk.length }, 'catalog anonymous events not recorded');
        }
      }
  }

  function flush(): Promise<void> {
    if (writing) return writing.then(() => (pending.length > 0 ? flush() : undefined));
    if (pending.length === 0) return Promise.resolve();
    writing = write().finally(() => {
      writing = undefined;
    });
    return writing;
  }

  return {
    listed(merchantId, kind, results, terms) {
      push(merchantId, {
        type: kind === 'search' ? 'catalog_search' : 'product_listing',
        properties: kind === 'search' ? { result_count: results, term_count: terms } : { result_count: results },
      });
    },
    viewed(product) {
      push(product.scope.merchantId, {
        type: 'product_view',
        properties: { product_id: product.id, catalog_id: product.catalogId, store_id: product.storeId },
      });
    },
    committed(events) {
      for (const event of events) {
        if (event.event === 'cart.created') {
          const cart = event.body.cart as { id: string; items: unknown[]; totalQuantity: number; currency: string };
          push(event.merchantId, {
            type: 'cart_created',
            session_id: cart.id,
            properties: {
              store_id: event.storeId,
              line_count: cart.items.length,
              quantity: cart.totalQuantity,
              currency: cart.currency,
              channel: event.source,
            },
          });
        } else if (event.event === 'order.completed') {
          const order = event.body.order as {
            id: string;
            cart: { id: string };
            items: unknown[];
            totalQuantity: number;
            totalAmount: string;
            currency: string;
          };
          push(event.merchantId, {
            type: 'order_completed',
            session_id: order.cart.id,
            properties: {
              store_id: event.storeId,
              order_id: order.id,
              line_count: order.items.length,
              quantity: order.totalQuantity,
              total_amount: order.totalAmount,
              currency: order.currency,
              channel: event.source,
            },
          });
        }
      }
    },
    flush,
    get dropped() {
      return dropped;
    },
    async close() {
      clearInterval(timer);
      closed = true;
      // A last write of what is pending, bounded: a database that is gone must not hold up the shutdown.
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        flush().catch(() => undefined),
        new Promise<void>((resolve) => {
          bound = setTimeout(resolve, CLOSE_MS);
        }),
      ]);
      clearTimeout(bound);
    },
  };
}
