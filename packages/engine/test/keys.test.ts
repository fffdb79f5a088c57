import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { product, sharedEngine, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`merchant keys and scopes (${target.dialect})`, () => {
    const shared = sharedEngine(target);
    test('each scope reaches exactly its stores', async () => {
      const engine = await shared.fresh();
      const { boot } = engine;
      const stores = async (key: string) =>
        ((await engine.call('GET', '/api/v1/catalog/stores', { key })).body.data as { id: string }[])
          .map((s) => s.id)
          .sort();
      assert.deepEqual(await stores(boot.keys.merchant), [...boot.storeIds].sort());
      assert.deepEqual(await stores(boot.keys.store), [boot.storeIds[0]]);
      assert.deepEqual(await stores(boot.keys.network), [...boot.storeIds, boot.subMerchantStoreId].sort());
      assert.deepEqual(await stores(boot.keys.custom), [boot.storeIds[1]!, boot.subMerchantStoreId].sort());
    });

    test('the key is accepted as Bearer, x-api-key and X-Catalog-API-Key; missing or wrong keys are 401', async () => {
      const engine = await shared.fresh();
      const key = engine.boot.keys.merchant;
      for (const headers of [
        { authorization: `Bearer ${key}` },
        { 'x-api-key': key },
        { 'X-Catalog-API-Key': key },
      ] as Record<string, string>[]) {
        assert.equal((await engine.call('GET', '/api/v1/catalog/stores', { key: null, headers })).status, 200);
      }
      for (const headers of [
        {},
        { authorization: 'Bearer mk_wrong' },
        { authorization: 'Basic abc' },
        { 'x-api-key': '' },
      ] as Record<string, string>[]) {
        const response = await engine.call('GET', '/api/v1/catalog/products', { key: null, headers });
        assert.equal(response.status, 401);
        assert.equal(response.body.error.code, 'CATALOG_UNAUTHORIZED');
        assert.ok(response.body.error.traceId);
        assert.match(String(response.headers['www-authenticate']), /Bearer/);
      }
    });

    test('store scope denials: 403 for a store outside the scope, 404 for its products', async () => {
      const engine = await shared.fresh();
      const { boot } = engine;
      const other = await engine.call('POST', '/api/v1/catalog/products', { body: product(boot.storeIds[1]!) });
      assert.equal(other.status, 201);
      for (const key of [boot.keys.store]) {
        const write = await engine.call('POST', '/api/v1/catalog/products', { key, body: product(boot.storeIds[1]!) });
        assert.equal(write.status, 403);
        assert.equal(write.body.error.code, 'CATALOG_STORE_FORBIDDEN');
        assert.equal(
          (await engine.call('GET', `/api/v1/catalog/products?storeId=${boot.storeIds[1]}`, { key })).status,
          403,
        );
        assert.equal((await engine.call('GET', `/api/v1/catalog/products/${other.body.id}`, { key })).status, 404);
        assert.equal((await engine.call('DELETE', `/api/v1/catalog/products/${other.body.id}`, { key })).status, 404);
        assert.equal(
          (
            await engine.call('POST', '/api/v1/catalog/carts', {
              key,
              body: { storeId: boot.storeIds[1], items: [{ catalogId: other.body.catalogId, quantity: 1 }] },
            })
          ).status,
          403,
        );
      }
      // merchant keys do not reach the sub-merchant's store; network and custom keys do.
      assert.equal(
        (await engine.call('POST', '/api/v1/catalog/products', { body: product(boot.subMerchantStoreId) })).status,
        403,
      );
      assert.equal(
        (
          await engine.call('POST', '/api/v1/catalog/products', {
            key: boot.keys.network,
            body: product(boot.subMerchantStoreId),
          })
        ).status,
        201,
      );
      assert.equal(
        (
          await engine.call('POST', '/api/v1/catalog/products', {
            key: boot.keys.custom,
            body: product(boot.subMerchantStoreId),
          })
        ).status,
        201,
      );
      assert.equal(
        (
          await engine.call('POST', '/api/v1/catalog/products', {
            key: boot.keys.custom,
            body: product(boot.storeIds[0]!),
          })
        ).status,
        403,
      );
      // key management needs a merchant-wide key
      for (const key of [boot.keys.store, boot.keys.custom])
        assert.equal((await engine.call('GET', '/api/v1/catalog/keys', { key })).status, 403);
    });

    test('another merchant sees nothing of this one', async () => {
      const engine = await shared.fresh();
      const created = await engine.call('POST', '/api/v1/catalog/products', {
        body: product(engine.boot.storeIds[0]!),
      });
      const { bootstrapMerchant } = await import('../src/cli/bootstrap.ts');
      const stranger = await bootstrapMerchant(engine.db, engine.ctx.principals, 'stranger');
      const key = stranger.keys.merchant;
      assert.equal((await engine.call('GET', `/api/v1/catalog/products/${created.body.id}`, { key })).status, 404);
      assert.deepEqual((await engine.call('GET', '/api/v1/catalog/products', { key })).body.data, []);
      assert.equal(
        (await engine.call('GET', `/api/v1/catalog/product-details?catalogId=${created.body.catalogId}`, { key }))
          .status,
        404,
      );
      assert.equal(
        (await engine.call('POST', '/api/v1/catalog/products', { key, body: product(engine.boot.storeIds[0]!) }))
          .status,
        403,
      );
    });

    test('lifecycle: shown once, revoke → 401, delete only after revocation, bulk rules', async () => {
      const engine = await shared.fresh();
      const create = async (body: object) => engine.call('POST', '/api/v1/catalog/keys', { body });
      const a = await create({ name: 'a', scope: 'store', storeIds: [engine.boot.storeIds[0]] });
      assert.equal(a.status, 201);
      assert.match(a.body.key, /^mk_[0-9A-Za-z]{32}$/);
      assert.equal(a.body.record.status, 'active');
      const listed = await engine.call('GET', '/api/v1/catalog/keys?limit=100');
      assert.ok(!JSON.stringify(listed.body).includes(a.body.key), 'the key is never listed');
      assert.equal((await create({ name: 'bad', scope: 'store', storeIds: [] })).status, 400);
      assert.equal(
        (
          await create({
            name: 'bad',
            scope: 'custom',
            storeIds: [engine.boot.subMerchantStoreId, '00000000-0000-4000-8000-000000000000'],
          })
        ).status,
        403,
      );
      assert.equal(
        (await create({ name: 'net', scope: 'merchant_network' })).status,
        403,
        'a merchant key cannot mint a network key',
      );

      assert.equal((await engine.call('GET', '/api/v1/catalog/stores', { key: a.body.key })).status, 200);
      const early = await engine.call('DELETE', `/api/v1/catalog/keys/${a.body.record.id}`);
      assert.equal(early.status, 409);
      assert.equal(early.body.error.code, 'CATALOG_KEY_NOT_REVOKED');
      const revoked = await engine.call('POST', `/api/v1/catalog/keys/${a.body.record.id}/revoke`);
      assert.equal(revoked.body.status, 'revoked');
      assert.equal((await engine.call('GET', '/api/v1/catalog/stores', { key: a.body.key })).status, 401);
      assert.equal((await engine.call('DELETE', `/api/v1/catalog/keys/${a.body.record.id}`)).status, 204);
      assert.equal((await engine.call('GET', `/api/v1/catalog/keys/${a.body.record.id}`)).status, 404);

      const expired = await create({
        name: 'old',
        scope: 'merchant',
        expiresAt: new Date(Date.now() - 1000).toISOString(),
      });
      assert.equal(expired.body.record.status, 'expired');
      assert.equal((await engine.call('GET', '/api/v1/catalog/stores', { key: expired.body.key })).status, 401);
      assert.equal(
        (await engine.call('DELETE', `/api/v1/catalog/keys/${expired.body.record.id}`)).status,
        409,
        'an expired key is not deletable before revocation',
      );

      const b = (await create({ name: 'b', scope: 'merchant' })).body.record.id;
      const c = (await create({ name: 'c', scope: 'merchant' })).body.record.id;
      await engine.call('POST', `/api/v1/catalog/keys/${c}/revoke`);
      const bulkDelete = await engine.call('POST', '/api/v1/catalog/keys/bulk-delete', { body: { ids: [b, c] } });
      assert.equal(bulkDelete.status, 409);
      assert.equal((await engine.call('GET', `/api/v1/catalog/keys/${c}`)).status, 200, 'nothing deleted');
      const bulkRevoke = await engine.call('POST', '/api/v1/catalog/keys/bulk-revoke', { body: { ids: [b, c] } });
      assert.deepEqual(bulkRevoke.body, { revoked: [b], alreadyRevoked: [c] });
      const revokedAt = (await engine.call('GET', `/api/v1/catalog/keys/${c}`)).body.revokedAt;
      assert.ok(revokedAt);
      assert.deepEqual(
        (await engine.call('POST', '/api/v1/catalog/keys/bulk-delete', { body: { ids: [b, c] } })).body.deleted.sort(),
        [b, c].sort(),
      );
    });

    test('a key never mints a key that reaches a store or holds a permission it lacks, for every scope', async () => {
      const engine = await shared.fresh();
      const { boot } = engine;
      const create = async (key: string, body: object) => engine.call('POST', '/api/v1/catalog/keys', { key, body });
      const keyCount = async () =>
        (await engine.call('GET', '/api/v1/catalog/keys?limit=100', { key: boot.keys.network })).body.data.length;
      const before = await keyCount();
      // a merchant key does not reach its sub-merchant's store: no store or custom key may reach it either
      for (const body of [
        { name: 'x', scope: 'custom', storeIds: [boot.subMerchantStoreId] },
        { name: 'x', scope: 'custom', storeIds: [boot.storeIds[0], boot.subMerchantStoreId] },
        { name: 'x', scope: 'store', storeIds: [boot.subMerchantStoreId] },
      ]) {
        const refused = await create(boot.keys.merchant, body);
        assert.equal(refused.status, 403, JSON.stringify(body));
        assert.equal(refused.body.error.code, 'CATALOG_STORE_FORBIDDEN');
      }
      const network = await create(boot.keys.merchant, { name: 'x', scope: 'merchant_network' });
      assert.equal(network.body.error.code, 'CATALOG_SCOPE_FORBIDDEN');
      // keys without key management (store, custom) mint nothing, not even a narrower key
      for (const key of [boot.keys.store, boot.keys.custom]) {
        for (const body of [
          { name: 'x', scope: 'store', storeIds: [boot.storeIds[1]] },
          { name: 'x', scope: 'custom', storeIds: [boot.subMerchantStoreId] },
          { name: 'x', scope: 'merchant' },
        ]) {
          const refused = await create(key, body);
          assert.equal(refused.status, 403);
          assert.equal(refused.body.error.code, 'CATALOG_SCOPE_FORBIDDEN');
        }
      }
      assert.equal(await keyCount(), before, 'no refused key was stored');

      // within the issuer's reach it works, and the new key reaches exactly what was asked
      assert.equal((await create(boot.keys.merchant, { name: 'm', scope: 'merchant' })).status, 201);
      assert.equal(
        (await create(boot.keys.merchant, { name: 's', scope: 'store', storeIds: [boot.storeIds[2]] })).status,
        201,
      );
      const sub = await create(boot.keys.network, { name: 'c', scope: 'custom', storeIds: [boot.subMerchantStoreId] });
      assert.equal(sub.status, 201);
      const reached = await engine.call('GET', '/api/v1/catalog/stores', { key: sub.body.key });
      assert.deepEqual(
        reached.body.data.map((s: { id: string }) => s.id),
        [boot.subMerchantStoreId],
      );
      assert.equal((await create(boot.keys.network, { name: 'n', scope: 'merchant_network' })).status, 201);

      // a network key no longer reaches an inactive sub-merchant's store, so it cannot mint a key for it
      const { setMerchantActive } = await import('../src/merchants/merchant-service.ts');
      await setMerchantActive(engine.db, engine.ctx.principals, boot.subMerchantId, false);
      const inactive = await create(boot.keys.network, {
        name: 'x',
        scope: 'store',
        storeIds: [boot.subMerchantStoreId],
      });
      assert.equal(inactive.status, 403);
    });

    test("an inactive merchant's keys get 401", async () => {
      const engine = await shared.fresh();
      const { setMerchantActive } = await import('../src/merchants/merchant-service.ts');
      assert.equal((await engine.call('GET', '/api/v1/catalog/stores')).status, 200);
      await setMerchantActive(engine.db, engine.ctx.principals, engine.boot.merchantId, false);
      assert.equal((await engine.call('GET', '/api/v1/catalog/stores')).status, 401);
      // a network key no longer reaches an inactive sub-merchant's stores
      await setMerchantActive(engine.db, engine.ctx.principals, engine.boot.merchantId, true);
      await setMerchantActive(engine.db, engine.ctx.principals, engine.boot.subMerchantId, false);
      const stores = (
        await engine.call('GET', '/api/v1/catalog/stores', { key: engine.boot.keys.network })
      ).body.data.map((s: { id: string }) => s.id);
      assert.equal(stores.includes(engine.boot.subMerchantStoreId), false);
    });
  });
}
