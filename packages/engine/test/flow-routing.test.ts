import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canaryBucket, inCanary, routeMessage } from '../src/flows/flow-router.ts';
import { activeFlow, FLOWS, passTest, routedConfig, viewerToken } from './flow-routing-helper.ts';
import { type RuntimeUnderTest, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

const PROFILES = '/api/v1/runtime/flow-routing-profiles';
const POLICY = '/api/v1/runtime/flow-routing-policy';
const PREVIEW = '/api/v1/runtime/flow-routing-preview';
const EVALUATIONS = '/api/v1/governance/flow-routing-evaluations';
const UNKNOWN = '01900000-0000-7000-8000-000000000000';

test('canary assignment: 10% of 10,000 subjects lands within a tight band, and a subject always lands the same way', () => {
  const realm = '0196a1b2-0000-7000-8000-00000000000a';
  for (const percentage of [10, 25, 0.5]) {
    let hits = 0;
    for (let i = 0; i < 10_000; i++) if (inCanary(canaryBucket(realm, `subject-${i}`), percentage)) hits++;
    const share = hits / 100;
    assert.ok(Math.abs(share - percentage) <= Math.max(0.7, percentage * 0.07), `${percentage}% → ${share}%`);
  }
  assert.equal(canaryBucket(realm, 'subject-7'), canaryBucket(realm, 'subject-7'));
  assert.notEqual(canaryBucket(realm, 'subject-7'), canaryBucket('another-realm', 'subject-7'), 'keyed by realm too');
  let zero = 0;
  let all = 0;
  for (let i = 0; i < 1000; i++) {
    if (inCanary(canaryBucket(realm, `s${i}`), 0)) zero++;
    if (inCanary(canaryBucket(realm, `s${i}`), 100)) all++;
  }
  assert.equal(zero, 0);
  assert.equal(all, 1000);
});

test('routing a message is pure: the best eligible score wins, when_not_to_use excludes, explicit and fallback', () => {
  const candidates = [
    {
      flowId: 'a',
      name: 'Products',
      activeVersion: 1,
      canaryVersion: 2,
      source: 'manifest' as const,
      manifest: { when_to_use: 'find products like mugs and kettles', when_not_to_use: 'refund' },
    },
    {
      flowId: 'b',
      name: 'Orders',
      activeVersion: 3,
      canaryVersion: null,
      source: 'manifest' as const,
      manifest: { when_to_use: 'order status delivery tracking refund' },
    },
  ];
  const policy = {
    mode: 'automatic' as const,
    compatibility_fallback: true,
    fallback_flow_id: 'b',
    canary_percentage: 0,
  };
  const mugs = routeMessage('r', policy, candidates, { message: 'Find me mugs' });
  assert.equal(mugs.chosen?.flow_id, 'a');
  assert.equal(mugs.strategy, 'intent');
  assert.deepEqual(mugs.candidates[0]!.matched, ['find', 'mug']);
  const refund = routeMessage('r', policy, candidates, { message: 'refund my mugs' });
  assert.equal(refund.candidates[0]!.eligible, false);
  assert.match(refund.candidates[0]!.reason, /when_not_to_use/);
  assert.equal(refund.chosen?.flow_id, 'b');
  const nothing = routeMessage('r', policy, candidates, { message: 'hello there' });
  assert.equal(nothing.strategy, 'fallback');
  assert.equal(nothing.chosen?.flow_id, 'b');
  const off = routeMessage('r', { ...policy, compatibility_fallback: false }, candidates, { message: 'hello there' });
  assert.equal(off.chosen, null);
  assert.match(off.why, /compatibility fallback is off/);
  const named = routeMessage('r', { ...policy, mode: 'explicit' }, candidates, { message: 'mugs', flowId: 'b' });
  assert.equal(named.strategy, 'explicit');
  assert.equal(named.chosen?.flow_id, 'b');
  const canary = routeMessage('r', { ...policy, canary_percentage: 100 }, candidates, {
    message: 'find mugs',
    canaryKey: 'x',
  });
  assert.deepEqual(canary.chosen, { flow_id: 'a', name: 'Products', version: 2, canary: true });
});

async function counts(engine: RuntimeUnderTest) {
  const out: Record<string, number> = {};
  for (const table of [
    'flow',
    'flow_version',
    'flow_fixture',
    'flow_binding',
    'flow_promotion',
    'flow_routing_profile',
    'flow_routing_policy',
    'flow_execution',
  ] as const) {
    const row = await engine.runtime.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  const flows = await engine.runtime.db.selectFrom('flow').select(['id', 'updated_at']).orderBy('id').execute();
  return { out, flows: JSON.stringify(flows) };
}

for (const target of testDatabaseTargets()) {
  describe(`flows: routing profiles, policy, preview and evaluations (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    async function twoFlows(engine: RuntimeUnderTest) {
      const products = await activeFlow(
        engine,
        engine.a,
        'Products',
        routedConfig({ when_to_use: 'find products like mugs, kettles and teapots', when_not_to_use: 'refund' }),
      );
      const orders = await activeFlow(
        engine,
        engine.a,
        'Orders',
        routedConfig({ when_to_use: 'order status, delivery tracking and refunds' }),
      );
      return { products, orders };
    }

    test('a routing profile overrides the manifest; list, read, replace; isolation and permissions', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const { products, orders } = await twoFlows(engine);
      const before = await engine.call('GET', `${FLOWS}/${products.id}/routing-profile`, { token });
      assert.equal(before.status, 200, JSON.stringify(before.body));
      assert.equal(before.body.source, 'manifest');
      assert.equal(before.body.profile, null);
      assert.equal(before.body.effective.when_to_use, 'find products like mugs, kettles and teapots');
      assert.equal(before.body.manifest_version, 1);

      const routedBefore = await engine.call('POST', PREVIEW, { token, body: { intent: 'track my parcel' } });
      assert.equal(routedBefore.status, 200, JSON.stringify(routedBefore.body));
      assert.equal(routedBefore.body.chosen, null, 'no flow mentions parcels yet');

      const put = await engine.call('PUT', `${FLOWS}/${orders.id}/routing-profile`, {
        token,
        body: { when_to_use: 'where is my parcel', examples: ['track my parcel'], minimum_confidence: 0.3 },
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(put.body.source, 'profile');
      assert.equal(put.body.effective.minimum_confidence, 0.3);
      assert.deepEqual(put.body.effective.capabilities, [], 'the profile replaces the manifest entirely');
      const routed = await engine.call('POST', PREVIEW, { token, body: { intent: 'track my parcel' } });
      assert.equal(routed.body.chosen.flow_id, orders.id);
      assert.equal(routed.body.candidates.find((c: { flow_id: string }) => c.flow_id === orders.id).source, 'profile');
      const refunds = await engine.call('POST', PREVIEW, { token, body: { intent: 'refund' } });
      assert.equal(refunds.body.chosen, null, 'the manifest words no longer route to the profiled flow');

      const list = await engine.call('GET', `${PROFILES}?limit=1`, { token });
      assert.equal(list.status, 200);
      assert.equal(list.body.data.length, 1);
      assert.equal(list.body.data[0].flow_id, orders.id);
      assert.equal(list.body.next_cursor, null);
      assert.equal((await engine.call('GET', PROFILES, { token: engine.b.token })).body.data.length, 0);

      const bad = await engine.call('PUT', `${FLOWS}/${orders.id}/routing-profile`, {
        token,
        body: { minimum_confidence: 2 },
      });
      assert.equal(bad.status, 400);
      const tooMany = await engine.call('PUT', `${FLOWS}/${orders.id}/routing-profile`, {
        token,
        body: { examples: Array.from({ length: 21 }, (_, i) => `e${i}`) },
      });
      assert.equal(tooMany.status, 400);

      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', { when_to_use: 'steal' }],
      ] as const) {
        const url = (id: string) => `${FLOWS}/${id}/routing-profile`;
        const foreign = await engine.call(method, url(orders.id), { token: engine.b.token, body });
        const missing = await engine.call(method, url(UNKNOWN), { token: engine.b.token, body });
        assert.equal(foreign.status, 404);
        assert.equal(missing.status, 404);
        assert.equal(
          foreign.body.error.message.replace(orders.id, 'ID'),
          missing.body.error.message.replace(UNKNOWN, 'ID'),
        );
      }
      const viewer = await viewerToken(engine, engine.a, 'routing-viewer');
      assert.equal((await engine.call('GET', `${FLOWS}/${orders.id}/routing-profile`, { token: viewer })).status, 200);
      const denied = await engine.call('PUT', `${FLOWS}/${orders.id}/routing-profile`, {
        token: viewer,
        body: { when_to_use: 'x' },
      });
      assert.equal(denied.status, 403);
      const still = await engine.call('GET', `${FLOWS}/${orders.id}/routing-profile`, { token });
      assert.equal(still.body.profile.when_to_use, 'where is my parcel', 'nothing changed by the denied calls');

      await engine.call('POST', `${FLOWS}/${orders.id}/archive`, { token });
      const archived = await engine.call('PUT', `${FLOWS}/${orders.id}/routing-profile`, { token, body: {} });
      assert.equal(archived.status, 409);
      assert.equal(archived.body.error.code, 'FLOW_ARCHIVED');
      const afterArchive = await engine.call('POST', PREVIEW, { token, body: { intent: 'track my parcel' } });
      assert.equal(afterArchive.body.candidates.length, 1, 'an archived flow is no candidate');
    });

    test('policy: defaults, partial changes, fallback, explicit mode; bad values are 400, foreign flows 404', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const { products, orders } = await twoFlows(engine);
      const initial = await engine.call('GET', POLICY, { token });
      assert.equal(initial.status, 200);
      assert.deepEqual(
        { ...initial.body, realm_id: undefined },
        {
          realm_id: undefined,
          mode: 'automatic',
          compatibility_fallback: true,
          fallback_flow_id: null,
          canary_percentage: 0,
          updated_at: null,
        },
      );
      const hello = await engine.call('POST', PREVIEW, {
        token,
        body: { messages: [{ role: 'user', content: 'hello there' }] },
      });
      assert.equal(hello.body.chosen, null);
      assert.match(hello.body.why, /no fallback flow is set/);

      const withFallback = await engine.call('PUT', POLICY, { token, body: { fallback_flow_id: orders.id } });
      assert.equal(withFallback.status, 200, JSON.stringify(withFallback.body));
      assert.equal(withFallback.body.fallback_flow_id, orders.id);
      assert.equal(withFallback.body.mode, 'automatic', 'fields left out keep their value');
      const fallback = await engine.call('POST', PREVIEW, { token, body: { intent: 'hello there' } });
      assert.equal(fallback.body.strategy, 'fallback');
      assert.equal(fallback.body.chosen.flow_id, orders.id);

      const explicit = await engine.call('PUT', POLICY, { token, body: { mode: 'explicit' } });
      assert.equal(explicit.body.fallback_flow_id, orders.id);
      const mugs = await engine.call('POST', PREVIEW, { token, body: { intent: 'find mugs' } });
      assert.equal(mugs.body.chosen.flow_id, orders.id, 'explicit mode does not route by intent');
      const named = await engine.call('POST', PREVIEW, { token, body: { intent: 'find mugs', flow_id: products.id } });
      assert.equal(named.body.strategy, 'explicit');
      assert.equal(named.body.chosen.flow_id, products.id);
      const noCompat = await engine.call('PUT', POLICY, { token, body: { compatibility_fallback: false } });
      assert.equal(noCompat.body.compatibility_fallback, false);
      const none = await engine.call('POST', PREVIEW, { token, body: { intent: 'find mugs' } });
      assert.equal(none.body.chosen, null);

      for (const body of [{ canary_percentage: 101 }, { canary_percentage: -1 }, { mode: 'random' }]) {
        const bad = await engine.call('PUT', POLICY, { token, body });
        assert.equal(bad.status, 400, JSON.stringify(body));
      }
      const foreignFallback = await engine.call('PUT', POLICY, {
        token: engine.b.token,
        body: { fallback_flow_id: orders.id },
      });
      const missingFallback = await engine.call('PUT', POLICY, {
        token: engine.b.token,
        body: { fallback_flow_id: UNKNOWN },
      });
      assert.equal(foreignFallback.status, 404);
      assert.equal(missingFallback.status, 404);
      assert.equal(
        foreignFallback.body.error.message.replace(orders.id, 'ID'),
        missingFallback.body.error.message.replace(UNKNOWN, 'ID'),
      );
      const otherRealm = await engine.call('PUT', POLICY, { token, body: { realm_id: engine.b.realmId } });
      assert.equal(otherRealm.status, 403);
      assert.equal((await engine.call('GET', POLICY, { token: engine.b.token })).body.updated_at, null);
      const viewer = await viewerToken(engine, engine.a, 'policy-viewer');
      assert.equal((await engine.call('PUT', POLICY, { token: viewer, body: { mode: 'automatic' } })).status, 403);
      const cleared = await engine.call('PUT', POLICY, { token, body: { fallback_flow_id: null } });
      assert.equal(cleared.body.fallback_flow_id, null);

      const empty = await engine.call('POST', PREVIEW, { token, body: {} });
      assert.equal(empty.status, 400);
      assert.match(empty.body.error.message, /intent or messages/);
      const onlyAssistant = await engine.call('POST', PREVIEW, {
        token,
        body: { messages: [{ role: 'assistant', content: 'hi' }] },
      });
      assert.equal(onlyAssistant.status, 400);
    });

    test('canary: the share of subjects routed to the newest published version is stable per subject', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const { products } = await twoFlows(engine);
      const v2 = await engine.call('PUT', `${FLOWS}/${products.id}`, {
        token,
        body: {
          name: 'Products',
          config: routedConfig({ when_to_use: 'find products like mugs, kettles, teapots and cups' }),
        },
      });
      assert.equal(v2.body.version, 2);
      await passTest(engine, engine.a, products.id);
      assert.equal((await engine.call('POST', `${FLOWS}/${products.id}/publish`, { token, body: {} })).status, 200);
      const rounded = await engine.call('PUT', POLICY, { token, body: { canary_percentage: 12.3456 } });
      assert.equal(rounded.body.canary_percentage, 12.35, 'kept to two decimals');
      const policy = await engine.call('PUT', POLICY, { token, body: { canary_percentage: 10 } });
      assert.equal(policy.body.canary_percentage, 10);

      let canary = 0;
      const subjects = 200;
      for (let i = 0; i < subjects; i++) {
        const body = { intent: 'find mugs', subject_id: `shopper-${i}` };
        const reply = await engine.call('POST', PREVIEW, { token, body });
        assert.equal(reply.status, 200);
        const expected = inCanary(canaryBucket(engine.a.realmId, `shopper-${i}`), 10);
        assert.equal(reply.body.canary.in_canary, expected);
        assert.equal(reply.body.chosen.version, expected ? 2 : 1);
        assert.equal(reply.body.chosen.canary, expected);
        if (expected) canary++;
      }
      assert.ok(canary > 5 && canary < 40, `${canary} of ${subjects}`);
      const again = await engine.call('POST', PREVIEW, { token, body: { intent: 'find mugs', session_id: 'sess-1' } });
      const twice = await engine.call('POST', PREVIEW, { token, body: { intent: 'find mugs', session_id: 'sess-1' } });
      assert.deepEqual(again.body.chosen, twice.body.chosen);
      assert.equal(again.body.canary.bucket, twice.body.canary.bucket);
      const anonymous = await engine.call('POST', PREVIEW, { token, body: { intent: 'find mugs' } });
      assert.equal(anonymous.body.canary.bucket, null, 'no session or subject: no canary');
      assert.equal(anonymous.body.chosen.version, 1);
    });

    test('evaluations: accuracy per flow and the confusion matrix, with nothing written', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const { products, orders } = await twoFlows(engine);
      const dataset = [
        { message: 'find me a teapot', expected_flow_id: products.id },
        { message: 'do you have kettles', expected_flow_id: products.id },
        { message: 'where is my order', expected_flow_id: orders.id },
        { message: 'delivery tracking please', expected_flow_id: orders.id },
        { message: 'refund for my mugs', expected_flow_id: products.id },
        { message: 'good morning', expected_flow_id: null },
        { message: 'what is the weather', expected_flow_id: orders.id },
      ];
      const before = await counts(engine);
      const result = await engine.call('POST', EVALUATIONS, { token, body: { dataset } });
      assert.equal(result.status, 200, JSON.stringify(result.body));
      assert.deepEqual(await counts(engine), before, 'an evaluation writes nothing');
      assert.equal(result.body.total, 7);
      assert.equal(result.body.correct, 5);
      assert.equal(result.body.accuracy, 0.7143);
      const [first, second] = [products.id, orders.id].sort();
      assert.deepEqual(result.body.confusion.labels, [first, second, null]);
      const at = (expected: string | null, chosen: string | null) =>
        result.body.confusion.matrix[result.body.confusion.labels.indexOf(expected)][
          result.body.confusion.labels.indexOf(chosen)
        ];
      assert.equal(at(products.id, products.id), 2);
      assert.equal(at(products.id, orders.id), 1, 'refund goes to orders');
      assert.equal(at(orders.id, orders.id), 2);
      assert.equal(at(orders.id, null), 1);
      assert.equal(at(null, null), 1);
      const productRow = result.body.per_flow.find((row: { flow_id: string }) => row.flow_id === products.id);
      assert.deepEqual(
        { ...productRow },
        {
          flow_id: products.id,
          name: 'Products',
          support: 3,
          predicted: 2,
          correct: 2,
          accuracy: 0.6667,
          precision: 1,
        },
      );
      assert.equal(result.body.misses.length, 2);
      assert.deepEqual(
        result.body.misses.map((miss: { index: number }) => miss.index),
        [4, 6],
      );
      const viewer = await viewerToken(engine, engine.a, 'evaluation-viewer');
      assert.equal((await engine.call('POST', EVALUATIONS, { token: viewer, body: { dataset } })).status, 200);
      const foreign = await engine.call('POST', EVALUATIONS, { token: engine.b.token, body: { dataset } });
      assert.equal(foreign.status, 200);
      assert.equal(foreign.body.correct, 1, "realm B has no flows: only the 'none' label is right");
      assert.deepEqual(foreign.body.confusion.labels.at(-1), null);
      assert.equal(
        foreign.body.per_flow.find((row: { flow_id: string }) => row.flow_id === products.id).name,
        null,
        "another realm's flow names never leak",
      );

      const emptyData = await engine.call('POST', EVALUATIONS, { token, body: { dataset: [] } });
      assert.equal(emptyData.status, 400);
      const tooBig = await engine.call('POST', EVALUATIONS, {
        token,
        body: { dataset: Array.from({ length: 1001 }, () => ({ message: 'x', expected_flow_id: null })) },
      });
      assert.equal(tooBig.status, 400);
      const badId = await engine.call('POST', EVALUATIONS, {
        token,
        body: { dataset: [{ message: 'x', expected_flow_id: 'nope' }] },
      });
      assert.equal(badId.status, 400);
      assert.equal((await engine.call('POST', EVALUATIONS, { token: null, body: { dataset } })).status, 401);
    });
  });
}
