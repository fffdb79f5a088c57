import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  buildEngine,
  type EngineUnderTest,
  product,
  sharedEngine,
  startReceiver,
  testDatabaseTargets,
  until,
} from './helper.ts';

async function ingest(
  engine: EngineUnderTest,
  url: string,
  body: object,
  options: { eventId?: string | null; key?: string; app?: 'rest' | 'webhook' } = {},
) {
  const app = options.app === 'rest' ? engine.rest : engine.webhook;
  const response = await app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/json',
      'x-api-key': options.key ?? engine.boot.keys.merchant,
      ...(options.eventId === null ? {} : { 'x-webhook-event-id': options.eventId ?? randomUUID() }),
    },
    payload: JSON.stringify(body),
  });
  return { status: response.statusCode, body: response.json() };
}

for (const target of testDatabaseTargets()) {
  describe(`inbound webhooks (${target.dialect})`, () => {
    const shared = sharedEngine(target);
    test('product events on all three paths: modes, replay-safe event ids, absolute inventory, ignored deletes', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      for (const [url, app] of [
        ['/webhooks/catalog', 'webhook'],
        ['/api/webhooks/catalog', 'rest'],
      ] as const) {
        const sku = `W-${url.length}`;
        const created = await ingest(
          engine,
          url,
          { event: 'product.upserted', product: product(store, { sku, inventoryQuantity: 5 }) },
          { app, eventId: `e-${url}` },
        );
        assert.equal(created.status, 200, JSON.stringify(created.body));
        assert.deepEqual(
          { success: created.body.success, mode: created.body.mode, count: created.body.count },
          { success: true, mode: 'created', count: 1 },
        );
        assert.equal(created.body.results[0].data.id, created.body.data.id);
        const replay = await ingest(
          engine,
          url,
          { event: 'product.upserted', product: product(store, { sku, inventoryQuantity: 5 }) },
          { app, eventId: `e-${url}` },
        );
        assert.equal(replay.status, 200);
        assert.equal(replay.body.duplicate, true);
        assert.equal(replay.body.data.id, created.body.data.id);
        const updated = await ingest(
          engine,
          url,
          { event: 'product.updated', product: product(store, { sku, name: 'Renamed' }) },
          { app },
        );
        assert.equal(updated.body.mode, 'updated');
        const inventory = await ingest(
          engine,
          url,
          { event: 'product.inventory.updated', product: { storeId: store, sku, inventoryQuantity: 42 } },
          { app },
        );
        assert.equal(inventory.body.mode, 'updated');
        const again = await ingest(
          engine,
          url,
          { event: 'product.inventory.updated', product: { storeId: store, sku, inventoryQuantity: 42 } },
          { app },
        );
        assert.equal(again.body.mode, 'updated');
        const row = (await engine.call('GET', `/api/v1/catalog/products/${created.body.data.id}`)).body;
        assert.equal(row.inventoryQuantity, 42, 'a snapshot, not a decrement');
        assert.equal(row.source, 'webhook');
        const price = await ingest(
          engine,
          url,
          { event: 'product.price.updated', product: { storeId: store, sku, price: 12.5 } },
          { app },
        );
        assert.equal(price.body.mode, 'updated');
        assert.equal(
          (await engine.call('GET', `/api/v1/catalog/products/${created.body.data.id}`)).body.price,
          '12.50',
        );
        const deleted = await ingest(
          engine,
          url,
          { event: 'product.deleted', product: { storeId: store, sku } },
          { app },
        );
        assert.equal(deleted.body.mode, 'deleted');
        const ignored = await ingest(
          engine,
          url,
          { event: 'product.deleted', product: { storeId: store, sku } },
          { app },
        );
        assert.equal(ignored.status, 200);
        assert.equal(ignored.body.mode, 'ignored');
        assert.equal(ignored.body.success, true);
      }
    });

    test('X-Webhook-Event-ID is required; bad envelopes are 400; scopes apply; 251 products are refused', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const missing = await ingest(
        engine,
        '/webhooks/catalog',
        { event: 'product.upserted', product: product(store) },
        { eventId: null },
      );
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error.code, 'WEBHOOK_EVENT_ID_REQUIRED');
      assert.equal(
        (
          await ingest(
            engine,
            '/webhooks/catalog',
            { event: 'product.upserted', product: product(store) },
            { eventId: 'x'.repeat(256) },
          )
        ).status,
        400,
      );
      assert.equal((await ingest(engine, '/webhooks/catalog', { event: 'nope' })).status, 400);
      assert.equal(
        (
          await ingest(engine, '/webhooks/catalog', {
            event: 'product.upserted',
            product: { storeId: store, sku: 'x' },
          })
        ).status,
        400,
        'name and price are required',
      );
      assert.equal(
        (
          await ingest(engine, '/webhooks/catalog', {
            event: 'product.upserted',
            product: product(store),
            products: [product(store)],
          })
        ).status,
        400,
      );
      const tooMany = Array.from({ length: 251 }, (_, i) => product(store, { sku: `B-${i}` }));
      assert.equal(
        (await ingest(engine, '/webhooks/catalog', { event: 'catalog.batch.upserted', products: tooMany })).status,
        400,
      );
      const denied = await ingest(
        engine,
        '/webhooks/catalog',
        { event: 'product.upserted', product: product(engine.boot.storeIds[1]!) },
        { key: engine.boot.keys.store },
      );
      assert.equal(denied.status, 403);
      const unauthenticated = await engine.webhook.inject({
        method: 'POST',
        url: '/webhooks/catalog',
        headers: { 'content-type': 'application/json', 'x-webhook-event-id': 'a' },
        payload: '{"event":"product.upserted"}',
      });
      assert.equal(unauthenticated.statusCode, 401);
      const card = await ingest(engine, '/webhooks/catalog', {
        event: 'order.completed',
        order: { checkoutId: 'chk_x', payment: { cardNumber: '4242424242424242' } },
      });
      assert.equal(card.status, 400);
    });

    test("another merchant's store is answered as an unknown store by every event, before any lookup", async () => {
      const engine = await shared.fresh();
      const { bootstrapMerchant } = await import('../src/cli/bootstrap.ts');
      const other = await bootstrapMerchant(engine.db, engine.ctx.principals, 'other');
      const store = engine.boot.storeIds[0]!;
      const sku = 'SECRET-SKU';
      const created = await ingest(engine, '/webhooks/catalog', {
        event: 'product.upserted',
        product: product(store, { sku, externalId: 'ext-1', inventoryQuantity: 7, price: 10 }),
      });
      const productId = created.body.data.id as string;
      const unknownStore = randomUUID();
      const events = (storeId: string, skuOrUnknown: string) =>
        [
          [
            '/webhooks/catalog',
            { event: 'product.inventory.updated', product: { storeId, sku: skuOrUnknown, inventoryQuantity: 0 } },
          ],
          [
            '/webhooks/catalog',
            { event: 'product.price.updated', product: { storeId, sku: skuOrUnknown, price: 0.01 } },
          ],
          [
            '/webhooks/catalog',
            { event: 'product.inventory.updated', product: { storeId, externalId: 'ext-1', inventoryQuantity: 0 } },
          ],
          ['/webhooks/catalog', { event: 'product.updated', product: product(storeId, { sku: skuOrUnknown }) }],
          ['/webhooks/catalog', { event: 'product.deleted', product: { storeId, sku: skuOrUnknown } }],
          ['/webhooks/catalog', { event: 'catalog.batch.deleted', products: [{ storeId, sku: skuOrUnknown }] }],
          [
            '/webhooks/catalog',
            { event: 'catalog.batch.upserted', products: [product(storeId, { sku: skuOrUnknown })] },
          ],
          ['/webhooks/catalog', { event: 'cart.created', cart: { storeId } }],
          ['/webhooks/procurement', { event: 'supplier.updated', supplier: { storeId, externalId: 's', name: 'S' } }],
          [
            '/webhooks/procurement',
            { event: 'inventory.updated', inventoryItem: { storeId, sku: skuOrUnknown, name: 'F', quantity: 1 } },
          ],
        ] as const;
      const shape = (response: { status: number; body: any }, storeId: string) => ({
        status: response.status,
        code: response.body.error?.code,
        message: String(response.body.error?.message).replace(storeId, '<store>'),
      });
      for (const skuOrUnknown of [sku, 'NO-SUCH-SKU']) {
        const foreign = events(store, skuOrUnknown);
        const unknown = events(unknownStore, skuOrUnknown);
        for (const [i, [url, body]] of foreign.entries()) {
          const answer = await ingest(engine, url, body, { key: other.keys.merchant });
          assert.equal(answer.status, 403, `${body.event}: ${JSON.stringify(answer.body)}`);
          assert.ok(!JSON.stringify(answer.body).includes(productId), 'no foreign internal id in the error');
          const asUnknown = await ingest(engine, unknown[i]![0], unknown[i]![1], { key: other.keys.merchant });
          assert.deepEqual(shape(answer, store), shape(asUnknown, unknownStore), body.event);
        }
      }
      const untouched = (await engine.call('GET', `/api/v1/catalog/products/${productId}`)).body;
      assert.equal(untouched.inventoryQuantity, 7);
      assert.equal(untouched.price, '10.00');
    });

    test('batches of 250 are applied whole; a failing batch writes nothing', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const products = Array.from({ length: 250 }, (_, i) => product(store, { sku: `B-${i}` }));
      const batch = await ingest(engine, '/webhooks/catalog', { event: 'catalog.batch.upserted', products });
      assert.equal(batch.body.mode, 'batch');
      assert.equal(batch.body.count, 250);
      assert.ok(batch.body.results.every((r: { mode: string }) => r.mode === 'created'));
      const broken = [product(store, { sku: 'NEW-1' }), product(store, { sku: 'NEW-2', price: -1 })];
      assert.equal(
        (await ingest(engine, '/webhooks/catalog', { event: 'catalog.batch.upserted', products: broken })).status,
        400,
      );
      assert.equal((await engine.call('GET', '/api/v1/catalog/product-details?sku=NEW-1')).status, 404);
      const deletes = await ingest(engine, '/webhooks/catalog', {
        event: 'catalog.batch.deleted',
        products: [
          { storeId: store, sku: 'B-0' },
          { storeId: store, sku: 'unknown' },
        ],
      });
      assert.deepEqual(
        deletes.body.results.map((r: { mode: string }) => r.mode),
        ['deleted', 'ignored'],
      );
    });

    test('cart and order events', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const p = (await engine.call('POST', '/api/v1/catalog/products', { body: product(store) })).body;
      const cart = await ingest(engine, '/webhooks/catalog', {
        event: 'cart.created',
        cart: { storeId: store, items: [{ catalogId: p.catalogId, quantity: 1 }] },
      });
      assert.equal(cart.body.mode, 'created');
      const cartId = cart.body.data.id;
      assert.equal(
        (
          await ingest(engine, '/webhooks/catalog', {
            event: 'cart.item.added',
            cart: { items: [{ catalogId: p.catalogId, quantity: 1 }] },
          })
        ).status,
        400,
        'cart.cartId is required',
      );
      assert.equal(
        (
          await ingest(engine, '/webhooks/catalog', {
            event: 'cart.item.added',
            cart: { cartId, item: { catalogId: p.catalogId, quantity: 2 } },
          })
        ).body.mode,
        'updated',
      );
      assert.equal(
        (
          await ingest(engine, '/webhooks/catalog', {
            event: 'cart.bundle.updated',
            cart: { cartId, items: [{ catalogId: p.catalogId, quantity: 4 }] },
          })
        ).body.mode,
        'updated',
      );
      const view = (await engine.call('GET', `/api/v1/catalog/carts/${cartId}`)).body;
      assert.equal(view.totalQuantity, 4);
      const order = await ingest(engine, '/webhooks/catalog', {
        event: 'order.completed',
        order: { checkoutId: view.checkoutId },
      });
      assert.equal(order.body.mode, 'created');
      assert.equal(
        (
          await ingest(engine, '/webhooks/catalog', {
            event: 'order.completed',
            order: { checkoutId: view.checkoutId },
          })
        ).status,
        409,
      );
      const other = await ingest(engine, '/webhooks/catalog', { event: 'cart.created', cart: { storeId: store } });
      assert.equal(
        (await ingest(engine, '/webhooks/catalog', { event: 'cart.archived', cart: { cartId: other.body.data.id } }))
          .body.mode,
        'updated',
      );
    });

    test('procurement events at /webhooks/procurement', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const supplier = await ingest(engine, '/webhooks/procurement', {
        event: 'supplier.updated',
        supplier: { storeId: store, externalId: 'sup-1', name: 'Acme' },
      });
      assert.equal(supplier.body.mode, 'created');
      assert.equal(
        (
          await ingest(engine, '/webhooks/procurement', {
            event: 'supplier.updated',
            supplier: { storeId: store, externalId: 'sup-1', name: 'Acme Ltd' },
          })
        ).body.mode,
        'updated',
      );
      const item = await ingest(engine, '/webhooks/procurement', {
        event: 'inventory.updated',
        inventoryItem: { storeId: store, sku: 'RAW-1', name: 'Flour', quantity: 10 },
      });
      assert.equal(item.body.mode, 'created');
      await ingest(engine, '/webhooks/procurement', {
        event: 'inventory.updated',
        inventoryItem: { storeId: store, sku: 'RAW-1', name: 'Flour', quantity: 3 },
      });
      assert.equal(
        (await engine.call('GET', `/api/v1/catalog/procurement/inventory-items/${item.body.data.id}`)).body.quantity,
        3,
      );
      assert.equal(
        (await ingest(engine, '/webhooks/procurement', { event: 'supplier.updated', supplier: { storeId: store } }))
          .status,
        400,
      );
      assert.equal(
        (await ingest(engine, '/webhooks/procurement', { event: 'product.upserted', product: product(store) })).status,
        400,
      );
    });
  });

  describe(`outbound webhooks (${target.dialect})`, () => {
    const withWorker = sharedEngine(target, { worker: true });
    test('selected events are delivered once each, signed, with x-webhook-secret and the envelope fields; the log is readable', async (t) => {
      const engine = await withWorker.fresh();
      const receiver = await startReceiver(t);
      const destination = await engine.call('POST', '/api/v1/catalog/webhooks/destinations', {
        body: {
          url: receiver.url,
          events: [
            'product.created',
            'product.price.updated',
            'order.completed',
            'cart.created',
            'product.inventory.updated',
          ],
          secret: 's3cret',
        },
      });
      assert.equal(destination.status, 201, JSON.stringify(destination.body));
      assert.match(destination.body.signingSecret, /^whsec_/);
      assert.equal(destination.body.hasSecret, true);
      assert.equal(
        JSON.stringify(
          (await engine.call('GET', `/api/v1/catalog/webhooks/destinations/${destination.body.id}`)).body,
        ).includes('s3cret'),
        false,
      );
      const store = engine.boot.storeIds[0]!;
      const p = (await engine.call('POST', '/api/v1/catalog/products', { body: product(store, { price: 10 }) })).body;
      await engine.call('PATCH', `/api/v1/catalog/products/${p.id}`, { body: { price: 11 } });
      const cart = (
        await engine.call('POST', '/api/v1/catalog/carts', {
          body: { storeId: store, items: [{ catalogId: p.catalogId, quantity: 1 }] },
        })
      ).body;
      await engine.call('POST', '/api/v1/catalog/orders', { body: { checkoutId: cart.checkoutId } });
      await until(() => receiver.received.length >= 5);
      await engine.worker!.idle();
      const events = receiver.received.map((r) => r.body.event).sort();
      assert.equal(events.length, 5, 'each selected event once');
      assert.deepEqual([...new Set(events)].sort(), [
        'cart.created',
        'order.completed',
        'product.created',
        'product.inventory.updated',
        'product.price.updated',
      ]);
      assert.equal(events.includes('product.updated'), false, 'unselected events are not delivered');
      const verifier = new Webhook(destination.body.signingSecret);
      for (const delivery of receiver.received) {
        assert.equal(delivery.headers['x-webhook-secret'], 's3cret');
        assert.equal(delivery.headers['content-type'], 'application/json');
        verifier.verify(delivery.raw, delivery.headers as Record<string, string>);
        assert.equal(delivery.body.direction, 'outbound');
        assert.equal(delivery.body.source, 'api');
        assert.ok(delivery.body.version && delivery.body.timestamp);
        assert.deepEqual(delivery.body.scope, { merchantId: engine.boot.merchantId, storeId: store });
      }
      const order = receiver.received.find((r) => r.body.event === 'order.completed')!.body.order;
      assert.ok(order.orderId && order.id);
      const created = receiver.received.find((r) => r.body.event === 'product.created')!.body.product;
      assert.equal(created.catalogId, p.catalogId);
      const log = await engine.call(
        'GET',
        `/api/v1/catalog/webhooks/destinations/${destination.body.id}/deliveries?limit=100`,
      );
      assert.equal(log.status, 200);
      assert.equal(log.body.data.length, receiver.received.length);
      assert.ok(
        log.body.data.every(
          (d: { status: string; log: { statusCode: number }[] }) =>
            d.status === 'delivered' && d.log[0]!.statusCode === 200,
        ),
      );
    });

    test('failed deliveries are retried with the same webhook-id and logged', async (t) => {
      const engine = await withWorker.fresh();
      let failed = false;
      const receiver = await startReceiver(t, (r) => {
        if (r.body.event !== 'product.created' || failed) return 200;
        failed = true;
        return 500;
      });
      const destination = (
        await engine.call('POST', '/api/v1/catalog/webhooks/destinations', {
          body: { url: receiver.url, events: ['*'] },
        })
      ).body;
      await engine.call('POST', '/api/v1/catalog/stores', { body: { name: 'x' } });
      await engine.call('POST', '/api/v1/catalog/products', { body: product(engine.boot.storeIds[0]!) });
      await until(() => receiver.received.filter((r) => r.body.event === 'product.created').length === 2);
      const ids = receiver.received
        .filter((r) => r.body.event === 'product.created')
        .map((r) => r.headers['webhook-id']);
      assert.equal(ids[0], ids[1]);
      await until(async () => {
        const log = (
          await engine.call('GET', `/api/v1/catalog/webhooks/destinations/${destination.id}/deliveries?limit=100`)
        ).body.data;
        const message = log.find((d: { event: string }) => d.event === 'product.created');
        return message?.status === 'delivered' && message.log.length === 2 && message.log[0].statusCode === 500;
      });
    });

    test('URL validation: IP literals and private names are rejected at save time without the development switch', async (t) => {
      const engine = await buildEngine(t, target, { env: { KEEL_ALLOW_PRIVATE_URLS: 'false' } });
      for (const url of [
        'https://127.0.0.1/hook',
        'https://[::1]/hook',
        'https://169.254.169.254/latest',
        'http://hooks.example.com/x',
        'https://localhost/x',
        'https://10.1.2.3/x',
        'https://internal-service/x',
      ]) {
        const response = await engine.call('POST', '/api/v1/catalog/webhooks/destinations', {
          body: { url, events: ['*'] },
        });
        assert.equal(response.status, 400, url);
        assert.equal(response.body.error.code, 'OUTBOUND_URL_REJECTED', url);
      }
      assert.equal(
        (
          await engine.call('POST', '/api/v1/catalog/webhooks/destinations', {
            body: { url: 'https://x.example.com', events: ['nope'] },
          })
        ).status,
        400,
      );
      assert.equal(
        (await engine.call('GET', '/api/v1/catalog/webhooks/destinations', { key: engine.boot.keys.store })).status,
        403,
      );
    });
  });
}
