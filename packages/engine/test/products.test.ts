import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { product, sharedEngine, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`products (${target.dialect})`, () => {
    const shared = sharedEngine(target);
    test('create: 201 with defaults, exact price string, 10-digit catalogId; upsert by sku updates the same product', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const created = await engine.call('POST', '/api/v1/catalog/products', {
        body: { storeId: store, sku: 'A-1', name: 'Mug', price: 19.99 },
      });
      assert.equal(created.status, 201);
      const p = created.body;
      assert.match(p.catalogId, /^\d{10}$/);
      assert.equal(p.price, '19.99');
      assert.deepEqual(
        {
          currency: p.currency,
          status: p.status,
          inStock: p.inStock,
          inventoryQuantity: p.inventoryQuantity,
          variants: p.variants,
          imageUrls: p.imageUrls,
          source: p.source,
        },
        {
          currency: 'USD',
          status: 'active',
          inStock: true,
          inventoryQuantity: 0,
          variants: [],
          imageUrls: [],
          source: 'api',
        },
      );
      assert.equal(p.merchantId, engine.boot.merchantId);
      assert.deepEqual(p.scope, { merchantId: engine.boot.merchantId, storeId: store });
      const again = await engine.call('POST', '/api/v1/catalog/products', {
        body: { storeId: store, sku: 'A-1', name: 'Mug 2', price: '0.10', inventoryQuantity: 3 },
      });
      assert.equal(again.status, 200);
      assert.equal(again.body.id, p.id);
      assert.equal(again.body.catalogId, p.catalogId);
      assert.equal(again.body.name, 'Mug 2');
      assert.equal(again.body.price, '0.10');
      const yen = await engine.call('POST', '/api/v1/catalog/products', {
        body: { storeId: store, sku: 'Y', name: 'Yen', price: 500, currency: 'jpy' },
      });
      assert.equal(yen.body.price, '500');
      assert.equal(yen.body.currency, 'JPY');
      assert.equal(
        (
          await engine.call('POST', '/api/v1/catalog/products', {
            body: { storeId: store, sku: 'Y2', name: 'Yen', price: 5.5, currency: 'JPY' },
          })
        ).status,
        400,
      );
      const precise = await engine.call('POST', '/api/v1/catalog/products', {
        body: { storeId: store, sku: 'P', name: 'P', price: 0.1 + 0.2 },
      });
      assert.equal(precise.status, 400, 'a float artefact is more precise than USD allows');
    });

    test('identity: sku and externalId naming different products is a 409; either identifies the product', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const post = (body: object) =>
        engine.call('POST', '/api/v1/catalog/products', { body: { storeId: store, name: 'X', price: 1, ...body } });
      const a = await post({ sku: 'S1', externalId: 'E1' });
      await post({ sku: 'S2', externalId: 'E2' });
      const conflict = await post({ sku: 'S1', externalId: 'E2' });
      assert.equal(conflict.status, 409);
      assert.equal(conflict.body.error.code, 'CATALOG_IDENTITY_CONFLICT');
      const byExternal = await post({ externalId: 'E1', name: 'renamed' });
      assert.equal(byExternal.status, 200);
      assert.equal(byExternal.body.id, a.body.id);
      assert.equal(byExternal.body.sku, 'S1', 'an identifier not sent keeps its value');
      // The same sku in another store is another product.
      const other = await engine.call('POST', '/api/v1/catalog/products', {
        body: { storeId: engine.boot.storeIds[1], sku: 'S1', name: 'X', price: 1 },
      });
      assert.equal(other.status, 201);
    });

    test('validation: every limit of the product table is a 400 and writes nothing', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const images = Array.from({ length: 21 }, (_, i) => `https://cdn.example.com/${i}.jpg`);
      for (const [label, body] of [
        ['missing name', { storeId: store, price: 1 }],
        ['missing price', { storeId: store, name: 'x' }],
        ['empty name', product(store, { name: '' })],
        ['long name', product(store, { name: 'x'.repeat(256) })],
        ['long sku', product(store, { sku: 'x'.repeat(121) })],
        ['long externalId', product(store, { externalId: 'x'.repeat(256) })],
        ['negative price', product(store, { price: -1 })],
        ['price as word', product(store, { price: 'ten' })],
        ['currency 2 letters', product(store, { currency: 'US' })],
        ['currency digits', product(store, { currency: '123' })],
        ['bad status', product(store, { status: 'deleted' })],
        ['negative inventory', product(store, { inventoryQuantity: -1 })],
        ['fractional inventory', product(store, { inventoryQuantity: 1.5 })],
        ['21 images', product(store, { imageUrls: images })],
        ['http image', product(store, { imageUrl: 'http://cdn.example.com/a.jpg' })],
        ['private image', product(store, { imageUrls: ['https://10.0.0.1/a.jpg'] })],
        ['not a url', product(store, { productUrl: 'not a url' })],
        ['invalid uuid', product('not-a-uuid')],
        ['bad variant', product(store, { variants: [{ name: 'v' }] })],
        ['variant currency', product(store, { variants: [{ name: 'v', price: 1, currency: 'EURO' }] })],
        ['metadata not object', product(store, { metadata: 'x' })],
      ] as const) {
        const response = await engine.call('POST', '/api/v1/catalog/products', {
          body: body as Record<string, unknown>,
        });
        assert.equal(response.status, 400, `${label}: ${JSON.stringify(response.body)}`);
        assert.ok(response.body.error.message, label);
      }
      assert.deepEqual((await engine.call('GET', '/api/v1/catalog/products')).body.data, []);
      assert.equal(
        (await engine.call('POST', '/api/v1/catalog/products', { body: '{"storeId":', headers: {} })).status,
        400,
      );
    });

    test('images: the first imageUrls entry is mirrored into imageUrl', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const created = await engine.call('POST', '/api/v1/catalog/products', {
        body: product(store, { imageUrls: ['https://cdn.example.com/1.jpg', 'https://cdn.example.com/2.jpg'] }),
      });
      assert.equal(created.body.imageUrl, 'https://cdn.example.com/1.jpg');
      const patched = await engine.call('PATCH', `/api/v1/catalog/products/${created.body.id}`, {
        body: { imageUrl: 'https://cdn.example.com/0.jpg' },
      });
      assert.deepEqual(patched.body.imageUrls, ['https://cdn.example.com/0.jpg', 'https://cdn.example.com/2.jpg']);
      const cleared = await engine.call('PATCH', `/api/v1/catalog/products/${created.body.id}`, {
        body: { imageUrl: '' },
      });
      assert.equal(cleared.body.imageUrl, 'https://cdn.example.com/2.jpg');
      const only = await engine.call('POST', '/api/v1/catalog/products', {
        body: product(store, { imageUrl: 'https://cdn.example.com/x.jpg' }),
      });
      assert.deepEqual(only.body.imageUrls, ['https://cdn.example.com/x.jpg']);
      const none = await engine.call('PATCH', `/api/v1/catalog/products/${only.body.id}`, { body: { imageUrls: [] } });
      assert.equal(none.body.imageUrl, null);
    });

    test('GET by UUID, product-details by each identifier, PATCH, DELETE, and the compatibility aliases', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const created = (
        await engine.call('POST', '/api/v1/catalog/products', {
          body: product(store, { sku: 'D-1', externalId: 'ext-1', variants: [{ name: 'Large', price: '2.50' }] }),
        })
      ).body;
      assert.deepEqual(created.variants[0], {
        sku: null,
        externalId: null,
        name: 'Large',
        description: null,
        price: '2.50',
        currency: 'USD',
        status: 'active',
        inStock: true,
        inventoryQuantity: 0,
        imageUrl: null,
        productUrl: null,
        otherDetails: null,
      });
      assert.equal((await engine.call('GET', `/api/v1/catalog/products/${created.id}`)).body.sku, 'D-1');
      assert.equal((await engine.call('GET', '/api/v1/catalog/products/not-a-uuid')).status, 400);
      assert.equal(
        (await engine.call('GET', '/api/v1/catalog/products/00000000-0000-4000-8000-000000000000')).status,
        404,
      );
      for (const query of [
        `catalogId=${created.catalogId}`,
        `productId=${created.id}`,
        'sku=D-1',
        'externalId=ext-1',
        `sku=D-1&storeId=${store}`,
      ]) {
        for (const path of ['/api/v1/catalog/product-details', '/catalog/product', '/api/v1/catalog/product']) {
          const response = await engine.call('GET', `${path}?${query}`);
          assert.equal(response.status, 200, `${path}?${query}`);
          assert.equal(response.body.id, created.id);
        }
      }
      assert.equal((await engine.call('GET', '/api/v1/catalog/product-details')).status, 400);
      assert.equal((await engine.call('GET', '/api/v1/catalog/product-details?sku=nope')).status, 404);
      const patched = await engine.call('PATCH', `/api/v1/catalog/products/${created.id}`, {
        body: { price: 5, status: 'draft' },
      });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.price, '5.00');
      assert.equal(patched.body.name, created.name);
      assert.equal(
        (
          await engine.call('PATCH', `/api/v1/catalog/products/${created.id}`, {
            body: { storeId: engine.boot.storeIds[1] },
          })
        ).status,
        400,
      );
      assert.equal((await engine.call('PATCH', `/api/v1/catalog/products/${created.id}`, { body: {} })).status, 400);
      const viaAlias = await engine.call('POST', '/catalog/product', { body: product(store, { sku: 'ALIAS' }) });
      assert.equal(viaAlias.status, 201);
      assert.equal((await engine.call('DELETE', `/api/v1/catalog/products/${created.id}`)).status, 204);
      assert.equal((await engine.call('DELETE', `/api/v1/catalog/products/${created.id}`)).status, 404);
    });

    test('search: products with every term in the name come first, and pages cross that boundary without gaps', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const post = async (name: string, description: string) =>
        (await engine.call('POST', '/api/v1/catalog/products', { body: product(store, { name, description }) })).body
          .id as string;
      const named = [
        await post('Red wool scarf', 'warm'),
        await post('Red silk scarf', 'light'),
        await post('Scarf, red', 'cotton'),
      ];
      // Strong description matches, but the name lacks a term: they rank after every name match.
      const described = [
        await post('Winter accessory', 'A red scarf, red as a red scarf can be: scarf scarf'),
        await post('Gift set', 'Includes a red scarf'),
        await post('Red gloves', 'Pairs with any scarf'),
      ];
      await post('Blue hat', 'wool');
      const page = async (cursor?: string) => {
        const response = await engine.call(
          'GET',
          `/api/v1/catalog/products?q=red%20scarf&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        return {
          ids: response.body.data.map((p: { id: string }) => p.id) as string[],
          next: response.body.nextCursor as string | null,
        };
      };
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 4; i++) {
        const { ids, next } = await page(cursor);
        seen.push(...ids);
        if (!next) break;
        cursor = next;
      }
      assert.equal(seen.length, 6, 'every match once');
      assert.equal(new Set(seen).size, 6, 'no duplicates across pages');
      assert.deepEqual(new Set(seen.slice(0, 3)), new Set(named), 'name matches first');
      assert.deepEqual(new Set(seen.slice(3)), new Set(described));
    });

    test("search: a store key finds its own matches even when another store's rank above them", async () => {
      const engine = await shared.fresh();
      const [mine, other] = engine.boot.storeIds as [string, string];
      // 250 short, high-ranking names in the other store, then three long, low-ranking ones in the key's store.
      const batch = await engine.call('POST', '/api/webhooks/catalog', {
        headers: { 'x-webhook-event-id': 'search-scope-1' },
        body: {
          event: 'catalog.batch.upserted',
          products: Array.from({ length: 250 }, (_, i) => product(other, { sku: `O-${i}`, name: `Alpha widget ${i}` })),
        },
      });
      assert.equal(batch.status, 200);
      const own: string[] = [];
      for (let i = 0; i < 3; i++) {
        const created = await engine.call('POST', '/api/v1/catalog/products', {
          body: product(mine, {
            sku: `M-${i}`,
            name: `Alpha gadget with a rather long descriptive name for ranking purposes, number ${i}`,
          }),
        });
        own.push(created.body.id);
      }
      const found = await engine.call('GET', '/api/v1/catalog/products?q=alpha&limit=10', {
        key: engine.boot.keys.store,
      });
      assert.equal(found.status, 200);
      assert.deepEqual(new Set(found.body.data.map((p: { id: string }) => p.id)), new Set(own));
      // The merchant key sees both stores: the short names rank first.
      const all = await engine.call('GET', '/api/v1/catalog/products?q=alpha&limit=5');
      assert.equal(all.body.data.length, 5);
      for (const p of all.body.data) assert.match(p.name, /^Alpha widget/);
    });

    test('search: ranked full text over name, description and otherDetails; aliases; pagination', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const post = (body: Record<string, unknown>) =>
        engine.call('POST', '/api/v1/catalog/products', { body: product(store, body) });
      const inName = (await post({ name: 'Waterproof hiking boots', description: 'leather' })).body.id;
      const inDetails = (
        await post({ name: 'Trail shoe', otherDetails: { tags: ['hiking', 'outdoor'], brand: 'Acme' } })
      ).body.id;
      const inDescription = (await post({ name: 'Rain jacket', description: 'Light jacket for hiking in the rain' }))
        .body.id;
      await post({ name: 'Coffee mug', description: 'ceramic' });
      const search = async (path: string) =>
        (await engine.call('GET', path)).body.data.map((p: { id: string }) => p.id);
      assert.deepEqual(await search('/api/v1/catalog/products?q=hiking'), [inName, inDetails, inDescription]);
      assert.deepEqual(await search('/catalog/search?q=hiking'), [inName, inDetails, inDescription]);
      assert.deepEqual(await search('/api/v1/catalog/products?q=acme'), [inDetails]);
      assert.deepEqual(await search('/api/v1/catalog/products?q=boot'), [inName], 'stemmed');
      assert.deepEqual(await search('/api/v1/catalog/products?q=waterp'), [inName], 'the last term is a prefix');
      assert.deepEqual(await search('/api/v1/catalog/products?q=hiking%20rain'), [inDescription]);
      assert.deepEqual(await search('/api/v1/catalog/products?q=%22%27%20OR%201%3D1%20--'), []);
      const first = await engine.call('GET', '/api/v1/catalog/products?q=hiking&limit=2');
      assert.equal(first.body.data.length, 2);
      const second = await engine.call(
        'GET',
        `/api/v1/catalog/products?q=hiking&limit=2&cursor=${first.body.nextCursor}`,
      );
      assert.deepEqual(
        second.body.data.map((p: { id: string }) => p.id),
        [inDescription],
      );
      assert.equal(second.body.nextCursor, null);
      const browse = await engine.call('GET', '/api/v1/catalog/products?limit=3');
      assert.equal(browse.body.data.length, 3);
      const rest = await engine.call('GET', `/api/v1/catalog/products?limit=3&cursor=${browse.body.nextCursor}`);
      assert.equal(rest.body.data.length, 1);
      assert.equal((await engine.call('GET', '/api/v1/catalog/products?cursor=garbage')).status, 400);
      assert.equal((await engine.call('GET', '/api/v1/catalog/products?limit=101')).status, 400);
    });

    test('card numbers and verification codes are rejected with 400 wherever they appear', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      for (const body of [
        product(store, { metadata: { cardNumber: '4111111111111111' } }),
        product(store, { otherDetails: { note: '4111 1111 1111 1111' } }),
        product(store, { metadata: { nested: [{ cvv: '123' }] } }),
        product(store, { card_number: 'x' }),
      ]) {
        const response = await engine.call('POST', '/api/v1/catalog/products', { body });
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.equal(response.body.error.code, 'CATALOG_PAYMENT_DATA_REJECTED');
        assert.equal(JSON.stringify(response.body).includes('4111'), false, 'the value is never echoed');
      }
      // Barcodes and long numeric SKUs are identifiers, not card numbers.
      assert.equal(
        (
          await engine.call('POST', '/api/v1/catalog/products', {
            body: product(store, { sku: '4111111111111111', otherDetails: { gtin: '4006381333931' } }),
          })
        ).status,
        201,
      );
    });
  });
}
