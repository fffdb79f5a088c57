import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { type EngineUnderTest, product, sharedEngine, testDatabaseTargets } from './helper.ts';

async function seed(engine: EngineUnderTest, overrides: Record<string, unknown> = {}) {
  const response = await engine.call('POST', '/api/v1/catalog/products', {
    body: product(engine.boot.storeIds[0]!, { price: '10.00', inventoryQuantity: 100, ...overrides }),
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as { id: string; catalogId: string };
}

const idem = () => ({ 'idempotency-key': randomUUID() });

for (const target of testDatabaseTargets()) {
  describe(`carts, checkouts and orders (${target.dialect})`, () => {
    const shared = sharedEngine(target);
    test('a cart is created with its checkout id; items mutate atomically with Idempotency-Key; totals are exact', async () => {
      const engine = await shared.fresh();
      const a = await seed(engine, { price: '0.10' });
      const b = await seed(engine, { price: '0.20' });
      const created = await engine.call('POST', '/api/v1/catalog/carts', {
        body: {
          storeId: engine.boot.storeIds[0],
          items: [
            { catalogId: a.catalogId, quantity: 1 },
            { catalogId: a.catalogId, quantity: 2 },
          ],
        },
      });
      assert.equal(created.status, 201);
      const cart = created.body;
      assert.match(cart.checkoutId, /^chk_/);
      assert.equal(cart.checkout.id, cart.checkoutId);
      assert.equal(cart.status, 'checkout_created');
      assert.equal(cart.items.length, 1, 'the same catalogId twice is one line');
      assert.equal(cart.totalQuantity, 3);
      assert.equal(cart.totalAmount, '0.30');
      const headers = idem();
      const add = await engine.call('POST', '/api/v1/catalog/carts/items', {
        headers,
        body: { cartId: cart.id, items: [{ catalogId: b.catalogId, quantity: 1 }] },
      });
      assert.equal(add.status, 200);
      assert.equal(add.body.totalAmount, '0.50');
      const replay = await engine.call('POST', '/api/v1/catalog/carts/items', {
        headers,
        body: { cartId: cart.id, items: [{ catalogId: b.catalogId, quantity: 1 }] },
      });
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.totalQuantity, 4, 'the replay did not add again');
      const reused = await engine.call('POST', '/api/v1/catalog/carts/items', {
        headers,
        body: { cartId: cart.id, items: [{ catalogId: b.catalogId, quantity: 2 }] },
      });
      assert.equal(reused.status, 409);
      assert.equal(reused.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(
        (
          await engine.call('POST', '/api/v1/catalog/carts/items', {
            body: { cartId: cart.id, items: [{ catalogId: b.catalogId, quantity: 1 }] },
          })
        ).status,
        400,
        'Idempotency-Key is required',
      );
      const bundle = await engine.call('PATCH', '/api/v1/catalog/carts/items', {
        headers: idem(),
        body: {
          cartId: cart.id,
          items: [
            { catalogId: a.catalogId, quantity: 5 },
            { itemId: add.body.items[1].id, quantity: 2 },
          ],
        },
      });
      assert.equal(bundle.body.totalQuantity, 7);
      // A bundle with one bad line changes nothing.
      const bad = await engine.call('POST', '/api/v1/catalog/carts/items', {
        headers: idem(),
        body: {
          cartId: cart.id,
          items: [
            { catalogId: b.catalogId, quantity: 1 },
            { catalogId: '1234567890', quantity: 1 },
          ],
        },
      });
      assert.equal(bad.status, 404);
      assert.equal((await engine.call('GET', `/api/v1/catalog/carts/${cart.id}`)).body.totalQuantity, 7);
      const removed = await engine.call('DELETE', '/api/v1/catalog/carts/items', {
        headers: idem(),
        body: { cartId: cart.id, items: [{ catalogId: b.catalogId }] },
      });
      assert.equal(removed.body.totalQuantity, 5);
      assert.equal(
        (
          await engine.call('DELETE', '/api/v1/catalog/carts/items', {
            headers: idem(),
            body: { cartId: cart.id, items: [{ catalogId: b.catalogId }] },
          })
        ).status,
        404,
      );
    });

    test('cart 409s: inactive product, out of stock, quantity over inventory, currency mismatch', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0];
      const draft = await seed(engine, { status: 'draft' });
      const empty = await seed(engine, { inventoryQuantity: 0 });
      const few = await seed(engine, { inventoryQuantity: 2 });
      const euro = await seed(engine, { currency: 'EUR' });
      const cases = [
        [[{ catalogId: draft.catalogId, quantity: 1 }], 'CATALOG_PRODUCT_UNAVAILABLE'],
        [[{ catalogId: empty.catalogId, quantity: 1 }], 'CATALOG_OUT_OF_STOCK'],
        [[{ catalogId: few.catalogId, quantity: 3 }], 'CATALOG_INSUFFICIENT_INVENTORY'],
        [
          [
            { catalogId: few.catalogId, quantity: 1 },
            { catalogId: euro.catalogId, quantity: 1 },
          ],
          'CATALOG_CURRENCY_MISMATCH',
        ],
      ] as const;
      for (const [items, code] of cases) {
        const response = await engine.call('POST', '/api/v1/catalog/carts', { body: { storeId: store, items } });
        assert.equal(response.status, 409, code);
        assert.equal(response.body.error.code, code);
      }
      assert.deepEqual(
        (await engine.call('GET', '/api/v1/catalog/carts')).body.data,
        [],
        'failed creations left no cart',
      );
    });

    test('clear only without a checkout id (409 otherwise); archive is permanent and hidden by default', async () => {
      const engine = await shared.fresh();
      const p = await seed(engine);
      const cart = (
        await engine.call('POST', '/api/v1/catalog/carts', {
          body: { storeId: engine.boot.storeIds[0], items: [{ catalogId: p.catalogId, quantity: 1 }] },
        })
      ).body;
      const clear = await engine.call('POST', `/api/v1/catalog/carts/clear?cartId=${cart.id}`);
      assert.equal(clear.status, 409);
      assert.equal(clear.body.error.code, 'CATALOG_CART_HAS_CHECKOUT');
      const archived = await engine.call('POST', `/api/v1/catalog/carts/archive?cartId=${cart.id}`);
      assert.equal(archived.body.status, 'archived');
      assert.equal(
        (await engine.call('POST', `/api/v1/catalog/carts/archive?cartId=${cart.id}`)).body.status,
        'archived',
      );
      const mutate = await engine.call('POST', '/api/v1/catalog/carts/items', {
        headers: idem(),
        body: { cartId: cart.id, items: [{ catalogId: p.catalogId, quantity: 1 }] },
      });
      assert.equal(mutate.status, 409);
      assert.equal(mutate.body.error.code, 'CATALOG_CART_NOT_OPEN');
      assert.equal(
        (await engine.call('POST', '/api/v1/catalog/orders', { body: { checkoutId: cart.checkoutId } })).status,
        409,
        'the checkout of an archived cart is cancelled',
      );
      assert.deepEqual((await engine.call('GET', '/api/v1/catalog/carts')).body.data, []);
      assert.equal((await engine.call('GET', '/api/v1/catalog/carts?includeArchived=true')).body.data.length, 1);
      assert.equal((await engine.call('GET', '/api/v1/catalog/carts?status=archived')).body.data.length, 1);
      assert.equal((await engine.call('POST', '/api/v1/catalog/carts/clear?cartId=nope')).status, 400);
      assert.equal((await engine.call('POST', `/api/v1/catalog/carts/clear?cartId=${randomUUID()}`)).status, 404);
    });

    test('orders: inventory deducted, one order per checkout, payment ids kept or generated, lookups, cancel restocks', async () => {
      const engine = await shared.fresh();
      const p = await seed(engine, { inventoryQuantity: 5 });
      const makeCart = async (quantity = 2) =>
        (
          await engine.call('POST', '/api/v1/catalog/carts', {
            body: { storeId: engine.boot.storeIds[0], items: [{ catalogId: p.catalogId, quantity }] },
          })
        ).body;
      const cart = await makeCart();
      const order = await engine.call('POST', '/api/v1/catalog/orders', {
        body: {
          checkoutId: cart.checkoutId,
          customer: { name: 'Ada', email: 'ada@example.com' },
          shippingAddress: { line1: '1 Main St', city: 'Springfield', country: 'US', postalCode: '12345' },
          payment: { id: 'pi_123', status: 'captured', provider: 'stripe' },
        },
      });
      assert.equal(order.status, 201);
      assert.match(order.body.orderId, /^ord_/);
      assert.equal(order.body.status, 'completed');
      assert.equal(order.body.totalAmount, '20.00');
      assert.deepEqual(order.body.payment, { id: 'pi_123', status: 'captured', provider: 'stripe', reference: null });
      assert.equal(order.body.checkout.id, cart.checkoutId);
      assert.equal((await engine.call('GET', `/api/v1/catalog/products/${p.id}`)).body.inventoryQuantity, 3);
      const twice = await engine.call('POST', '/catalog/orders/complete', { body: { checkoutId: cart.checkoutId } });
      assert.equal(twice.status, 409);
      assert.equal(twice.body.error.code, 'CATALOG_CHECKOUT_COMPLETED');
      for (const ref of [order.body.id, order.body.orderId, cart.checkoutId]) {
        assert.equal((await engine.call('GET', `/api/v1/catalog/orders/${ref}`)).body.id, order.body.id, ref);
      }
      assert.equal((await engine.call('GET', '/api/v1/catalog/orders/ord_unknown')).status, 404);
      const second = await engine.call('POST', '/api/v1/catalog/orders/complete', {
        body: { checkoutId: (await makeCart(1)).checkoutId, paymentDetails: { provider: 'adyen', reference: 'ref-9' } },
      });
      assert.match(second.body.payment.id, /^pay_/);
      assert.equal(second.body.payment.reference, 'ref-9');
      const short = await engine.call('POST', '/api/v1/catalog/orders', {
        body: { checkoutId: (await makeCart(2)).checkoutId },
      });
      assert.equal(short.status, 201);
      assert.equal((await engine.call('GET', `/api/v1/catalog/products/${p.id}`)).body.inventoryQuantity, 0);
      assert.equal((await engine.call('GET', `/api/v1/catalog/products/${p.id}`)).body.inStock, false);
      const cancelled = await engine.call('PATCH', `/api/v1/catalog/orders/${order.body.orderId}`, {
        body: { status: 'cancelled' },
      });
      assert.equal(cancelled.body.status, 'cancelled');
      assert.ok(cancelled.body.cancelledAt);
      assert.equal((await engine.call('GET', `/api/v1/catalog/products/${p.id}`)).body.inventoryQuantity, 2);
      assert.equal(
        (await engine.call('PATCH', `/api/v1/catalog/orders/${order.body.id}`, { body: { status: 'completed' } }))
          .status,
        409,
      );
      const listed = await engine.call('GET', '/api/v1/catalog/orders?status=completed');
      assert.equal(listed.body.data.length, 2);
      assert.equal(
        (await engine.call('POST', '/api/v1/catalog/orders', { body: { checkoutId: 'chk_nope' } })).status,
        404,
      );
      assert.equal(
        (
          await engine.call('POST', '/api/v1/catalog/orders', {
            body: { checkoutId: (await makeCart(1)).checkoutId, payment: { cvv: '123' } },
          })
        ).status,
        400,
      );
    });

    test('an order with an Idempotency-Key replays its first answer instead of failing', async () => {
      const engine = await shared.fresh();
      const p = await seed(engine);
      const cart = (
        await engine.call('POST', '/api/v1/catalog/carts', {
          body: { storeId: engine.boot.storeIds[0], items: [{ catalogId: p.catalogId, quantity: 1 }] },
        })
      ).body;
      const headers = idem();
      const first = await engine.call('POST', '/api/v1/catalog/orders', {
        headers,
        body: { checkoutId: cart.checkoutId },
      });
      const again = await engine.call('POST', '/api/v1/catalog/orders', {
        headers,
        body: { checkoutId: cart.checkoutId },
      });
      assert.equal(again.status, 201);
      assert.equal(again.body.id, first.body.id);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal((await engine.call('GET', `/api/v1/catalog/products/${p.id}`)).body.inventoryQuantity, 99);
    });

    test('no oversell: 200 concurrent completions for the last 10 units → 10 orders, stock 0, the rest 409', async () => {
      const engine = await shared.fresh();
      const p = await seed(engine, { inventoryQuantity: 200 });
      const carts = await Promise.all(
        Array.from(
          { length: 200 },
          async () =>
            (
              await engine.call('POST', '/api/v1/catalog/carts', {
                body: { storeId: engine.boot.storeIds[0], items: [{ catalogId: p.catalogId, quantity: 1 }] },
              })
            ).body,
        ),
      );
      await engine.call('PATCH', `/api/v1/catalog/products/${p.id}`, { body: { inventoryQuantity: 10 } });
      const results = await Promise.all(
        carts.map((cart) => engine.call('POST', '/api/v1/catalog/orders', { body: { checkoutId: cart.checkoutId } })),
      );
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 201).length, 10);
      assert.equal(statuses.filter((s) => s === 409).length, 190);
      assert.ok(
        results
          .filter((r) => r.status === 409)
          .every((r) => ['CATALOG_OUT_OF_STOCK', 'CATALOG_INSUFFICIENT_INVENTORY'].includes(r.body.error.code)),
      );
      const after = (await engine.call('GET', `/api/v1/catalog/products/${p.id}`)).body;
      assert.equal(after.inventoryQuantity, 0);
      const orders = await engine.db
        .selectFrom('sales_order')
        .select('id')
        .where('merchant_id', '=', engine.boot.merchantId)
        .execute();
      assert.equal(orders.length, 10);
    });

    test('duplicate lines in a checkout are aggregated before the stock check', async () => {
      const engine = await shared.fresh();
      const p = await seed(engine, { inventoryQuantity: 3 });
      const cart = (
        await engine.call('POST', '/api/v1/catalog/carts', {
          body: { storeId: engine.boot.storeIds[0], items: [{ catalogId: p.catalogId, quantity: 2 }] },
        })
      ).body;
      // Stock drops below the cart's total after the cart was made: the order must fail whole.
      await engine.call('PATCH', `/api/v1/catalog/products/${p.id}`, { body: { inventoryQuantity: 1 } });
      const response = await engine.call('POST', '/api/v1/catalog/orders', { body: { checkoutId: cart.checkoutId } });
      assert.equal(response.status, 409);
      assert.equal(response.body.error.code, 'CATALOG_INSUFFICIENT_INVENTORY');
      assert.equal(
        (
          await engine.db
            .selectFrom('sales_order')
            .select('id')
            .where('merchant_id', '=', engine.boot.merchantId)
            .execute()
        ).length,
        0,
        'nothing partial was written',
      );
      assert.equal((await engine.call('GET', `/api/v1/catalog/carts/${cart.id}`)).body.status, 'checkout_created');
    });
  });
}
