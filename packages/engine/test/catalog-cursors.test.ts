// The catalog's other lists (procurement, the delivery log, keys) page with core's keyset cursor: every row once
// across pages, and an edited, made-up or foreign cursor is a 400 CATALOG_INVALID_FIELD.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { allPages, tamperCursor } from './cursor-pages.ts';
import { buildEngine, product, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`catalog list cursors (${target.dialect})`, () => {
    test('procurement lists, the delivery log and keys page every row once; edited cursors are a 400', async (t) => {
      const engine = await buildEngine(t, target);
      const store = engine.boot.storeIds[0]!;
      const destination = await engine.call('POST', '/api/v1/catalog/webhooks/destinations', {
        body: { name: 'log', url: 'http://127.0.0.1:9/hook', events: ['product.created'] },
      });
      assert.equal(destination.status, 201, JSON.stringify(destination.body));
      const created: Record<string, string[]> = { suppliers: [], 'inventory-items': [], orders: [] };
      for (let i = 0; i < 3; i++) {
        const made = await engine.call('POST', '/api/v1/catalog/products', { body: product(store) });
        assert.equal(made.status, 201, JSON.stringify(made.body));
        const supplier = await engine.call('POST', '/api/v1/catalog/procurement/suppliers', {
          body: { storeId: store, name: `Supplier ${i}` },
        });
        assert.equal(supplier.status, 201, JSON.stringify(supplier.body));
        created.suppliers!.push(supplier.body.id ?? supplier.body.supplier?.id);
        const item = await engine.call('POST', '/api/v1/catalog/procurement/inventory-items', {
          body: { storeId: store, name: `Item ${i}`, sku: `SKU-${i}` },
        });
        assert.equal(item.status, 201, JSON.stringify(item.body));
        created['inventory-items']!.push(item.body.id ?? item.body.inventoryItem?.id);
        const order = await engine.call('POST', '/api/v1/catalog/procurement/orders', {
          body: { storeId: store, items: [{ name: `Item ${i}`, quantity: 2 }] },
        });
        assert.equal(order.status, 201, JSON.stringify(order.body));
        created.orders!.push(order.body.id ?? order.body.order?.id);
      }
      const deliveries = `/api/v1/catalog/webhooks/destinations/${destination.body.id}/deliveries`;
      const everyDelivery = await engine.call('GET', `${deliveries}?limit=100`);
      assert.equal(everyDelivery.body.data.length, 3, 'one message per product.created');
      const everyKey = await engine.call('GET', '/api/v1/catalog/keys?limit=100');
      assert.ok(everyKey.body.data.length > 2);
      const lists: [string, string[]][] = [
        ['/api/v1/catalog/procurement/suppliers', created.suppliers!],
        ['/api/v1/catalog/procurement/inventory-items', created['inventory-items']!],
        ['/api/v1/catalog/procurement/orders', created.orders!],
        [deliveries, everyDelivery.body.data.map((row: { id: string }) => row.id)],
        ['/api/v1/catalog/keys', everyKey.body.data.map((row: { id: string }) => row.id)],
      ];
      const firstCursor = new Map<string, string>();
      for (const [path, ids] of lists) {
        const { seen, cursors } = await allPages((url) => engine.call('GET', url), path, 'nextCursor');
        assert.deepEqual([...seen].sort(), [...ids].sort(), `${path} shows every row once`);
        assert.ok(cursors.length > 0, `${path} has a next page`);
        firstCursor.set(path, cursors[0]!);
      }
      for (const [path, cursor] of firstCursor) {
        const other = [...firstCursor].find(([otherPath]) => otherPath !== path)![1];
        for (const bad of [
          tamperCursor(cursor),
          `${cursor.slice(0, -2)}AA`,
          created.suppliers![0]!,
          other,
          'garbage',
        ]) {
          const reply = await engine.call('GET', `${path}?cursor=${encodeURIComponent(bad)}`);
          assert.equal(reply.status, 400, `${path} with cursor ${bad}: ${JSON.stringify(reply.body)}`);
          assert.equal(reply.body.error.code, 'CATALOG_INVALID_FIELD');
        }
      }
    });
  });
}
