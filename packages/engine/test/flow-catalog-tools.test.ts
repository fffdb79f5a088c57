import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ToolCall } from '../src/flows/index.ts';
import { bootstrapRealm } from '../src/identity/identity-service.ts';
import { linkRealm, realmLink, unlinkRealm } from '../src/merchants/realm-link-service.ts';
import { publishedFlow } from './execution-helper.ts';
import { type EngineUnderTest, product, sharedEngine, testDatabaseTargets } from './helper.ts';

/** A runtime token of the realm `keel engine bootstrap` linked to the test's merchant. */
async function realmToken(
  engine: EngineUnderTest,
  accessKey = engine.boot.accessKey,
  secretKey = engine.boot.secretKey,
) {
  const reply = await engine.call('POST', '/api/v1/auth/token', {
    key: null,
    body: { access_key: accessKey, secret_key: secretKey },
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.access_token as string;
}

function runtimeCall(engine: EngineUnderTest, token: string) {
  return {
    call: (method: string, url: string, options: { token?: string | null; body?: unknown } = {}) =>
      engine.call(method, url, {
        key: null,
        headers: { authorization: `Bearer ${options.token ?? token}` },
        ...(options.body !== undefined ? { body: options.body } : {}),
      }),
  };
}

/** A flow step's call into the invoker (`scope` of the realm, the call with `overrides`). */
function stepCall(realmId: string, overrides: Partial<ToolCall> & Pick<ToolCall, 'tool' | 'arguments'>) {
  const scope = {
    executionId: 'e1',
    realmId,
    agentId: null,
    approvalGated: new Set<string>(),
    policyVersionId: null,
    createdBy: 'test',
    sessionId: null,
  };
  const call: ToolCall = {
    executionId: 'e1',
    stepKey: `root/${overrides.tool}#1`,
    nodeId: overrides.tool,
    signal: new AbortController().signal,
    depth: 0,
    effect: 'read',
    idempotencyKey: `k-${Math.random().toString(36).slice(2)}`,
    compensating: false,
    ...overrides,
  };
  return [scope, call] as const;
}

/** A search → details → cart → checkout handoff flow over the linked merchant's catalog. */
const SHOP_NODES = [
  {
    id: 'search',
    type: 'tool',
    tool: 'catalog_search',
    effect: 'read',
    arguments: { object: { query: { var: 'input.q' } } },
    next: 'details',
  },
  {
    id: 'details',
    type: 'tool',
    tool: 'catalog_get_product_details',
    effect: 'read',
    arguments: { object: { catalogId: { var: ['vars.search.products.0.catalogId', '0000000000'] } } },
    next: 'cart',
  },
  {
    id: 'cart',
    type: 'tool',
    tool: 'cart_create',
    arguments: {
      object: {
        storeId: { var: 'input.store' },
        items: [{ object: { catalogId: { var: ['vars.details.product.catalogId', '0000000000'] }, quantity: 2 } }],
      },
    },
    next: 'checkout',
  },
  {
    id: 'checkout',
    type: 'tool',
    tool: 'checkout_prepare',
    arguments: { object: { cartId: { var: ['vars.cart.cart.id', '00000000-0000-4000-8000-000000000000'] } } },
    next: 'done',
  },
  {
    id: 'done',
    type: 'output',
    action: 'DATA_RESULT',
    data: {
      object: {
        cart_id: { var: 'vars.cart.cart.id' },
        checkout_id: { var: 'vars.checkout.checkout.id' },
        total: { var: 'vars.checkout.checkout.summary.totalAmount' },
      },
    },
  },
];

for (const target of testDatabaseTargets()) {
  describe(`catalog tools in flows, realm ↔ merchant link (${target.dialect})`, () => {
    const shared = sharedEngine(target);

    test('a linked realm’s flow searches, reads details, creates a cart and prepares the checkout in-process', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const created = await engine.call('POST', '/api/v1/catalog/products', {
        body: product(store, { sku: 'TENT-1', name: 'Trail tent', price: '250.00', inventoryQuantity: 5 }),
      });
      assert.equal(created.status, 201);
      const token = await realmToken(engine);
      const api = runtimeCall(engine, token);
      const flow = await publishedFlow(api, token, 'Catalog shop', SHOP_NODES, { input: { q: 'tent', store } });
      const run = await api.call('POST', `/api/v1/runtime/flows/${flow.id}/execute`, {
        body: { input: { q: 'tent', store } },
      });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      assert.equal(run.body.state, 'succeeded', JSON.stringify(run.body));
      const data = run.body.action.data;
      assert.equal(data.total, '500.00');
      assert.match(data.checkout_id, /^chk_/);
      // The cart is the merchant's own (the same service as REST): its merchant key reads it.
      const cart = await engine.call('GET', `/api/v1/catalog/carts/${data.cart_id}`);
      assert.equal(cart.status, 200);
      assert.equal(cart.body.status ?? cart.body.cart?.status, 'checkout_created');
    });

    test('writes carry the step idempotency key: a replayed step answers the first cart, no second one', async () => {
      const engine = await shared.fresh();
      const store = engine.boot.storeIds[0]!;
      const tools = engine.runtime.extensions.flowTools!;
      const [scope, call] = stepCall(engine.boot.realmId, {
        tool: 'cart_create',
        effect: 'write',
        // A key in the node's arguments is ignored: the step's key decides.
        arguments: { storeId: store, idempotencyKey: 'chosen-by-the-flow' },
        idempotencyKey: 'flow_step_key_1',
      });
      const first = (await tools.callTool(scope, call)).output as { cart: { id: string } };
      const again = (await tools.callTool(scope, call)).output as {
        cart: { id: string };
        idempotentReplayed?: boolean;
      };
      assert.equal(again.cart.id, first.cart.id);
      assert.equal(again.idempotentReplayed, true);
      const other = (await tools.callTool(scope, { ...call, idempotencyKey: 'flow_step_key_2' })).output as {
        cart: { id: string };
      };
      assert.notEqual(other.cart.id, first.cart.id);
      // Arguments are checked against the tool's schema before anything runs.
      await assert.rejects(tools.callTool(scope, { ...call, arguments: { storeId: 'nope' } }), {
        code: 'TOOL_ARGUMENTS_INVALID',
      });
    });

    test('cross-tenant: a realm reaches only its own merchant’s stores and products', async () => {
      const mine = await shared.fresh();
      const theirs = await shared.fresh();
      const foreign = await theirs.call('POST', '/api/v1/catalog/products', {
        body: product(theirs.boot.storeIds[0]!, { sku: 'SECRET-1', name: 'Their lamp', price: '10.00' }),
      });
      assert.equal(foreign.status, 201);
      const tools = mine.runtime.extensions.flowTools!;
      const realm = mine.boot.realmId;
      await assert.rejects(
        tools.callTool(
          ...stepCall(realm, { tool: 'catalog_get_product_details', arguments: { catalogId: foreign.body.catalogId } }),
        ),
        { code: 'CATALOG_PRODUCT_NOT_FOUND', retryable: false },
      );
      await assert.rejects(
        tools.callTool(
          ...stepCall(realm, {
            tool: 'cart_create',
            effect: 'write',
            arguments: { storeId: theirs.boot.storeIds[0]! },
          }),
        ),
        { code: 'CATALOG_STORE_FORBIDDEN' },
      );
      const search = (await tools.callTool(
        ...stepCall(realm, { tool: 'catalog_search', arguments: { query: 'lamp' } }),
      )) as {
        output: { products: unknown[] };
      };
      assert.deepEqual(search.output.products, []);
      // The runtime's catalog port answers the same way.
      const port = mine.runtime.extensions.catalog!;
      assert.deepEqual(await port.search(mine.boot.realmId, 'lamp'), []);
      assert.equal(await port.details(mine.boot.realmId, { catalogId: foreign.body.catalogId }), undefined);
      assert.equal(
        (await port.details(theirs.boot.realmId, { catalogId: foreign.body.catalogId }))?.name,
        'Their lamp',
      );
    });

    test('an unlinked realm’s catalog calls fail closed; the link is one merchant per realm', async () => {
      const engine = await shared.fresh();
      const loose = await bootstrapRealm(engine.db, { realmName: 'Loose realm', username: 'loose-service' });
      const tools = engine.runtime.extensions.flowTools!;
      const [scope, call] = stepCall(loose.realmId, { tool: 'catalog_search', arguments: { query: 'tent' } });
      await assert.rejects(tools.callTool(scope, call), { code: 'CATALOG_NOT_LINKED', retryable: false });
      assert.equal(await engine.runtime.extensions.catalog!.search(loose.realmId, 'tent'), undefined);
      // A tool that is not a catalog tool still goes to the registry (none attached: unavailable).
      await assert.rejects(tools.callTool(scope, { ...call, tool: 'catalog_upsert_product' }), {
        code: 'TOOL_UNAVAILABLE',
      });

      // The bootstrap merchant is linked to the bootstrap realm: neither side takes a second link.
      await assert.rejects(
        linkRealm(engine.db, { realmId: loose.realmId, merchantId: engine.boot.merchantId, createdBy: 'test' }),
        { code: 'CATALOG_REALM_LINK_CONFLICT', statusCode: 409 },
      );
      await assert.rejects(
        linkRealm(engine.db, {
          realmId: engine.boot.realmId,
          merchantId: engine.boot.subMerchantId,
          createdBy: 'test',
        }),
        { code: 'CATALOG_REALM_LINK_CONFLICT' },
      );
      // The same link again answers the existing one; an unknown merchant is refused.
      const same = await linkRealm(engine.db, {
        realmId: engine.boot.realmId,
        merchantId: engine.boot.merchantId,
        createdBy: 'test',
      });
      assert.equal(same.createdBy, 'keel engine bootstrap');
      await assert.rejects(
        linkRealm(engine.db, {
          realmId: loose.realmId,
          merchantId: '00000000-0000-4000-8000-000000000000',
          createdBy: 't',
        }),
        { code: 'CATALOG_INVALID_FIELD' },
      );
      // The sub-merchant may be linked to its own realm; then the loose realm reaches only the sub-merchant's store.
      await linkRealm(engine.db, { realmId: loose.realmId, merchantId: engine.boot.subMerchantId, createdBy: 'test' });
      assert.equal((await realmLink(engine.db, loose.realmId))?.merchantId, engine.boot.subMerchantId);
      await assert.rejects(
        tools.callTool(
          ...stepCall(loose.realmId, {
            tool: 'cart_create',
            effect: 'write',
            arguments: { storeId: engine.boot.storeIds[0]! },
          }),
        ),
        { code: 'CATALOG_STORE_FORBIDDEN' },
      );
      const cart = await tools.callTool(
        ...stepCall(loose.realmId, {
          tool: 'cart_create',
          effect: 'write',
          arguments: { storeId: engine.boot.subMerchantStoreId },
        }),
      );
      assert.ok((cart.output as { cart: { id: string } }).cart.id);
      assert.equal(await unlinkRealm(engine.db, loose.realmId), true);
      await assert.rejects(tools.callTool(scope, call), { code: 'CATALOG_NOT_LINKED' });
    });
  });
}
