import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildEngine, product, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`smoke (${target.dialect})`, () => {
    test('product → cart → order', async (t) => {
      const engine = await buildEngine(t, target);
      const created = await engine.call('POST', '/api/v1/catalog/products', {
        body: product(engine.boot.storeIds[0]!),
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const cart = await engine.call('POST', '/api/v1/catalog/carts', {
        body: { storeId: engine.boot.storeIds[0], items: [{ catalogId: created.body.catalogId, quantity: 2 }] },
      });
      assert.equal(cart.status, 201, JSON.stringify(cart.body));
      const order = await engine.call('POST', '/api/v1/catalog/orders', { body: { checkoutId: cart.body.checkoutId } });
      assert.equal(order.status, 201, JSON.stringify(order.body));
      const search = await engine.call('GET', '/api/v1/catalog/products?q=running%20shoe');
      assert.equal(search.body.data.length, 1, JSON.stringify(search.body));
    });
  });
}
