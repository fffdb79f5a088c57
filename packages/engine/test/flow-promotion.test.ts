import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { activeFlow, FLOWS, passTest, routedConfig, viewerToken } from './flow-routing-helper.ts';
import { sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`flows: promotion through development → qa → uat → production (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('each stage takes the version of the stage before; every move is recorded; out of order is a 409', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const flow = await activeFlow(engine, engine.a, 'Promoted');
      const promote = (body: Record<string, unknown>, headers?: Record<string, string>) =>
        engine.call('POST', `${FLOWS}/${flow.id}/promote`, { token, body, ...(headers ? { headers } : {}) });

      const early = await promote({ environment: 'qa' });
      assert.equal(early.status, 409, 'qa before development');
      assert.equal(early.body.error.code, 'FLOW_PROMOTION_OUT_OF_ORDER');
      const skip = await promote({ environment: 'production' });
      assert.equal(skip.status, 409);
      assert.equal(skip.body.error.code, 'FLOW_PROMOTION_OUT_OF_ORDER');

      const dev = await promote({ environment: 'development', note: 'first cut' });
      assert.equal(dev.status, 200, JSON.stringify(dev.body));
      assert.equal(dev.body.promotion.environment, 'development');
      assert.equal(dev.body.promotion.from_environment, null);
      assert.equal(dev.body.promotion.version, 1, 'default: the active version');
      assert.equal(dev.body.promotion.note, 'first cut');
      assert.equal(dev.body.promotion.promoted_by, engine.a.identityId);
      assert.equal(dev.body.bindings.development.version, 1);
      assert.equal(dev.body.bindings.qa, null);

      const same = await promote({ environment: 'development' });
      assert.equal(same.status, 200);
      assert.equal(same.body.promotion, null, 'already bound: nothing recorded');

      const qa = await promote({ environment: 'qa' });
      assert.equal(qa.status, 200);
      assert.equal(qa.body.promotion.from_environment, 'development');
      const uat = await promote({ environment: 'uat', version: 1 });
      assert.equal(uat.status, 200);
      const prod = await promote({ environment: 'production' });
      assert.equal(prod.status, 200);
      assert.deepEqual(
        Object.fromEntries(
          Object.entries(prod.body.bindings).map(([env, b]) => [env, (b as { version: number }).version]),
        ),
        { development: 1, qa: 1, uat: 1, production: 1 },
      );

      // Version 2: a draft cannot be bound; once published it goes through every stage again.
      const updated = await engine.call('PUT', `${FLOWS}/${flow.id}`, {
        token,
        body: { name: 'Promoted', config: routedConfig({ when_to_use: 'The shopper names a product' }) },
      });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.version, 2);
      const draft = await promote({ environment: 'development', version: 2 });
      assert.equal(draft.status, 409);
      assert.equal(draft.body.error.code, 'FLOW_NOT_PUBLISHED');
      const unknownVersion = await promote({ environment: 'development', version: 9 });
      assert.equal(unknownVersion.status, 404);
      await passTest(engine, engine.a, flow.id);
      assert.equal((await engine.call('POST', `${FLOWS}/${flow.id}/publish`, { token, body: {} })).status, 200);
      const dev2 = await promote({ environment: 'development', version: 2 });
      assert.equal(dev2.status, 200);
      assert.equal(dev2.body.promotion.replaced_version, 1);
      const wrong = await promote({ environment: 'qa', version: 1 });
      assert.equal(wrong.status, 409, 'qa can only take what development has');
      assert.equal(wrong.body.error.code, 'FLOW_PROMOTION_OUT_OF_ORDER');
      const prodEarly = await promote({ environment: 'production' });
      assert.equal(prodEarly.status, 200, 'production re-takes what uat has: still 1');
      assert.equal(prodEarly.body.promotion, null);
      const qa2 = await promote({ environment: 'qa' });
      assert.equal(qa2.body.promotion.version, 2);
      assert.equal(qa2.body.bindings.production.version, 1, 'later stages keep their version');

      const record = await engine.call('GET', `${FLOWS}/${flow.id}/promotions?limit=3`, { token });
      assert.equal(record.status, 200);
      assert.equal(record.body.data.length, 3);
      assert.ok(record.body.next_cursor);
      const rest = await engine.call('GET', `${FLOWS}/${flow.id}/promotions?cursor=${record.body.next_cursor}`, {
        token,
      });
      assert.equal(rest.status, 200);
      assert.equal(rest.body.next_cursor, null);
      const all = [...record.body.data, ...rest.body.data];
      assert.equal(all.length, 6, 'six moves: dev, qa, uat, prod, dev@2, qa@2');
      assert.deepEqual(
        all.map((p: { environment: string; version: number }) => `${p.environment}@${p.version}`).sort(),
        ['development@1', 'development@2', 'production@1', 'qa@1', 'qa@2', 'uat@1'],
      );
      assert.equal(rest.body.bindings.qa.version, 2);
      const badCursor = await engine.call('GET', `${FLOWS}/${flow.id}/promotions?cursor=nonsense`, { token });
      assert.equal(badCursor.status, 400);

      const badEnv = await promote({ environment: 'staging' });
      assert.equal(badEnv.status, 400);

      const archived = await engine.call('POST', `${FLOWS}/${flow.id}/archive`, { token });
      assert.equal(archived.status, 200);
      const afterArchive = await promote({ environment: 'uat' });
      assert.equal(afterArchive.status, 409);
      assert.equal(afterArchive.body.error.code, 'FLOW_ARCHIVED');
    });

    test('a never-published flow cannot be promoted; Idempotency-Key replays the first answer', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const created = await engine.call('POST', FLOWS, { token, body: { name: 'Draft only', config: routedConfig() } });
      const none = await engine.call('POST', `${FLOWS}/${created.body.id}/promote`, {
        token,
        body: { environment: 'development' },
      });
      assert.equal(none.status, 409);
      assert.equal(none.body.error.code, 'FLOW_NOT_PUBLISHED');

      const flow = await activeFlow(engine, engine.a, 'Keyed');
      const headers = { 'idempotency-key': 'promote-keyed-1' };
      const url = `${FLOWS}/${flow.id}/promote`;
      const first = await engine.call('POST', url, { token, body: { environment: 'development' }, headers });
      assert.equal(first.status, 200);
      const replay = await engine.call('POST', url, { token, body: { environment: 'development' }, headers });
      assert.equal(replay.status, 200);
      assert.deepEqual(replay.body, first.body, 'the replay answers the recorded promotion');
      const conflict = await engine.call('POST', url, { token, body: { environment: 'qa' }, headers });
      assert.equal(conflict.status, 409, JSON.stringify(conflict.body));
      assert.equal(conflict.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
      const record = await engine.call('GET', `${FLOWS}/${flow.id}/promotions`, { token });
      assert.equal(record.body.data.length, 1, 'one promotion recorded');
    });

    test("another realm's flow is a 404 like an unknown one; viewers read the record, only developers promote", async () => {
      const engine = await shared.fresh();
      const flow = await activeFlow(engine, engine.a, 'Private promotion');
      const unknown = '01900000-0000-7000-8000-000000000000';
      for (const [method, suffix, body] of [
        ['POST', '/promote', { environment: 'development' }],
        ['GET', '/promotions', undefined],
      ] as const) {
        const foreign = await engine.call(method, `${FLOWS}/${flow.id}${suffix}`, { token: engine.b.token, body });
        const missing = await engine.call(method, `${FLOWS}/${unknown}${suffix}`, { token: engine.b.token, body });
        assert.equal(foreign.status, 404, `${method} ${suffix}`);
        assert.equal(missing.status, 404);
        assert.equal(
          foreign.body.error.message.replace(flow.id, 'ID'),
          missing.body.error.message.replace(unknown, 'ID'),
        );
      }
      const viewer = await viewerToken(engine, engine.a, 'promotion-viewer');
      const denied = await engine.call('POST', `${FLOWS}/${flow.id}/promote`, {
        token: viewer,
        body: { environment: 'development' },
      });
      assert.equal(denied.status, 403);
      const read = await engine.call('GET', `${FLOWS}/${flow.id}/promotions`, { token: viewer });
      assert.equal(read.status, 200);
      assert.equal(read.body.data.length, 0, "realm B's attempt recorded nothing");
      assert.equal(read.body.bindings.development, null);
    });
  });
}
