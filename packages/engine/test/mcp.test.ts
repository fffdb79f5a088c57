import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type EngineUnderTest, product, sharedEngine, startReceiver, testDatabaseTargets, until } from './helper.ts';

/** The MCP listener's base URL; the shared engine listens once, on the first call. */
async function listen(_t: TestContext, engine: EngineUnderTest): Promise<string> {
  if (!engine.mcp.server.listening) await engine.mcp.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(engine.mcp.server.address() as AddressInfo).port}`;
}

async function connect(t: TestContext, url: string, key: string, mode: 'legacy' | 'auto' = 'legacy'): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'x-catalog-api-key': key } } }),
  );
  t.after(() => client.close());
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: any;
    content: { text: string }[];
  };
  return { isError: result.isError === true, data: result.structuredContent ?? JSON.parse(result.content[0]!.text) };
};

const REFERENCE = [
  'catalog_search',
  'catalog_get_product',
  'catalog_get_product_details',
  'cart_create',
  'cart_get',
  'cart_add_item',
  'cart_update_item',
  'cart_remove_item',
  'cart_add_bundle',
  'cart_update_bundle',
  'cart_remove_bundle',
  'cart_archive',
  'cart_clear',
  'cart_close',
  'checkout_prepare',
  'checkout_get',
  'checkout_cancel',
];
const CATALOG = [
  'catalog_list_stores',
  'catalog_search_products',
  'catalog_get_product',
  'catalog_get_product_details',
  'catalog_upsert_product',
  'catalog_delete_product',
  'catalog_create_cart',
  'catalog_mutate_cart_items',
  'catalog_archive_cart',
  'catalog_clear_cart',
  'catalog_complete_order',
];

for (const target of testDatabaseTargets()) {
  describe(`public MCP endpoint (${target.dialect})`, () => {
    // The reference flow needs the delivery worker; the other tests do not mind it.
    const shared = sharedEngine(target, { worker: true });
    test('the SDK Client lists every catalog and reference-contract tool on / and /mcp, each with an input schema', async (t) => {
      const engine = await shared.fresh();
      const base = await listen(t, engine);
      for (const path of ['/', '/mcp']) {
        const client = await connect(t, `${base}${path}`, engine.boot.keys.merchant);
        const tools = (await client.listTools()).tools;
        const names = tools.map((tool) => tool.name);
        for (const name of [...CATALOG, ...REFERENCE]) assert.ok(names.includes(name), `${name} on ${path}`);
        assert.ok(tools.every((tool) => tool.inputSchema.type === 'object'));
      }
      const modern = await connect(t, `${base}/mcp`, engine.boot.keys.merchant, 'auto');
      assert.ok((await modern.listTools()).tools.length >= 25);
    });

    test('reference flow: search → cart → idempotent item mutations → checkout_prepare with summary and handoff → cancel; events carry source mcp', async (t) => {
      const engine = await shared.fresh();
      const receiver = await startReceiver(t);
      await engine.call('POST', '/api/v1/catalog/webhooks/destinations', {
        body: { url: receiver.url, events: ['cart.item.added', 'checkout.created', 'cart.bundle.added'] },
      });
      const store = engine.boot.storeIds[0]!;
      const shoe = (
        await engine.call('POST', '/api/v1/catalog/products', {
          body: product(store, { name: 'Trail running shoe', price: '50.00' }),
        })
      ).body;
      const sock = (
        await engine.call('POST', '/api/v1/catalog/products', {
          body: product(store, { name: 'Running sock', price: '5.00' }),
        })
      ).body;
      await engine.call('POST', '/api/v1/catalog/products', {
        body: product(store, { name: 'Running cap', status: 'draft' }),
      });
      const client = await connect(t, `${await listen(t, engine)}/mcp`, engine.boot.keys.merchant);
      const found = await call(client, 'catalog_search', { query: 'running' });
      assert.equal(found.data.products.length, 2, 'only active products');
      const cart = (await call(client, 'cart_create', { storeId: store })).data.cart;
      assert.equal(cart.status, 'open');
      assert.equal(cart.checkoutId, null);
      const missingKey = await call(client, 'cart_add_item', {
        cartId: cart.id,
        catalogId: shoe.catalogId,
        quantity: 1,
      });
      assert.equal(missingKey.isError, true, 'idempotencyKey is required');
      const key = randomUUID();
      const added = await call(client, 'cart_add_item', {
        cartId: cart.id,
        catalogId: shoe.catalogId,
        quantity: 1,
        idempotencyKey: key,
      });
      assert.equal(added.data.cart.totalAmount, '50.00');
      const replay = await call(client, 'cart_add_item', {
        cartId: cart.id,
        catalogId: shoe.catalogId,
        quantity: 1,
        idempotencyKey: key,
      });
      assert.equal(replay.data.idempotentReplayed, true);
      assert.equal(replay.data.cart.totalQuantity, 1);
      const conflict = await call(client, 'cart_add_item', {
        cartId: cart.id,
        catalogId: shoe.catalogId,
        quantity: 2,
        idempotencyKey: key,
      });
      assert.equal(conflict.isError, true);
      assert.equal(conflict.data.error.code, 'IDEMPOTENCY_KEY_REUSED');
      await call(client, 'cart_add_bundle', {
        cartId: cart.id,
        items: [
          { catalogId: sock.catalogId, quantity: 2 },
          { catalogId: shoe.catalogId, quantity: 1 },
        ],
        idempotencyKey: randomUUID(),
      });
      const prepared = await call(client, 'checkout_prepare', { cartId: cart.id, idempotencyKey: randomUUID() });
      const checkout = prepared.data.checkout;
      assert.match(checkout.id, /^chk_/);
      assert.equal(checkout.summary.totalAmount, '110.00');
      assert.equal(checkout.summary.totalQuantity, 4);
      assert.deepEqual(
        { type: checkout.handoff.type, status: checkout.handoff.status },
        { type: 'payment', status: 'awaiting_payment' },
      );
      assert.match(checkout.handoff.reference, /^hof_/);
      assert.equal((await call(client, 'checkout_get', { checkoutId: checkout.id })).data.checkout.id, checkout.id);
      assert.equal(
        (await call(client, 'cart_clear', { cartId: cart.id, idempotencyKey: randomUUID() })).data.error.code,
        'CATALOG_CART_HAS_CHECKOUT',
      );
      assert.equal(
        (await call(client, 'cart_get', { cartId: checkout.id })).isError,
        true,
        'a checkout id is not a cart id',
      );
      const cancelled = await call(client, 'checkout_cancel', { checkoutId: checkout.id });
      assert.equal(cancelled.data.checkout.status, 'cancelled');
      assert.equal((await call(client, 'cart_get', { cartId: cart.id })).data.cart.status, 'open');
      const closed = await call(client, 'cart_close', { cartId: cart.id, idempotencyKey: randomUUID() });
      assert.equal(closed.data.cart.status, 'closed');
      await until(() => receiver.received.length >= 3);
      assert.ok(receiver.received.every((r) => r.body.source === 'mcp' && r.body.direction === 'outbound'));
      assert.deepEqual(receiver.received.map((r) => r.body.event).sort(), [
        'cart.bundle.added',
        'cart.item.added',
        'checkout.created',
      ]);
    });

    test('catalog group: upsert, create cart, mutate, complete order (inventory deducted), delete', async (t) => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const client = await connect(t, `${await listen(t, engine)}/`, engine.boot.keys.merchant);
      assert.equal((await call(client, 'catalog_list_stores', {})).data.stores.length, 3);
      const upserted = await call(client, 'catalog_upsert_product', {
        storeId: store,
        sku: 'M-1',
        name: 'Mug',
        price: 8,
        inventoryQuantity: 3,
      });
      assert.equal(upserted.data.mode, 'created');
      assert.equal(upserted.data.product.source, 'mcp');
      const catalogId = upserted.data.product.catalogId;
      assert.equal((await call(client, 'catalog_get_product', { catalogId })).data.product.sku, 'M-1');
      assert.equal(
        (await call(client, 'catalog_get_product_details', { sku: 'M-1' })).data.product.catalogId,
        catalogId,
      );
      const cart = (await call(client, 'catalog_create_cart', { storeId: store, items: [{ catalogId, quantity: 1 }] }))
        .data.cart;
      assert.match(cart.checkoutId, /^chk_/);
      const mutated = await call(client, 'catalog_mutate_cart_items', {
        cartId: cart.id,
        action: 'update',
        items: [{ catalogId, quantity: 2 }],
        idempotencyKey: randomUUID(),
      });
      assert.equal(mutated.data.cart.totalQuantity, 2);
      const order = await call(client, 'catalog_complete_order', { checkoutId: cart.checkoutId });
      assert.equal(order.data.order.status, 'completed');
      assert.equal((await call(client, 'catalog_get_product', { catalogId })).data.product.inventoryQuantity, 1);
      const again = await call(client, 'catalog_complete_order', { checkoutId: cart.checkoutId });
      assert.equal(again.data.error.code, 'CATALOG_CHECKOUT_COMPLETED');
      assert.equal(
        (await call(client, 'catalog_delete_product', { storeId: store, sku: 'nope' })).data.mode,
        'ignored',
      );
      assert.equal(
        (await call(client, 'catalog_delete_product', { productId: upserted.data.product.id })).data.mode,
        'deleted',
      );
      const invalid = await call(client, 'catalog_upsert_product', {
        storeId: store,
        name: 'x',
        price: 1,
        currency: 'EURO',
      });
      assert.equal(invalid.isError, true);
    });

    test('authentication and scope: no key is a JSON-RPC error with 401; a store key cannot reach other stores; card data is refused', async (t) => {
      const engine = await shared.fresh();
      const base = await listen(t, engine);
      const unauthenticated = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(unauthenticated.status, 401);
      const body = (await unauthenticated.json()) as { error: { code: number } };
      assert.equal(body.error.code, -32001);
      const revoked = await engine.call('POST', '/api/v1/catalog/keys', { body: { name: 'r', scope: 'merchant' } });
      await engine.call('POST', `/api/v1/catalog/keys/${revoked.body.record.id}/revoke`);
      await assert.rejects(connect(t, `${base}/mcp`, revoked.body.key));
      const client = await connect(t, `${base}/mcp`, engine.boot.keys.store);
      // A permission failure is a JSON-RPC error object (DESIGN.md), not a tool result.
      await assert.rejects(
        call(client, 'cart_create', { storeId: engine.boot.storeIds[1] }),
        /scope does not include store/,
      );
      assert.equal((await call(client, 'cart_create', { storeId: engine.boot.storeIds[0] })).isError, false);
      const card = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-api-key': engine.boot.keys.merchant,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'catalog_complete_order', arguments: { checkoutId: 'chk_x', payment: { cvc: '123' } } },
        }),
      });
      assert.equal(card.status, 400);
    });
  });
}
