import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EXAMPLE_CONFIG } from '../src/flows/flow-api-schemas.ts';
import { type Realm, type RuntimeUnderTest, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

const FLOWS = '/api/v1/runtime/flows';

/** A flow config: input → tool → output, with an input contract (field `query`, required). */
function config(extra: { outputAction?: string; required?: string[]; toolName?: string } = {}) {
  return {
    ...EXAMPLE_CONFIG,
    contract: {
      input: {
        type: 'object',
        properties: { query: { type: 'string' }, size: { type: 'string' } },
        required: extra.required ?? ['query'],
      },
    },
    nodes: [
      {
        id: 'search',
        type: 'tool',
        tool: extra.toolName ?? 'catalog_search',
        effect: 'read',
        arguments: { object: { query: { var: 'input.query' } } },
        next: 'show',
      },
      {
        id: 'show',
        type: 'output',
        action: extra.outputAction ?? 'RENDER_PRODUCTS',
        data: { object: { products: { var: 'vars.search.products' } } },
      },
    ],
  };
}

const FIXTURE = {
  name: 'finds mugs',
  input: { query: 'mug' },
  mocks: { tools: { catalog_search: { products: [{ catalogId: '1234567890', name: 'Mug' }] } } },
  expect: { state: 'succeeded', action_type: 'RENDER_PRODUCTS', tool_calls: ['catalog_search'] },
};

async function createFlow(engine: RuntimeUnderTest, realm: Realm, name: string, body: Record<string, unknown> = {}) {
  const created = await engine.call('POST', FLOWS, { token: realm.token, body: { name, config: config(), ...body } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body;
}

/** A flow with a passing fixture, tested and activated at version 1. */
async function activeFlow(engine: RuntimeUnderTest, realm: Realm, name: string) {
  const flow = await createFlow(engine, realm, name);
  const fixture = await engine.call('POST', `${FLOWS}/${flow.id}/fixtures`, { token: realm.token, body: FIXTURE });
  assert.equal(fixture.status, 201, JSON.stringify(fixture.body));
  const tested = await engine.call('POST', `${FLOWS}/${flow.id}/test`, { token: realm.token, body: {} });
  assert.equal(tested.status, 200, JSON.stringify(tested.body));
  assert.equal(tested.body.passed, true, JSON.stringify(tested.body));
  const activated = await engine.call('POST', `${FLOWS}/${flow.id}/activate`, { token: realm.token, body: {} });
  assert.equal(activated.status, 200, JSON.stringify(activated.body));
  return activated.body;
}

for (const target of testDatabaseTargets()) {
  describe(`flows: stored, versioned, tested, published (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('create, read, list; a config that does not compile is a 400 listing every problem; names are unique', async () => {
      const engine = await shared.fresh();
      const flow = await createFlow(engine, engine.a, 'Product lookup', { description: 'Finds products' });
      assert.equal(flow.version, 1);
      assert.equal(flow.status, 'draft');
      assert.equal(flow.is_active, false);
      assert.equal(flow.tool_name, null);
      assert.match(flow.config_hash, /^[0-9a-f]{64}$/);
      const read = await engine.call('GET', `${FLOWS}/${flow.id}`, { token: engine.a.token });
      assert.equal(read.status, 200);
      assert.deepEqual(read.body.config.nodes, config().nodes);

      const bad = await engine.call('POST', FLOWS, {
        token: engine.a.token,
        body: {
          name: 'Broken',
          config: {
            ...config(),
            nodes: [
              { id: 'a', type: 'tool', tool: 't', next: 'missing' },
              { id: 'b', type: 'output', action: 'ESCALATE' },
            ],
          },
        },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'FLOW_INVALID');
      const details = bad.body.error.details.map((d: { message: string }) => d.message).join('\n');
      assert.match(details, /FLOW_ACTION_NOT_ALLOWED/);
      assert.match(details, /FLOW_REFERENCE_DANGLING/);

      const unbounded = await engine.call('POST', FLOWS, {
        token: engine.a.token,
        body: {
          name: 'Cycle',
          config: {
            ...config(),
            nodes: [
              { id: 'a', type: 'transform', expression: 1, assign: 'x', next: 'b' },
              { id: 'b', type: 'condition', when: true, on_true: 'a', on_false: 'c' },
              { id: 'c', type: 'output', action: 'RESPOND' },
            ],
          },
        },
      });
      assert.equal(unbounded.status, 400);
      assert.match(JSON.stringify(unbounded.body.error.details), /FLOW_CYCLE_UNBOUNDED/);

      const duplicate = await engine.call('POST', FLOWS, {
        token: engine.a.token,
        body: { name: 'product LOOKUP', config: config() },
      });
      assert.equal(duplicate.status, 409);
      assert.equal(duplicate.body.error.code, 'RUNTIME_NAME_TAKEN');

      const activeAtOnce = await engine.call('POST', FLOWS, {
        token: engine.a.token,
        body: { name: 'Active at once', config: config(), is_active: true },
      });
      assert.equal(activeAtOnce.status, 409, 'a new flow has no tested version');
      assert.equal(activeAtOnce.body.error.code, 'FLOW_NOT_TESTED');

      const missingConfig = await engine.call('POST', FLOWS, { token: engine.a.token, body: { name: 'x' } });
      assert.equal(missingConfig.status, 400);

      await createFlow(engine, engine.a, 'Second');
      const page1 = await engine.call('GET', `${FLOWS}?limit=1`, { token: engine.a.token });
      assert.equal(page1.status, 200);
      assert.equal(page1.body.data.length, 1);
      assert.equal(page1.body.data[0].name, 'Second');
      assert.equal(page1.body.data[0].config, undefined, 'list items are summaries');
      const page2 = await engine.call('GET', `${FLOWS}?limit=1&cursor=${page1.body.next_cursor}`, {
        token: engine.a.token,
      });
      assert.equal(page2.body.data[0].name, 'Product lookup');
      assert.equal(page2.body.next_cursor, null);
      const forged = await engine.call('GET', `${FLOWS}?cursor=abc`, { token: engine.a.token });
      assert.equal(forged.status, 400);
    });

    test('Idempotency-Key on create replays the first answer; another body with the key is a conflict', async () => {
      const engine = await shared.fresh();
      const headers = { 'idempotency-key': 'create-flow-1' };
      const body = { name: 'Idem', config: config() };
      const first = await engine.call('POST', FLOWS, { token: engine.a.token, body, headers });
      assert.equal(first.status, 201);
      const again = await engine.call('POST', FLOWS, { token: engine.a.token, body, headers });
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body.id, first.body.id);
      const other = await engine.call('POST', FLOWS, {
        token: engine.a.token,
        body: { ...body, name: 'Other' },
        headers,
      });
      assert.equal(other.status, 409);
      const list = await engine.call('GET', FLOWS, { token: engine.a.token });
      assert.equal(list.body.data.length, 1, 'one flow stored');
    });

    test('every config change adds an immutable version; the same config keeps it', async () => {
      const engine = await shared.fresh();
      const flow = await createFlow(engine, engine.a, 'Versions');
      const same = await engine.call('PUT', `${FLOWS}/${flow.id}`, {
        token: engine.a.token,
        body: { name: 'Versions renamed', config: JSON.parse(JSON.stringify(config())) },
      });
      assert.equal(same.status, 200);
      assert.equal(same.body.version, 1, 'a rename is not a config change');
      assert.equal(same.body.name, 'Versions renamed');
      const changed = await engine.call('PUT', `${FLOWS}/${flow.id}`, {
        token: engine.a.token,
        body: { name: 'Versions renamed', config: config({ outputAction: 'RESPOND' }) },
      });
      assert.equal(changed.status, 200);
      assert.equal(changed.body.version, 2);
      const versions = await engine.call('GET', `${FLOWS}/${flow.id}/versions`, { token: engine.a.token });
      assert.equal(versions.status, 200);
      assert.deepEqual(
        versions.body.data.map((v: { version: number }) => v.version),
        [2, 1],
      );
      assert.equal(versions.body.data[1].config.nodes[1].action, 'RENDER_PRODUCTS', 'version 1 is unchanged');
      const paged = await engine.call('GET', `${FLOWS}/${flow.id}/versions?limit=1`, { token: engine.a.token });
      const next = await engine.call('GET', `${FLOWS}/${flow.id}/versions?limit=1&cursor=${paged.body.next_cursor}`, {
        token: engine.a.token,
      });
      assert.equal(next.body.data[0].version, 1);
      assert.equal(next.body.next_cursor, null);
      const invalid = await engine.call('PUT', `${FLOWS}/${flow.id}`, {
        token: engine.a.token,
        body: { name: 'Versions renamed', config: { ...config(), nodes: [] } },
      });
      assert.equal(invalid.status, 400);
      const after = await engine.call('GET', `${FLOWS}/${flow.id}`, { token: engine.a.token });
      assert.equal(after.body.version, 2, 'a rejected update writes nothing');
    });

    test('publish needs a passing test over every fixture; activate publishes and names the tool', async () => {
      const engine = await shared.fresh();
      const flow = await createFlow(engine, engine.a, 'Shop search');
      const untested = await engine.call('POST', `${FLOWS}/${flow.id}/publish`, { token: engine.a.token, body: {} });
      assert.equal(untested.status, 409);
      assert.equal(untested.body.error.code, 'FLOW_NOT_TESTED');
      const noFixtures = await engine.call('POST', `${FLOWS}/${flow.id}/test`, { token: engine.a.token, body: {} });
      assert.equal(noFixtures.status, 409);
      assert.equal(noFixtures.body.error.code, 'FLOW_NO_FIXTURES');

      const failing = await engine.call('POST', `${FLOWS}/${flow.id}/fixtures`, {
        token: engine.a.token,
        body: { ...FIXTURE, name: 'wrong expectation', expect: { action_type: 'RESPOND' } },
      });
      assert.equal(failing.status, 201);
      const tested = await engine.call('POST', `${FLOWS}/${flow.id}/test`, { token: engine.a.token, body: {} });
      assert.equal(tested.status, 200);
      assert.equal(tested.body.passed, false);
      assert.deepEqual(tested.body.results[0].mismatches, ['action_type: expected RESPOND, got RENDER_PRODUCTS']);
      const stillUntested = await engine.call('POST', `${FLOWS}/${flow.id}/activate`, {
        token: engine.a.token,
        body: {},
      });
      assert.equal(stillUntested.status, 409);
      assert.equal(stillUntested.body.error.code, 'FLOW_NOT_TESTED');

      // Deterministic: the same replay twice gives the same results.
      const again = await engine.call('POST', `${FLOWS}/${flow.id}/test`, { token: engine.a.token, body: {} });
      assert.deepEqual(again.body.results, tested.body.results);

      const fixedFlow = await activeFlow(engine, engine.a, 'Shop search 2');
      assert.equal(fixedFlow.is_active, true);
      assert.equal(fixedFlow.status, 'published');
      assert.equal(fixedFlow.active_version, 1);
      assert.equal(fixedFlow.tool_name, 'engine_flow_shop_search_2_v1');
      const versions = await engine.call('GET', `${FLOWS}/${fixedFlow.id}/versions`, { token: engine.a.token });
      assert.equal(versions.body.data[0].status, 'published');
      assert.equal(versions.body.data[0].test_passed, true);
    });

    test('fixtures mock every capability: a missing mock fails its node, approvals and events are replayed', async () => {
      const engine = await shared.fresh();
      const flow = await createFlow(engine, engine.a, 'Approval flow', {
        config: {
          ...config(),
          permissions: { allowed_actions: ['RESPOND', 'CHECKOUT_HANDOFF'] },
          nodes: [
            { id: 'cart', type: 'tool', tool: 'cart_create', next: 'check' },
            { id: 'check', type: 'approval', message: 'Approve the cart', next: 'done', on_deny: 'denied' },
            {
              id: 'done',
              type: 'output',
              action: 'CHECKOUT_HANDOFF',
              data: { object: { checkout_id: { var: 'vars.cart.id' } } },
            },
            { id: 'denied', type: 'output', action: 'RESPOND', content: 'Cancelled' },
          ],
        },
      });
      const post = (body: unknown) =>
        engine.call('POST', `${FLOWS}/${flow.id}/fixtures`, { token: engine.a.token, body });
      assert.equal(
        (
          await post({
            name: 'approved',
            input: { query: 'x' },
            mocks: { tools: { cart_create: { id: 'chk_1' } }, approvals: { check: true } },
            expect: { state: 'succeeded', action: { type: 'CHECKOUT_HANDOFF', data: { checkout_id: 'chk_1' } } },
          })
        ).status,
        201,
      );
      assert.equal(
        (
          await post({
            name: 'denied',
            input: { query: 'x' },
            mocks: { tools: { cart_create: { id: 'chk_1' } }, approvals: { check: false } },
            expect: { state: 'succeeded', action_type: 'RESPOND' },
          })
        ).status,
        201,
      );
      assert.equal(
        (
          await post({
            name: 'waits',
            input: { query: 'x' },
            mocks: { tools: { cart_create: { id: 'chk_1' } } },
            expect: { state: 'waiting_for_approval', action_type: 'APPROVAL_REQUIRED' },
          })
        ).status,
        201,
      );
      assert.equal(
        (
          await post({
            name: 'no mock',
            input: { query: 'x' },
            expect: { state: 'terminal_failure' },
          })
        ).status,
        201,
      );
      const duplicateName = await post({ name: 'waits', expect: { state: 'queued' } });
      assert.equal(duplicateName.status, 409);
      const noExpectation = await post({ name: 'empty', expect: {} });
      assert.equal(noExpectation.status, 400);
      const tested = await engine.call('POST', `${FLOWS}/${flow.id}/test`, { token: engine.a.token, body: {} });
      assert.equal(tested.status, 200);
      assert.equal(tested.body.passed, true, JSON.stringify(tested.body.results));
      assert.equal(tested.body.results.length, 4);
      const noMock = tested.body.results.find((r: { name: string }) => r.name === 'no mock');
      assert.equal(noMock.action.data.code, 'MOCK_MISSING');

      const fixtures = await engine.call('GET', `${FLOWS}/${flow.id}/fixtures?limit=2`, { token: engine.a.token });
      assert.equal(fixtures.body.data.length, 2);
      assert.equal(fixtures.body.data[0].name, 'approved');
      const only = await engine.call('POST', `${FLOWS}/${flow.id}/test`, {
        token: engine.a.token,
        body: { fixture_ids: [fixtures.body.data[1].id] },
      });
      assert.equal(only.body.recorded, false);
      assert.equal(only.body.results.length, 1);
    });

    test('publish rejects an incompatible contract change; rollback reactivates the prior version', async () => {
      const engine = await shared.fresh();
      const clean = await createFlow(engine, engine.a, 'Clean');
      const fixture = { ...FIXTURE, expect: { state: 'succeeded' } };
      await engine.call('POST', `${FLOWS}/${clean.id}/fixtures`, { token: engine.a.token, body: fixture });
      await engine.call('POST', `${FLOWS}/${clean.id}/test`, { token: engine.a.token, body: {} });
      assert.equal(
        (await engine.call('POST', `${FLOWS}/${clean.id}/activate`, { token: engine.a.token, body: {} })).status,
        200,
      );
      const breaking = await engine.call('PUT', `${FLOWS}/${clean.id}`, {
        token: engine.a.token,
        body: { name: 'Clean', config: config({ required: ['query', 'size'] }) },
      });
      assert.equal(breaking.body.version, 2);
      const preview = await engine.call('POST', `${FLOWS}/${clean.id}/preview`, { token: engine.a.token, body: {} });
      assert.equal(preview.status, 200);
      assert.equal(preview.body.valid, true);
      assert.equal(preview.body.version, 2);
      assert.equal(preview.body.compatibility.compared_with, 1);
      assert.equal(preview.body.compatibility.compatible, false);
      assert.match(preview.body.compatibility.problems[0].message, /size is newly required/);
      await engine.call('POST', `${FLOWS}/${clean.id}/test`, { token: engine.a.token, body: {} });
      const rejected = await engine.call('POST', `${FLOWS}/${clean.id}/publish`, { token: engine.a.token, body: {} });
      assert.equal(rejected.status, 409);
      assert.equal(rejected.body.error.code, 'FLOW_INCOMPATIBLE');
      const compatible = await engine.call('PUT', `${FLOWS}/${clean.id}`, {
        token: engine.a.token,
        body: { name: 'Clean', config: config({ outputAction: 'RESPOND' }) },
      });
      assert.equal(compatible.body.version, 3);
      await engine.call('POST', `${FLOWS}/${clean.id}/test`, { token: engine.a.token, body: {} });
      const activated = await engine.call('POST', `${FLOWS}/${clean.id}/activate`, { token: engine.a.token, body: {} });
      assert.equal(activated.status, 200, JSON.stringify(activated.body));
      assert.equal(activated.body.active_version, 3);
      assert.equal(activated.body.tool_name, 'engine_flow_clean_v3');
      const rolled = await engine.call('POST', `${FLOWS}/${clean.id}/rollback`, { token: engine.a.token, body: {} });
      assert.equal(rolled.status, 200);
      assert.equal(rolled.body.active_version, 1);
      const notPublished = await engine.call('POST', `${FLOWS}/${clean.id}/rollback`, {
        token: engine.a.token,
        body: { version: 2 },
      });
      assert.equal(notPublished.status, 409);
      assert.equal(notPublished.body.error.code, 'FLOW_NO_PRIOR_VERSION');
      const noPrior = await engine.call('POST', `${FLOWS}/${clean.id}/rollback`, { token: engine.a.token, body: {} });
      assert.equal(noPrior.status, 409);
      const forward = await engine.call('POST', `${FLOWS}/${clean.id}/rollback`, {
        token: engine.a.token,
        body: { version: 3 },
      });
      assert.equal(forward.body.active_version, 3);
    });

    test('preview validates a candidate config without storing it', async () => {
      const engine = await shared.fresh();
      const flow = await createFlow(engine, engine.a, 'Preview me');
      const candidate = await engine.call('POST', `${FLOWS}/${flow.id}/preview`, {
        token: engine.a.token,
        body: { config: { ...config(), nodes: [{ id: 'x', type: 'output', action: 'NOT_AN_ACTION' }] } },
      });
      assert.equal(candidate.status, 200);
      assert.equal(candidate.body.valid, false);
      assert.equal(candidate.body.problems[0].code, 'FLOW_ACTION_NOT_NORMALIZED');
      const good = await engine.call('POST', `${FLOWS}/${flow.id}/preview`, {
        token: engine.a.token,
        body: { config: config({ outputAction: 'RESPOND' }) },
      });
      assert.equal(good.body.valid, true);
      assert.equal(good.body.version, null);
      assert.equal(good.body.plan.nodes, 2);
      assert.deepEqual(good.body.plan.node_types, { tool: 1, output: 1 });
      assert.equal(good.body.tool.name, 'engine_flow_preview_me_v2');
      assert.deepEqual(good.body.tool.input_schema.required, ['query']);
      const both = await engine.call('POST', `${FLOWS}/${flow.id}/preview`, {
        token: engine.a.token,
        body: { config: config(), version: 1 },
      });
      assert.equal(both.status, 400);
      const read = await engine.call('GET', `${FLOWS}/${flow.id}`, { token: engine.a.token });
      assert.equal(read.body.version, 1, 'preview stores nothing');
    });

    test('archive makes a flow inactive and read-only; delete refuses an active flow', async () => {
      const engine = await shared.fresh();
      const flow = await activeFlow(engine, engine.a, 'To archive');
      const active = await engine.call('DELETE', `${FLOWS}/${flow.id}`, { token: engine.a.token });
      assert.equal(active.status, 409);
      assert.equal(active.body.error.code, 'FLOW_ACTIVE');
      const archived = await engine.call('POST', `${FLOWS}/${flow.id}/archive`, { token: engine.a.token });
      assert.equal(archived.status, 200);
      assert.equal(archived.body.status, 'archived');
      assert.equal(archived.body.is_active, false);
      assert.equal(archived.body.tool_name, null);
      const update = await engine.call('PUT', `${FLOWS}/${flow.id}`, {
        token: engine.a.token,
        body: { name: 'To archive', config: config({ outputAction: 'RESPOND' }) },
      });
      assert.equal(update.status, 409);
      assert.equal(update.body.error.code, 'FLOW_ARCHIVED');
      const activate = await engine.call('POST', `${FLOWS}/${flow.id}/activate`, { token: engine.a.token, body: {} });
      assert.equal(activate.status, 409);
      const listed = await engine.call('GET', FLOWS, { token: engine.a.token });
      assert.equal(listed.body.data.length, 0, 'archived flows leave the default list');
      const archivedList = await engine.call('GET', `${FLOWS}?status=archived`, { token: engine.a.token });
      assert.equal(archivedList.body.data.length, 1);
      const deleted = await engine.call('DELETE', `${FLOWS}/${flow.id}`, { token: engine.a.token });
      assert.equal(deleted.status, 204);
      const gone = await engine.call('GET', `${FLOWS}/${flow.id}`, { token: engine.a.token });
      assert.equal(gone.status, 404);
      const versions = await engine.call('GET', `${FLOWS}/${flow.id}/versions`, { token: engine.a.token });
      assert.equal(versions.status, 404);
    });

    test("another realm's flow answers exactly like an unknown id; viewers read, only developers write", async () => {
      const engine = await shared.fresh();
      const flow = await activeFlow(engine, engine.a, 'Private');
      const unknown = '01900000-0000-7000-8000-000000000000';
      const calls: [string, string, unknown][] = [
        ['GET', '', undefined],
        ['PUT', '', { name: 'x', config: config() }],
        ['DELETE', '', undefined],
        ['GET', '/versions', undefined],
        ['POST', '/publish', {}],
        ['POST', '/activate', {}],
        ['POST', '/rollback', {}],
        ['POST', '/archive', undefined],
        ['POST', '/preview', {}],
        ['GET', '/fixtures', undefined],
        ['POST', '/fixtures', FIXTURE],
        ['POST', '/test', {}],
      ];
      for (const [method, suffix, body] of calls) {
        const foreign = await engine.call(method, `${FLOWS}/${flow.id}${suffix}`, { token: engine.b.token, body });
        const missing = await engine.call(method, `${FLOWS}/${unknown}${suffix}`, { token: engine.b.token, body });
        assert.equal(foreign.status, 404, `${method} ${suffix}`);
        assert.equal(missing.status, 404);
        assert.equal(foreign.body.error.code, missing.body.error.code);
        assert.equal(
          foreign.body.error.message.replace(flow.id, 'ID'),
          missing.body.error.message.replace(unknown, 'ID'),
        );
      }
      assert.equal((await engine.call('GET', FLOWS, { token: engine.b.token })).body.data.length, 0);
      const still = await engine.call('GET', `${FLOWS}/${flow.id}`, { token: engine.a.token });
      assert.equal(still.body.is_active, true, "the other realm's calls changed nothing");

      const viewer = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/identities/services`, {
        token: engine.a.token,
        body: { username: 'flow-viewer', role: 'viewer' },
      });
      const viewerToken = (
        await engine.exchange(viewer.body.credentials.access_key, viewer.body.credentials.secret_key)
      ).body.access_token;
      assert.equal((await engine.call('GET', `${FLOWS}/${flow.id}`, { token: viewerToken })).status, 200);
      const write = await engine.call('POST', FLOWS, { token: viewerToken, body: { name: 'v', config: config() } });
      assert.equal(write.status, 403);
      assert.equal(write.body.error.code, 'RUNTIME_FORBIDDEN');
      const test403 = await engine.call('POST', `${FLOWS}/${flow.id}/test`, { token: viewerToken, body: {} });
      assert.equal(test403.status, 403);
      assert.equal((await engine.call('GET', FLOWS, { token: null })).status, 401);
    });
  });
}
