import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { waitUntil } from '@keel/core/testing';
import { createExecutionWorker, type ExecutionWorker } from '../src/executions/execution-worker.ts';
import type { CatalogProduct, ProductQuery } from '../src/flows/flow-continuation.ts';
import type { ProductCatalog } from '../src/runtime/extensions.ts';
import { BASE_CONFIG, publishedFlow } from './execution-helper.ts';
import {
  type RuntimeUnderTest,
  setupAgent,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

const CHAT = '/api/v1/runtime/ai/chat';
const EXECUTE = '/api/v1/runtime/execute';
const ACTIONS = [
  'RESPOND',
  'RENDER_PRODUCTS',
  'CHECKOUT_HANDOFF',
  'OPEN_WIDGET',
  'DATA_RESULT',
  'OFFER_PRODUCT_ALTERNATIVES',
  'RENDER_PRODUCT_ALTERNATIVES',
];

const SHOES: CatalogProduct[] = [
  { catalogId: 'shoe-runner', name: 'Trail Runner', color: 'blue', size: 42, price: '89.00' },
  { catalogId: 'shoe-court', name: 'Court Classic', color: 'white', size: 42, price: '69.00' },
  { catalogId: 'shoe-boot', name: 'Winter Boot', color: 'red', size: 40, price: '129.00' },
];

/** An in-test catalog port: products whose name or color holds every query word and that match every filter. */
function testCatalog(searches: ProductQuery[]): ProductCatalog {
  return {
    async search(_realm, query, limit) {
      searches.push(query);
      const words = query.text.toLowerCase().split(/\s+/).filter(Boolean);
      return SHOES.filter(
        (product) =>
          words.every((word) => `${product.name} ${product.color} shoes`.toLowerCase().includes(word)) &&
          Object.entries(query.filters).every(([key, value]) => product[key] === value),
      ).slice(0, limit);
    },
    async details(_realm, catalogId) {
      const product = SHOES.find((p) => p.catalogId === catalogId);
      return product ? { ...product, description: `All about ${product.name}` } : undefined;
    },
  };
}

/** An output node answering RENDER_PRODUCTS: every shoe when the message says "all", none otherwise. */
function productNodes() {
  return [
    { id: 'start', type: 'input', next: 'answer' },
    {
      id: 'answer',
      type: 'output',
      action: 'RENDER_PRODUCTS',
      content: 'Here is what I found.',
      data: {
        object: {
          products: { if: [{ in: ['all', { var: 'input.message' }] }, { literal: SHOES }, { literal: [] }] },
          query: { literal: { text: 'red shoes', filters: { color: 'red', size: 42 }, relax: ['size', 'color'] } },
        },
      },
    },
  ];
}

const config = (routing: Record<string, unknown>, unavailable = 'offer_first') => ({
  permissions: { allowed_actions: ACTIONS },
  routing: { enabled: true, ...routing },
  behavior: { unavailable_result: unavailable },
});

for (const target of testDatabaseTargets()) {
  describe(`chat and execute through flows (${target.dialect})`, () => {
    const shared = sharedRuntime(target);
    const searches: ProductQuery[] = [];
    let worker: ExecutionWorker | undefined;
    after(async () => {
      await worker?.stop();
    });

    async function setup(t: Parameters<typeof startUpstream>[0]) {
      const engine = await shared.fresh();
      engine.runtime.extensions.products = testCatalog(searches);
      if (!worker) {
        worker = createExecutionWorker(engine.runtime, { concurrency: 4, leaseMs: 3000, pollMs: 50 });
        engine.runtime.extensions.executions = worker;
        worker.start();
      }
      const upstream = await startUpstream(t);
      const { agentId } = await setupAgent(engine, engine.a, upstream.url);
      return { engine, agentId, token: engine.a.token };
    }

    async function shoeFlow(engine: RuntimeUnderTest, name: string, unavailable = 'offer_first') {
      return publishedFlow(engine, engine.a.token, name, productNodes(), {
        config: config({ when_to_use: 'shoes sneakers boots footwear', capabilities: ['shoes'] }, unavailable),
        input: { message: 'all shoes' },
      });
    }

    async function session(engine: RuntimeUnderTest, agentId: string) {
      const created = await engine.call('POST', '/api/v1/runtime/sessions', {
        token: engine.a.token,
        body: { agent_id: agentId },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return created.body as { session_id: string; resume_token: string };
    }

    const say = (engine: RuntimeUnderTest, body: Record<string, unknown>, message: string) =>
      engine.call('POST', CHAT, {
        token: engine.a.token,
        body: { ...body, messages: [{ role: 'user', content: message }] },
      });

    test('automatic intent routing with diagnostics, session pinning and reset', async (t) => {
      const { engine, agentId } = await setup(t);
      const shoes = await shoeFlow(engine, 'Shoe finder');
      const returns = await publishedFlow(
        engine,
        engine.a.token,
        'Returns desk',
        [{ id: 'done', type: 'output', action: 'RESPOND', content: 'Returns are free within 30 days.' }],
        { config: config({ when_to_use: 'return refund parcel exchange' }) },
      );
      const s = await session(engine, agentId);
      const chat = { agent_id: agentId, session_id: s.session_id, resume_token: s.resume_token };

      const first = await say(engine, chat, 'show me all the shoes');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.flow_id, shoes.id);
      assert.equal(first.body.routing.flow_source, 'routed');
      const diagnostics = first.body.routing.flow_routing;
      assert.equal(diagnostics.strategy, 'intent');
      assert.equal(diagnostics.chosen.flow_id, shoes.id);
      assert.match(diagnostics.why, /highest eligible score/);
      assert.deepEqual(
        diagnostics.candidates.map((c: { flow_id: string }) => c.flow_id).sort(),
        [shoes.id, returns.id].sort(),
      );
      const shoeScore = diagnostics.candidates.find((c: { flow_id: string }) => c.flow_id === shoes.id);
      assert.ok(shoeScore.score > 0 && shoeScore.eligible);
      assert.match(first.body.routing.flow_execution_id, /^[0-9a-f-]{36}$/);
      assert.equal(first.body.routing.flow_execution_state, 'succeeded');
      assert.equal(first.body.action.type, 'RENDER_PRODUCTS');

      // Pinned: a message that would route elsewhere stays on the session's flow.
      const pinned = await say(engine, chat, 'I want a refund for my parcel');
      assert.equal(pinned.body.flow_id, shoes.id);
      assert.equal(pinned.body.routing.flow_source, 'session');
      assert.match(pinned.body.routing.flow_routing.why, /pinned/);

      const reset = await engine.call('POST', `/api/v1/runtime/sessions/${s.session_id}/reset`, {
        token: engine.a.token,
        headers: { 'x-resume-token': s.resume_token },
      });
      assert.equal(reset.status, 200, JSON.stringify(reset.body));
      const rerouted = await say(engine, chat, 'I want a refund for my parcel');
      assert.equal(rerouted.body.flow_id, returns.id);
      assert.equal(rerouted.body.routing.flow_source, 'routed');
      assert.equal(rerouted.body.content, 'Returns are free within 30 days.');

      // flow_id bypasses classification; an inactive flow is a 409, another realm's flow a 404.
      const explicit = await say(engine, { agent_id: agentId }, 'I want a refund for my parcel');
      assert.equal(explicit.body.flow_id, returns.id);
      const bypass = await engine.call('POST', CHAT, {
        token: engine.a.token,
        body: { agent_id: agentId, flow_id: shoes.id, messages: [{ role: 'user', content: 'refund please' }] },
      });
      assert.equal(bypass.body.flow_id, shoes.id);
      assert.equal(bypass.body.routing.flow_routing.strategy, 'explicit');
      const draft = await engine.call('POST', '/api/v1/runtime/flows', {
        token: engine.a.token,
        body: { name: 'Draft only', config: { ...BASE_CONFIG, ...config({}), nodes: productNodes() } },
      });
      assert.equal(draft.status, 201, JSON.stringify(draft.body));
      const inactive = await engine.call('POST', CHAT, {
        token: engine.a.token,
        body: { agent_id: agentId, flow_id: draft.body.id, messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(inactive.status, 409);
      assert.equal(inactive.body.error.code, 'FLOW_NOT_ACTIVE');
      const foreign = await engine.call('POST', CHAT, {
        token: engine.b.token,
        body: { agent_id: agentId, flow_id: shoes.id, messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(foreign.status, 404);
    });

    test('offer_first: OFFER_PRODUCT_ALTERNATIVES, then an accepted continuation runs the bounded broader query', async (t) => {
      const { engine, agentId } = await setup(t);
      await shoeFlow(engine, 'Offer shoes');
      const s = await session(engine, agentId);
      const chat = { agent_id: agentId, session_id: s.session_id, resume_token: s.resume_token };

      const offer = await say(engine, chat, 'red shoes in size 42');
      assert.equal(offer.status, 200, JSON.stringify(offer.body));
      assert.equal(offer.body.action.type, 'OFFER_PRODUCT_ALTERNATIVES');
      const requested = { text: 'red shoes', filters: { color: 'red', size: 42 }, relax: ['size', 'color'] };
      assert.deepEqual(offer.body.data.requested_query, requested);
      assert.equal(offer.body.routing.unavailable_result, 'offer_first');

      const before = searches.length;
      const accepted = await say(engine, chat, 'yes please, show me alternatives');
      assert.equal(accepted.body.action.type, 'RENDER_PRODUCT_ALTERNATIVES');
      assert.equal(accepted.body.routing.flow_routing.strategy, 'continuation');
      const data = accepted.body.data;
      assert.deepEqual(data.requested_query, requested);
      // size dropped first (no red shoe in 42), then color: the first relaxation that finds products wins.
      assert.deepEqual(data.applied_query, { text: 'red shoes', filters: { color: 'red' } });
      assert.deepEqual(data.relaxed_constraints, ['size']);
      assert.deepEqual(
        data.products.map((p: CatalogProduct) => p.catalogId),
        ['shoe-boot'],
      );
      assert.ok(searches.length - before <= 4, 'the broader query is bounded');

      // The offer is consumed: another "yes" is an ordinary turn of the pinned flow.
      const again = await say(engine, chat, 'yes');
      assert.notEqual(again.body.action.type, 'RENDER_PRODUCT_ALTERNATIVES');

      assert.equal(again.body.action.type, 'OFFER_PRODUCT_ALTERNATIVES');
      // A declined offer is dropped: the turn goes to the pinned flow like any other.
      const declined = await say(engine, chat, 'no thanks');
      assert.equal(declined.body.routing.flow_routing.why, 'the flow pinned to the session');
      assert.equal(declined.body.routing.flow_execution_state, 'succeeded');

      // Client downgrades: OFFER → RESPOND, RENDER_PRODUCT_ALTERNATIVES → DATA_RESULT with metadata.original_type.
      const limited = { ...chat, client_capabilities: { actions: ['RESPOND', 'DATA_RESULT'] } };
      const downgradedOffer = await say(engine, limited, 'red shoes again');
      assert.equal(downgradedOffer.body.action.type, 'RESPOND');
      assert.equal(downgradedOffer.body.action.metadata.original_type, 'OFFER_PRODUCT_ALTERNATIVES');
      assert.equal(downgradedOffer.body.routing.downgraded_from, 'OFFER_PRODUCT_ALTERNATIVES');
      const downgradedAlternatives = await say(engine, limited, 'sure');
      assert.equal(downgradedAlternatives.body.action.type, 'DATA_RESULT');
      assert.equal(downgradedAlternatives.body.action.metadata.original_type, 'RENDER_PRODUCT_ALTERNATIVES');
      assert.deepEqual(downgradedAlternatives.body.data.relaxed_constraints, ['size']);
    });

    test('show_immediately and disabled', async (t) => {
      const { engine, agentId } = await setup(t);
      const now = await shoeFlow(engine, 'Immediate shoes', 'show_immediately');
      const off = await shoeFlow(engine, 'Disabled shoes', 'disabled');
      const shown = await engine.call('POST', CHAT, {
        token: engine.a.token,
        body: { agent_id: agentId, flow_id: now.id, messages: [{ role: 'user', content: 'red shoes 42' }] },
      });
      assert.equal(shown.body.action.type, 'RENDER_PRODUCT_ALTERNATIVES');
      assert.deepEqual(shown.body.data.relaxed_constraints, ['size']);
      assert.equal(shown.body.routing.unavailable_result, 'show_immediately');
      const disabled = await engine.call('POST', CHAT, {
        token: engine.a.token,
        body: { agent_id: agentId, flow_id: off.id, messages: [{ role: 'user', content: 'red shoes 42' }] },
      });
      assert.equal(disabled.body.action.type, 'RENDER_PRODUCTS');
      assert.deepEqual(disabled.body.data.products, []);
      assert.equal(disabled.body.routing.unavailable_result, 'disabled');
    });

    test('product details by recent ordinal, full name or catalog id; missing or ambiguous → CLARIFY', async (t) => {
      const { engine, agentId } = await setup(t);
      await shoeFlow(engine, 'Detail shoes');
      const s = await session(engine, agentId);
      const chat = { agent_id: agentId, session_id: s.session_id, resume_token: s.resume_token };
      const listed = await say(engine, chat, 'show me all shoes');
      assert.equal(listed.body.data.products.length, 3);

      const second = await say(engine, chat, 'tell me more about the second one');
      assert.equal(second.body.action.type, 'RENDER_PRODUCT_DETAILS');
      assert.equal(second.body.data.product.catalogId, 'shoe-court');
      assert.equal(second.body.data.product.description, 'All about Court Classic');
      assert.equal(second.body.routing.product_reference, 'ordinal');
      const byName = await say(engine, chat, 'What about the Winter Boot?');
      assert.equal(byName.body.data.product.catalogId, 'shoe-boot');
      assert.equal(byName.body.routing.product_reference, 'name');
      const byId = await say(engine, chat, 'details for shoe-runner');
      assert.equal(byId.body.data.product.catalogId, 'shoe-runner');
      assert.equal(byId.body.routing.product_reference, 'catalog_id');

      const missing = await say(engine, chat, 'more details please');
      assert.equal(missing.body.action.type, 'CLARIFY');
      assert.deepEqual(missing.body.data.options, ['Trail Runner', 'Court Classic', 'Winter Boot']);
      const beyond = await say(engine, chat, 'the fifth one');
      assert.equal(beyond.body.action.type, 'CLARIFY');
      const ambiguous = await say(engine, chat, 'compare the first and the second');
      assert.equal(ambiguous.body.action.type, 'CLARIFY');
      assert.deepEqual(ambiguous.body.data.options, ['Trail Runner', 'Court Classic']);

      const downgraded = await say(engine, { ...chat, client_capabilities: { actions: ['RESPOND'] } }, 'the first one');
      assert.equal(downgraded.body.action.type, 'DATA_RESULT');
      assert.equal(downgraded.body.action.metadata.original_type, 'RENDER_PRODUCT_DETAILS');

      // An explicit flow_id is not a continuation; reset forgets the products.
      const reset = await engine.call('POST', `/api/v1/runtime/sessions/${s.session_id}/reset`, {
        token: engine.a.token,
        headers: { 'x-resume-token': s.resume_token },
      });
      assert.equal(reset.status, 200);
      const forgotten = await say(engine, chat, 'the first one');
      assert.notEqual(forgotten.body.action.type, 'RENDER_PRODUCT_DETAILS');
    });

    test('CHECKOUT_HANDOFF and OPEN_WIDGET carry only opaque references', async (t) => {
      const { engine, agentId } = await setup(t);
      const handoff = await publishedFlow(
        engine,
        engine.a.token,
        'Checkout',
        [
          {
            id: 'pick',
            type: 'condition',
            when: { in: ['widget', { var: 'input.message' }] },
            on_true: 'widget',
            on_false: 'checkout',
          },
          {
            id: 'checkout',
            type: 'output',
            action: 'CHECKOUT_HANDOFF',
            content: 'Opening checkout',
            data: {
              literal: { checkout_id: 'chk_123', email: 'eve@example.com', shipping_address: { line1: 'Main St 1' } },
            },
          },
          {
            id: 'widget',
            type: 'output',
            action: 'OPEN_WIDGET',
            content: 'Opening the size guide',
            data: {
              literal: { surface: 'size_guide', reference: 'w_1', phone: '+15551234567', email: 'eve@example.com' },
            },
          },
        ],
        { config: config({ when_to_use: 'checkout pay' }), input: { message: 'checkout' } },
      );
      const run = (message: string) =>
        engine.call('POST', EXECUTE, {
          token: engine.a.token,
          body: { agent_id: agentId, flow_id: handoff.id, input: { message } },
        });
      const checkout = await run('checkout now');
      assert.equal(checkout.body.action.type, 'CHECKOUT_HANDOFF');
      assert.deepEqual(checkout.body.data, { checkout_id: 'chk_123' });
      const widget = await run('open the widget');
      assert.equal(widget.body.action.type, 'OPEN_WIDGET');
      assert.deepEqual(widget.body.data, { surface: 'size_guide', reference: 'w_1' });
      assert.doesNotMatch(JSON.stringify([checkout.body, widget.body]), /eve@example|Main St|\+1555/);
    });

    test('mode async queues a durable execution (idempotent by key); without a flow it is a 400', async (t) => {
      const { engine, agentId } = await setup(t);
      const flow = await shoeFlow(engine, 'Async shoes');
      const body = {
        agent_id: agentId,
        flow_id: flow.id,
        mode: 'async',
        input: { message: 'all shoes' },
        idempotency_key: 'async-1',
      };
      const queued = await engine.call('POST', EXECUTE, { token: engine.a.token, body });
      assert.equal(queued.status, 202, JSON.stringify(queued.body));
      assert.equal(queued.body.status, 'queued');
      assert.equal(queued.body.state, 'queued');
      assert.equal(queued.body.flow_id, flow.id);
      assert.equal(queued.body.flow_version, 1);
      assert.equal(queued.body.routing.flow_source, 'explicit');
      const replay = await engine.call('POST', EXECUTE, { token: engine.a.token, body });
      assert.equal(replay.status, 202);
      assert.equal(replay.body.execution_id, queued.body.execution_id);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      const conflict = await engine.call('POST', EXECUTE, {
        token: engine.a.token,
        body: { ...body, input: { message: 'other' } },
      });
      assert.equal(conflict.status, 409);
      let state = '';
      await waitUntil(async () => {
        const view = await engine.call('GET', `/api/v1/runtime/executions/${queued.body.execution_id}`, {
          token: engine.a.token,
        });
        state = view.body.state;
        return state === 'succeeded';
      }, 10_000).catch(() => assert.fail(`execution stayed ${state}`));
      const actions = await engine.call('GET', `/api/v1/runtime/executions/${queued.body.execution_id}/actions`, {
        token: engine.a.token,
      });
      assert.equal(actions.body.data.at(-1).action.type, 'RENDER_PRODUCTS');

      // Routed async: the routing picks the flow; nothing routable is a 400.
      const routed = await engine.call('POST', EXECUTE, {
        token: engine.a.token,
        body: { agent_id: agentId, mode: 'async', input: { message: 'boots' } },
      });
      assert.equal(routed.status, 202);
      assert.equal(routed.body.routing.flow_source, 'routed');
      const none = await engine.call('POST', EXECUTE, {
        token: engine.a.token,
        body: { agent_id: agentId, mode: 'async', input: { message: 'weather tomorrow' } },
      });
      assert.equal(none.status, 400);
      assert.equal(none.body.error.code, 'RUNTIME_MODE_UNSUPPORTED');
    });

    test('an approval step answers APPROVAL_REQUIRED and continues as its durable execution', async (t) => {
      const { engine, agentId } = await setup(t);
      const flow = await publishedFlow(
        engine,
        engine.a.token,
        'Big order',
        [
          { id: 'ask', type: 'approval', message: 'Approve the order?', next: 'done' },
          { id: 'done', type: 'output', action: 'RESPOND', content: 'Ordered.' },
        ],
        { config: config({ when_to_use: 'order' }) },
      );
      const answer = await engine.call('POST', CHAT, {
        token: engine.a.token,
        body: { agent_id: agentId, flow_id: flow.id, messages: [{ role: 'user', content: 'order it' }] },
      });
      assert.equal(answer.body.action.type, 'APPROVAL_REQUIRED');
      assert.equal(answer.body.routing.flow_execution_state, 'waiting_for_approval');
      const id = answer.body.routing.flow_execution_id;
      const approvalId = answer.body.data.approval_id;
      const approved = await engine.call('POST', `/api/v1/runtime/executions/${id}/approvals/${approvalId}/approve`, {
        token: engine.a.token,
        body: {},
      });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      await waitUntil(
        async () =>
          (await engine.call('GET', `/api/v1/runtime/executions/${id}`, { token: engine.a.token })).body.state ===
          'succeeded',
        10_000,
      );
    });
  });
}
