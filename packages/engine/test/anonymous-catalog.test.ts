// The catalog's own anonymous events (issue 15 item 4): recorded in the realm the merchant is linked to, after the
// fact, with ids, kinds and counts only — never customer, address or payment details, never the search text.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CatalogActivityRecorder } from '../src/anonymous/catalog-events.ts';
import { createPiiScrubber } from '../src/anonymous/pii-scrubber.ts';
import { linkRealm, unlinkRealm } from '../src/merchants/realm-link-service.ts';
import { type EngineUnderTest, product, sharedEngine, testDatabaseTargets } from './helper.ts';

const scanner = createPiiScrubber();

async function storedEvents(engine: EngineUnderTest) {
  await (engine.ctx.catalogActivity as CatalogActivityRecorder).flush();
  return engine.db
    .selectFrom('anonymous_event')
    .selectAll()
    .where('realm_id', '=', engine.boot.realmId)
    .orderBy('received_at')
    .execute();
}

for (const target of testDatabaseTargets()) {
  describe(`catalog anonymous events (${target.dialect})`, () => {
    const shared = sharedEngine(target);

    test('listing, view, nonempty search, cart creation and a completed order are recorded in the linked realm without PII', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const created = await engine.call('POST', '/api/v1/catalog/products', {
        body: product(store, { sku: 'LAMP-1', name: 'Desk lamp', price: '40.00', inventoryQuantity: 9 }),
      });
      assert.equal(created.status, 201);
      assert.equal((await engine.call('GET', '/api/v1/catalog/products')).status, 200);
      assert.equal((await engine.call('GET', '/api/v1/catalog/products?q=lamp')).status, 200);
      // An empty search is a listing, not a search.
      assert.equal((await engine.call('GET', '/api/v1/catalog/products?q=%20')).status, 200);
      assert.equal((await engine.call('GET', `/api/v1/catalog/products/${created.body.id}`)).status, 200);
      const cart = await engine.call('POST', '/api/v1/catalog/carts', {
        body: {
          storeId: store,
          items: [{ catalogId: created.body.catalogId, quantity: 2 }],
          metadata: { note: 'call Ada Lovelace on +1 415 555 0100' },
        },
      });
      assert.equal(cart.status, 201);
      const order = await engine.call('POST', '/api/v1/catalog/orders', {
        body: {
          checkoutId: cart.body.checkoutId,
          customer: { name: 'Ada Lovelace', email: 'ada.lovelace@example.com', phone: '+1 415 555 0100' },
          shippingAddress: { line1: '12 Analytical Row', city: 'London', country: 'GB', postalCode: 'NW1 6XE' },
          payment: { id: 'pi_secret_789', status: 'captured', provider: 'stripe' },
        },
      });
      assert.equal(order.status, 201, JSON.stringify(order.body));

      const rows = await storedEvents(engine);
      const types = rows.map((row) => row.type);
      for (const type of ['product_listing', 'catalog_search', 'product_view', 'cart_created', 'order_completed'])
        assert.ok(types.includes(type), `${type} in ${types.join(', ')}`);
      assert.equal(types.filter((type) => type === 'product_listing').length, 2);
      assert.equal(types.filter((type) => type === 'catalog_search').length, 1);
      for (const row of rows) assert.equal(row.source, 'catalog');
      const byType = new Map(rows.map((row) => [row.type, row]));
      const cartEvent = byType.get('cart_created')!;
      const orderEvent = byType.get('order_completed')!;
      // The cart id is the session pseudonym: the cart and its order group together, the id itself is not stored.
      assert.match(String(cartEvent.session), /^p\d+_[0-9a-f]{32}$/);
      assert.equal(orderEvent.session, cartEvent.session);
      const orderProps =
        typeof orderEvent.properties === 'string' ? JSON.parse(orderEvent.properties) : orderEvent.properties;
      assert.equal(orderProps.total_amount, '80.00');
      assert.equal(orderProps.quantity, 2);
      // Nothing of the customer, the address, the payment or the search text reaches the store: guard's detector
      // finds nothing in any stored column, and none of the raw values appears.
      const stored = JSON.stringify(rows);
      for (const secret of [
        'Ada',
        'ada.lovelace',
        '555 0100',
        'Analytical',
        'NW1',
        'pi_secret_789',
        'stripe',
        'lamp',
        cart.body.id,
      ])
        assert.ok(!stored.toLowerCase().includes(secret.toLowerCase()), `${secret} stored`);
      for (const row of rows)
        for (const [column, value] of Object.entries(row)) {
          if (value === null || value instanceof Date) continue;
          assert.deepEqual(scanner.find(String(value)), [], `${column}: ${String(value)}`);
        }
    });

    test('a merchant without a linked realm records nothing; nothing is backfilled when it is linked later', async () => {
      const started = Date.now();
      const other = await shared.fresh();
      assert.equal(await unlinkRealm(other.db, other.boot.realmId), true);
      const store = other.boot.storeIds[0]!;
      const created = await other.call('POST', '/api/v1/catalog/products', {
        body: product(store, { sku: 'MUG-1', name: 'Mug', price: '5.00' }),
      });
      assert.equal((await other.call('GET', `/api/v1/catalog/products/${created.body.id}`)).status, 200);
      assert.equal((await other.call('GET', '/api/v1/catalog/products?q=mug')).status, 200);
      assert.deepEqual(await storedEvents(other), []);
      // Nor in any other realm.
      const recent = await other.db
        .selectFrom('anonymous_event')
        .select('properties')
        .where('source', '=', 'catalog')
        .where('received_at', '>=', new Date(started).toISOString())
        .execute();
      assert.ok(!JSON.stringify(recent).includes(created.body.id));
      // Linking it now records only what happens from now on: the earlier reads are not backfilled.
      await linkRealm(other.db, { realmId: other.boot.realmId, merchantId: other.boot.merchantId, createdBy: 'test' });
      assert.deepEqual(await storedEvents(other), []);
    });

    test('a failing anonymous store never fails the catalog: its events are dropped and counted, calls answer', async () => {
      const engine = await shared.fresh();
      const recorder = engine.ctx.catalogActivity as CatalogActivityRecorder;
      const before = recorder.dropped;
      // The realm has no pseudonymization key yet and sealing one fails: every write of its events fails.
      const secrets = engine.runtime.secrets as { encrypt: (text: string) => string };
      const original = secrets.encrypt;
      secrets.encrypt = () => {
        throw new Error('sealing is down');
      };
      try {
        for (let i = 0; i < 5; i++)
          assert.equal((await engine.call('GET', `/api/v1/catalog/products?q=thing${i}`)).status, 200);
        await recorder.flush();
      } finally {
        secrets.encrypt = original;
      }
      assert.ok(recorder.dropped >= before + 5, `dropped ${recorder.dropped - before}`);
      assert.deepEqual(await storedEvents(engine), []);
    });
  });
}
