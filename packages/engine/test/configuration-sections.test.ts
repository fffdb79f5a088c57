import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EXAMPLE_CONFIG } from '../src/flows/flow-api-schemas.ts';
import {
  type Realm,
  type Reply,
  type RuntimeUnderTest,
  roleToken,
  sharedRuntime,
  testDatabaseTargets,
} from './runtime-helper.ts';

const BASE = '/api/v1/runtime/configuration';
const FLOWS = '/api/v1/runtime/flows';
const PROVIDER_KEY = 'sk-sections-provider-SECRET-0123456789';
const SERVER_KEY = 'mcp-sections-server-SECRET-9876543210';
const HOOK_URL = 'http://127.0.0.1:9/hooks/keel';

function ok(reply: Reply, status = 200): any {
  assert.equal(reply.status, status, JSON.stringify(reply.body));
  return reply.body;
}

/** The example flow config (input → tool `catalog_search` → output), optionally calling another tool. */
function flowConfig(tool = 'catalog_search') {
  return {
    ...EXAMPLE_CONFIG,
    nodes: EXAMPLE_CONFIG.nodes.map((node) => (node.type === 'tool' ? { ...node, tool } : node)),
  };
}

const FIXTURE = {
  name: 'finds mugs',
  input: { query: 'mug' },
  mocks: { tools: { catalog_search: { products: [{ catalogId: '1234567890', name: 'Mug' }] } } },
  expect: { state: 'succeeded', action_type: 'RENDER_PRODUCTS', tool_calls: ['catalog_search'] },
};

/**
 * Every section of realm `realm`: providers, a prompt, a tool server, an active published flow (with a newer
 * draft, a fixture and a routing profile) and a draft flow, an agent referencing all of them, a routing rule, the
 * flow routing policy, a governance policy and quota, a runtime webhook and an integration client. Answers the
 * secrets the realm was given.
 */
async function configureAll(engine: RuntimeUnderTest, realm: Realm) {
  const token = realm.token;
  const call = (method: string, url: string, body?: unknown, status = 200) =>
    engine.call(method, url, { token, body }).then((reply) => ok(reply, status));
  const provider = await call(
    'POST',
    '/api/v1/runtime/providers',
    {
      type: 'openai_compatible',
      name: 'main',
      api_key: PROVIDER_KEY,
      base_url: 'http://127.0.0.1:9/v1',
      text_model: 'gpt-test',
      is_default: true,
    },
    201,
  );
  const prompt = await call(
    'POST',
    '/api/v1/runtime/prompts',
    { name: 'System', key: 'system', content: 'You help shoppers.', is_active: true },
    201,
  );
  const server = await call(
    'POST',
    '/api/v1/runtime/mcp/servers',
    { name: 'catalog', url: 'http://127.0.0.1:11/mcp', api_key: SERVER_KEY, capabilities: ['search'] },
    201,
  );
  const flow = await call('POST', FLOWS, { name: 'Lookup', description: 'finds products', config: flowConfig() }, 201);
  await call('POST', `${FLOWS}/${flow.id}/fixtures`, FIXTURE, 201);
  assert.equal((await call('POST', `${FLOWS}/${flow.id}/test`, {})).passed, true);
  await call('POST', `${FLOWS}/${flow.id}/activate`, {});
  // A newer draft beside the version that runs.
  await call('PUT', `${FLOWS}/${flow.id}`, {
    name: 'Lookup',
    description: 'finds products',
    config: { ...flowConfig(), routing: { when_to_use: 'product questions' } },
  });
  await call('PUT', `${FLOWS}/${flow.id}/routing-profile`, { when_to_use: 'shoppers look for a product', priority: 3 });
  await call('POST', FLOWS, { name: 'Draft only', description: null, config: flowConfig('catalog_lookup') }, 201);
  const agent = await call(
    'POST',
    `/api/v1/realms/${realm.realmId}/agents`,
    { username: 'shop-helper', display_name: 'Shop helper', role: 'operator' },
    201,
  );
  await call('PUT', `/api/v1/runtime/agents/${agent.identity.id}/config`, {
    system_prompt_id: prompt.id,
    ai_provider_id: provider.id,
    default_flow_id: flow.id,
    allowed_mcp_servers: [server.id],
    metadata: { team: 'shop' },
    settings: { max_tool_calls: 4, quality_tier: 'premium' },
    profile: { priority: 5, channel: ['web'] },
    is_default: true,
  });
  await call(
    'POST',
    '/api/v1/runtime/mcp/routing/rules',
    { tool_name: 'catalog_search', strategy: 'explicit', servers: [server.id], priority: 2, max_retries: 1 },
    201,
  );
  await call('PUT', '/api/v1/runtime/flow-routing-policy', {
    mode: 'automatic',
    fallback_flow_id: flow.id,
    canary_percentage: 12.5,
  });
  const policy = await call(
    'POST',
    '/api/v1/governance/policies',
    { name: 'Base', description: 'shop policy', rules: { allowed_tools: ['catalog_search'] } },
    201,
  );
  await call('POST', `/api/v1/governance/policies/${policy.id}/activate`, {});
  await call('PUT', '/api/v1/governance/quotas', {
    window_seconds: 3600,
    max_requests: 1000,
    max_cost: '12.5',
    notify_at_percent: [80, 50],
  });
  const hook = await call(
    'POST',
    '/api/v1/runtime/webhooks',
    { url: HOOK_URL, events: ['execution.failed', 'execution.succeeded'], description: 'ops' },
    201,
  );
  const client = await call('POST', '/api/v1/integrations/clients', { name: 'erp', role: 'developer' }, 201);
  return { secrets: [PROVIDER_KEY, SERVER_KEY, hook.signing_secret as string, client.client_secret as string], hook };
}

/**
 * A realm with a flow `Child` published twice (v1, then v2 active), an agent `advisor`, and a draft flow `Parent`
 * that runs Child v2 as a subflow and hands to `advisor` as a specialist, while `advisor`'s default flow is Parent
 * (the agent ↔ flow cycle a deploy breaks in two phases).
 */
async function configureNamedNodes(engine: RuntimeUnderTest, realm: Realm) {
  const call = (method: string, url: string, body?: unknown, status = 200) =>
    engine.call(method, url, { token: realm.token, body }).then((reply) => ok(reply, status));
  const child = await call('POST', FLOWS, { name: 'Child', description: null, config: flowConfig() }, 201);
  await call('POST', `${FLOWS}/${child.id}/fixtures`, FIXTURE, 201);
  for (const config of [flowConfig(), { ...flowConfig(), routing: { when_to_use: 'second version' } }]) {
    await call('PUT', `${FLOWS}/${child.id}`, { name: 'Child', description: null, config });
    assert.equal((await call('POST', `${FLOWS}/${child.id}/test`, {})).passed, true);
    await call('POST', `${FLOWS}/${child.id}/activate`, {});
  }
  const advisor = await call(
    'POST',
    `/api/v1/realms/${realm.realmId}/agents`,
    { username: 'advisor', display_name: 'Advisor', role: 'operator' },
    201,
  );
  const parentConfig = {
    ...EXAMPLE_CONFIG,
    nodes: [
      { id: 'sub', type: 'subflow', flow_id: child.id, version: 2, assign: 'found', next: 'ask' },
      { id: 'ask', type: 'specialist', agent_id: advisor.identity.id, instructions: 'Advise', next: 'show' },
      { id: 'show', type: 'output', action: 'RESPOND', data: { object: { text: { var: 'vars.ask' } } } },
    ],
  };
  const parent = await call('POST', FLOWS, { name: 'Parent', description: 'nested', config: parentConfig }, 201);
  await call('PUT', `/api/v1/runtime/agents/${advisor.identity.id}/config`, { default_flow_id: parent.id });
  await call(
    'POST',
    `${FLOWS}/${child.id}/triggers`,
    { kind: 'event', name: 'Order paid', event: 'order.paid', agent_id: advisor.identity.id, input: { query: 'mug' } },
    201,
  );
  await call(
    'POST',
    `${FLOWS}/${child.id}/triggers`,
    { kind: 'schedule', name: 'Hourly', interval_seconds: 3600, input: { query: 'tea' }, is_active: false },
    201,
  );
  await call(
    'POST',
    `${FLOWS}/${child.id}/triggers`,
    {
      kind: 'schedule',
      name: 'Weekday mornings',
      cron: '0 9 * * 1-5',
      time_zone: 'America/New_York',
      is_active: false,
    },
    201,
  );
  return { child, parent, advisor };
}

const exportOf = async (engine: RuntimeUnderTest, token: string) =>
  ok(await engine.call('GET', `${BASE}/export`, { token }));

const deploy = (engine: RuntimeUnderTest, token: string, body: Record<string, unknown>) =>
  engine.call('POST', `${BASE}/deploy`, { token, body });

for (const target of testDatabaseTargets()) {
  describe(`configuration bundle: every section (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('export → deploy into an empty realm → export is identical for every section; no secret, no id', async () => {
      const engine = await shared.fresh();
      const { secrets, hook } = await configureAll(engine, engine.a);
      const exported = await exportOf(engine, engine.a.token);
      const { bundle } = exported;
      const text = JSON.stringify(exported);
      for (const secret of secrets) assert.ok(!text.includes(secret), 'no secret in the export');
      assert.ok(!/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-|_id"|_at"/i.test(text), 'no ids, no timestamps');
      for (const id of [engine.a.realmId, engine.a.identityId]) assert.ok(!text.includes(id));
      assert.deepEqual(exported.required_credentials, [
        'providers/main',
        'tool_servers/catalog',
        `runtime_webhooks/${HOOK_URL}`,
      ]);
      assert.deepEqual(
        bundle.flows.map((f: any) => [f.name, f.is_active, f.published_config !== null]),
        [
          ['Draft only', false, false],
          ['Lookup', true, true],
        ],
      );
      const lookup = bundle.flows[1];
      assert.notDeepEqual(lookup.config, lookup.published_config, 'the newer draft is kept beside the published one');
      assert.equal(lookup.fixtures.length, 1);
      assert.deepEqual(lookup.routing_profile, { when_to_use: 'shoppers look for a product', priority: 3 });
      assert.deepEqual(bundle.agents, [
        {
          name: 'shop-helper',
          display_name: 'Shop helper',
          role: 'operator',
          system_prompt: { key: 'system', version: 1 },
          provider: 'main',
          default_flow: 'Lookup',
          allowed_mcp_servers: ['catalog'],
          metadata: { team: 'shop' },
          settings: { max_tool_calls: 4, quality_tier: 'premium' },
          profile: { priority: 5, channel: ['web'] },
          is_default: true,
        },
      ]);
      assert.deepEqual(bundle.tool_routing, {
        rules: [
          { tool_name: 'catalog_search', strategy: 'explicit', servers: ['catalog'], priority: 2, max_retries: 1 },
        ],
      });
      assert.deepEqual(bundle.flow_routing, {
        mode: 'automatic',
        compatibility_fallback: true,
        fallback_flow: 'Lookup',
        canary_percentage: 12.5,
      });
      assert.deepEqual(bundle.governance, {
        policy: {
          name: 'Base',
          description: 'shop policy',
          rules: {
            allowed_actions: null,
            allowed_tools: ['catalog_search'],
            allowed_provider_types: null,
            data_handling: 'standard',
          },
        },
        quota: {
          window_seconds: 3600,
          max_requests: 1000,
          max_tokens: null,
          max_cost: '12.5',
          max_tool_calls: null,
          notify_at_percent: [50, 80],
        },
      });
      assert.deepEqual(bundle.runtime_webhooks, [
        {
          url: HOOK_URL,
          description: 'ops',
          events: ['execution.failed', 'execution.succeeded'],
          active: true,
          credential: 'signing_secret',
        },
      ]);
      assert.deepEqual(bundle.integration_clients, [{ name: 'erp', description: null, role: 'developer' }]);

      const empty = await engine.newRealm('Empty');
      const credentials = {
        'providers/main': PROVIDER_KEY,
        'tool_servers/catalog': SERVER_KEY,
        [`runtime_webhooks/${HOOK_URL}`]: hook.signing_secret,
      };
      const deployed = ok(await deploy(engine, empty.token, { bundle, credentials }));
      assert.equal(deployed.applied, true);
      // The one-object sections exist in every realm (defaults), so they are updates.
      assert.deepEqual(deployed.summary, { create: 8, update: 3, unchanged: 0, delete: 0 });
      assert.deepEqual(deployed.missing_credentials, [
        { ref: 'integration_clients/erp', section: 'integration_clients', name: 'erp', credential: 'client_secret' },
      ]);
      assert.deepEqual(deployed.requires_admin, []);
      const deployedText = JSON.stringify(deployed);
      for (const secret of secrets) assert.ok(!deployedText.includes(secret), 'no secret in the deploy answer');
      const again = await exportOf(engine, empty.token);
      assert.deepEqual(again, exported, 'the round trip reproduces the configuration exactly');

      // The deployed flow runs its published version through the normal publish path: tested and published.
      const flows = ok(await engine.call('GET', `${FLOWS}?limit=10`, { token: empty.token })).data;
      const deployedLookup = flows.find((f: any) => f.name === 'Lookup');
      assert.equal(deployedLookup.is_active, true);
      const versions = ok(
        await engine.call('GET', `${FLOWS}/${deployedLookup.id}/versions?limit=10`, { token: empty.token }),
      ).data;
      assert.deepEqual(
        versions.map((v: any) => [v.version, v.status, v.test_passed]),
        [
          [2, 'draft', null],
          [1, 'published', true],
        ],
      );
      // The governance policy is a new version of the target realm, activated; the webhook keeps its secret.
      const snapshot = ok(await engine.call('GET', '/api/v1/governance', { token: empty.token }));
      assert.equal(snapshot.active_policy.version, 1);

      const redeploy = ok(await deploy(engine, empty.token, { bundle, credentials }));
      assert.equal(redeploy.applied, false);
      assert.deepEqual(redeploy.summary, { create: 0, update: 0, unchanged: 11, delete: 0 });
      assert.deepEqual(await exportOf(engine, empty.token), exported);
      const logs = engine.logs();
      for (const secret of secrets) assert.ok(!logs.includes(secret), 'no secret logged');
    });

    test('a v1 bundle of only the first sections still deploys and leaves the other sections untouched', async () => {
      const engine = await shared.fresh();
      const schema = ok(await engine.call('GET', `${BASE}/schema`, { token: engine.a.token }));
      assert.deepEqual(schema['x-keel-section-order'], [
        'providers',
        'prompts',
        'tool_servers',
        'agents',
        'flows',
        'flow_triggers',
        'tool_routing',
        'flow_routing',
        'governance',
        'runtime_webhooks',
        'integration_clients',
      ]);
      assert.deepEqual(schema.required, ['format'], 'every section is optional');
      for (const section of schema['x-keel-section-order']) assert.ok(schema.properties[section], section);
      await configureAll(engine, engine.a);
      const before = (await exportOf(engine, engine.a.token)).bundle;
      const old = { format: 'keel.engine.config/v1', providers: before.providers, prompts: before.prompts };
      const reply = ok(await deploy(engine, engine.a.token, { bundle: old, prune: true }));
      assert.deepEqual(reply.summary, { create: 0, update: 0, unchanged: 2, delete: 0 });
      assert.deepEqual((await exportOf(engine, engine.a.token)).bundle, before);
    });

    test('dry run: create, update and delete per section, and nothing is written', async () => {
      const engine = await shared.fresh();
      await configureAll(engine, engine.a);
      const before = (await exportOf(engine, engine.a.token)).bundle;
      const edited = structuredClone(before);
      edited.flows = edited.flows.filter((f: any) => f.name !== 'Draft only');
      edited.flows.push({ ...before.flows[0], name: 'Second' });
      edited.agents[0].settings = { max_tool_calls: 6 };
      edited.agents.push({ ...before.agents[0], name: 'new-agent', is_default: false, default_flow: 'Second' });
      edited.tool_routing.rules[0].priority = 9;
      edited.flow_routing.canary_percentage = 50;
      edited.governance.quota.max_requests = 5;
      edited.runtime_webhooks[0].events = ['*'];
      edited.integration_clients = [];
      const diff = ok(await deploy(engine, engine.a.token, { bundle: edited, dry_run: true, prune: true }));
      assert.equal(diff.applied, false);
      assert.deepEqual(
        diff.changes
          .filter((c: any) => c.action !== 'unchanged')
          .map((c: any) => [c.section, c.name, c.action, c.fields]),
        [
          ['agents', 'shop-helper', 'update', ['settings']],
          ['agents', 'new-agent', 'create', []],
          ['flows', 'Second', 'create', []],
          ['flows', 'Draft only', 'delete', []],
          ['tool_routing', 'realm', 'update', ['rules']],
          ['flow_routing', 'realm', 'update', ['canary_percentage']],
          ['governance', 'realm', 'update', ['quota']],
          ['runtime_webhooks', HOOK_URL, 'update', ['events']],
          ['integration_clients', 'erp', 'delete', []],
        ],
      );
      assert.deepEqual((await exportOf(engine, engine.a.token)).bundle, before, 'a dry run writes nothing');
      // The same bundle deployed: the realm then exports it (the webhook keeps its stored secret).
      ok(await deploy(engine, engine.a.token, { bundle: edited, prune: true }));
      edited.agents.sort((a: any, b: any) => (a.name < b.name ? -1 : 1));
      assert.deepEqual((await exportOf(engine, engine.a.token)).bundle, edited);
    });

    test('a deploy that fails midway leaves nothing behind', async () => {
      const engine = await shared.fresh();
      await configureAll(engine, engine.a);
      const before = (await exportOf(engine, engine.a.token)).bundle;
      // Flows and agents are written first; then the routing policy names a flow that exists nowhere: a 400.
      const dangling = structuredClone(before);
      dangling.flows.push({ ...before.flows[0], name: 'Written first' });
      dangling.agents.push({ ...before.agents[0], name: 'written-agent', is_default: false });
      dangling.agents[0].display_name = 'Changed';
      dangling.flow_routing.fallback_flow = 'No such flow';
      const failed = await deploy(engine, engine.a.token, { bundle: dangling });
      assert.equal(failed.status, 400, JSON.stringify(failed.body));
      assert.match(failed.body.error.message, /^flow_routing: flows has no item "No such flow"/);
      assert.deepEqual((await exportOf(engine, engine.a.token)).bundle, before);
      // A flow whose fixtures fail on its published config is refused by the publish rules (after providers,
      // prompts and servers were written).
      const untested = structuredClone(before);
      untested.providers[0].text_model = 'changed-first';
      // Another tool: the fixture has no mock for it, so it fails (the contract stays compatible).
      untested.flows[1].published_config = flowConfig('catalog_lookup');
      const refused = await deploy(engine, engine.a.token, { bundle: untested });
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'FLOW_NOT_TESTED');
      assert.deepEqual((await exportOf(engine, engine.a.token)).bundle, before);
    });

    test('agents, governance and integration clients need admin: a developer dry-run says so, a deploy is a 403', async () => {
      const engine = await shared.fresh();
      await configureAll(engine, engine.a);
      const before = (await exportOf(engine, engine.a.token)).bundle;
      const developer = await roleToken(engine, 'developer');
      const edited = structuredClone(before);
      edited.agents[0].display_name = 'Renamed';
      edited.governance.policy.rules.allowed_tools = null;
      edited.integration_clients.push({ name: 'crm', description: null, role: 'viewer' });
      edited.prompts[0].versions.push({ version: 2, name: 'v2', content: 'Be brief.', variables: [] });
      const preview = ok(await deploy(engine, developer, { bundle: edited, dry_run: true }));
      assert.deepEqual(preview.requires_admin, ['agents', 'governance', 'integration_clients']);
      const denied = await deploy(engine, developer, { bundle: edited });
      assert.equal(denied.status, 403, JSON.stringify(denied.body));
      assert.equal(denied.body.error.code, 'RUNTIME_FORBIDDEN');
      assert.deepEqual((await exportOf(engine, engine.a.token)).bundle, before, 'the prompt written first is undone');
      // Unchanged admin sections need nothing: the developer deploys the rest.
      const { agents: _a, governance: _g, integration_clients: _c, ...rest } = edited;
      const restBundle = { ...rest, agents: before.agents };
      const restPreview = ok(await deploy(engine, developer, { bundle: restBundle, dry_run: true }));
      assert.deepEqual(
        restPreview.changes.filter((c: any) => c.action !== 'unchanged'),
        [{ section: 'prompts', name: 'system', action: 'update', fields: ['versions'] }],
      );
      const allowed = ok(await deploy(engine, developer, { bundle: restBundle }));
      assert.deepEqual(allowed.requires_admin, []);
      assert.equal(allowed.summary.update, 1);
      // An admin deploys the whole bundle.
      const admin = await roleToken(engine, 'admin');
      const applied = ok(await deploy(engine, admin, { bundle: edited }));
      assert.equal(applied.applied, true);
      assert.equal((await exportOf(engine, engine.a.token)).bundle.agents[0].display_name, 'Renamed');
    });

    test("cross-realm: names resolve only in the token's realm; another realm's items are never touched", async () => {
      const engine = await shared.fresh();
      await configureAll(engine, engine.a);
      const { bundle } = await exportOf(engine, engine.a.token);
      // Realm B has none of A's providers, prompts, flows or servers: an agent naming them is a 400 there.
      const onlyAgents = { format: bundle.format, agents: bundle.agents };
      for (const dry_run of [true, false]) {
        const reply = await deploy(engine, engine.b.token, { bundle: onlyAgents, dry_run });
        assert.equal(reply.status, 400, JSON.stringify(reply.body));
        assert.match(reply.body.error.message, /^agents\/shop-helper: /);
      }
      const routing = { format: bundle.format, tool_routing: bundle.tool_routing };
      assert.equal((await deploy(engine, engine.b.token, { bundle: routing })).status, 400);
      // A dry run accepts names the bundle itself creates.
      const { integration_clients: _c, ...withoutClients } = bundle;
      const preview = ok(await deploy(engine, engine.b.token, { bundle: withoutClients, dry_run: true }));
      assert.ok(preview.changes.every((c: any) => c.action === 'create' || c.section !== 'agents'));
      const emptyB = (await exportOf(engine, engine.b.token)).bundle;
      assert.deepEqual(emptyB.agents, []);
      assert.deepEqual(emptyB.flows, []);
      assert.equal(emptyB.governance.policy, null);
      assert.deepEqual((await exportOf(engine, engine.a.token)).bundle, bundle);
    });

    test('prune deletes agents, flows and clients the bundle leaves out; governance null supersedes and removes', async () => {
      const engine = await shared.fresh();
      await configureAll(engine, engine.a);
      const before = (await exportOf(engine, engine.a.token)).bundle;
      const lookup = before.flows.find((f: any) => f.name === 'Lookup');
      // An active flow the bundle leaves out is in use: pruning it is a 409 and nothing changes.
      const activeGone = await deploy(engine, engine.a.token, {
        bundle: { format: before.format, flows: [] },
        prune: true,
      });
      assert.equal(activeGone.status, 409, JSON.stringify(activeGone.body));
      assert.equal(activeGone.body.error.code, 'FLOW_ACTIVE');
      const slim = {
        format: before.format,
        flows: [lookup],
        agents: [],
        governance: { policy: null, quota: null },
        integration_clients: [],
        runtime_webhooks: [],
      };
      const pruned = ok(await deploy(engine, engine.a.token, { bundle: slim, prune: true }));
      assert.deepEqual(
        pruned.changes
          .filter((c: any) => c.action !== 'unchanged')
          .map((c: any) => `${c.action} ${c.section}/${c.name}`),
        [
          'delete agents/shop-helper',
          'delete flows/Draft only',
          'update governance/realm',
          'delete runtime_webhooks/http://127.0.0.1:9/hooks/keel',
          'delete integration_clients/erp',
        ],
      );
      const after = (await exportOf(engine, engine.a.token)).bundle;
      assert.deepEqual(
        { flows: after.flows, agents: after.agents, governance: after.governance, clients: after.integration_clients },
        { flows: [lookup], agents: [], governance: { policy: null, quota: null }, clients: [] },
      );
      const snapshot = ok(await engine.call('GET', '/api/v1/governance', { token: engine.a.token }));
      assert.equal(snapshot.active_policy, null);
      assert.deepEqual(
        snapshot.policies.map((p: any) => p.status),
        ['superseded'],
      );
      assert.ok(snapshot.audit.some((a: any) => a.action === 'policy.superseded'));
      const clients = ok(await engine.call('GET', '/api/v1/integrations/clients', { token: engine.a.token }));
      assert.deepEqual(clients.data, []);
    });

    test('a webhook without its secret is deployed inactive and reported; a flow naming a subflow by id is refused', async () => {
      const engine = await shared.fresh();
      await configureAll(engine, engine.a);
      const { bundle } = await exportOf(engine, engine.a.token);
      const hooks = { format: bundle.format, runtime_webhooks: bundle.runtime_webhooks };
      const reply = ok(await deploy(engine, engine.b.token, { bundle: hooks }));
      assert.deepEqual(reply.missing_credentials, [
        {
          ref: `runtime_webhooks/${HOOK_URL}`,
          section: 'runtime_webhooks',
          name: HOOK_URL,
          credential: 'signing_secret',
        },
      ]);
      const stored = ok(await engine.call('GET', '/api/v1/runtime/webhooks', { token: engine.b.token })).data;
      assert.equal(stored[0].active, false);
      const badSecret = await deploy(engine, engine.b.token, {
        bundle: hooks,
        credentials: { [`runtime_webhooks/${HOOK_URL}`]: 'not-a-signing-secret' },
      });
      assert.equal(badSecret.status, 400);
      const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      const activated = ok(
        await deploy(engine, engine.b.token, {
          bundle: hooks,
          credentials: { [`runtime_webhooks/${HOOK_URL}`]: secret },
        }),
      );
      assert.deepEqual(activated.changes[0].fields, ['active', 'credential']);
      assert.equal(
        ok(await engine.call('GET', '/api/v1/runtime/webhooks', { token: engine.b.token })).data[0].active,
        true,
      );

      const subflow = structuredClone(bundle.flows[1]);
      subflow.name = 'Nested';
      subflow.published_config = null;
      subflow.published_version = null;
      subflow.is_active = false;
      subflow.config = {
        ...subflow.config,
        nodes: [{ id: 'sub', type: 'subflow', flow_id: engine.a.realmId, version: 1, next: 'done' }],
      };
      const nested = await deploy(engine, engine.b.token, { bundle: { format: bundle.format, flows: [subflow] } });
      assert.equal(nested.status, 400, JSON.stringify(nested.body));
      assert.match(nested.body.error.message, /^flows\/Nested: node sub \(subflow\) names another flow by its id/);
    });

    test('subflow and specialist nodes travel by name; a created flow keeps its published number; agent ↔ flow cycle', async () => {
      const engine = await shared.fresh();
      await configureNamedNodes(engine, engine.a);
      const exported = await exportOf(engine, engine.a.token);
      const { bundle } = exported;
      const text = JSON.stringify(exported);
      assert.ok(!/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-|_id"/i.test(text), 'no ids: nodes name their items');
      const parent = bundle.flows.find((f: any) => f.name === 'Parent');
      const child = bundle.flows.find((f: any) => f.name === 'Child');
      assert.deepEqual(
        parent.config.nodes.slice(0, 2).map((n: any) => [n.id, n.flow, n.version, n.agent]),
        [
          ['sub', 'Child', 2, undefined],
          ['ask', undefined, undefined, 'advisor'],
        ],
      );
      assert.equal(parent.published_version, null);
      assert.equal(child.published_version, 2);
      assert.equal(bundle.agents[0].default_flow, 'Parent');

      // A dry run into an empty realm plans every item (names the bundle creates resolve) and writes nothing.
      const empty = await engine.newRealm('Empty named');
      const preview = ok(await deploy(engine, empty.token, { bundle, dry_run: true }));
      assert.deepEqual(
        preview.changes.filter((c: any) => c.action === 'create').map((c: any) => `${c.section}/${c.name}`),
        [
          'agents/advisor',
          'flows/Child',
          'flows/Parent',
          'flow_triggers/Child/Hourly',
          'flow_triggers/Child/Order paid',
          'flow_triggers/Child/Weekday mornings',
        ],
      );
      assert.deepEqual(bundle.flow_triggers, [
        {
          flow: 'Child',
          kind: 'schedule',
          name: 'Hourly',
          interval_seconds: 3600,
          input: { query: 'tea' },
          is_active: false,
          agent: null,
        },
        {
          flow: 'Child',
          kind: 'event',
          name: 'Order paid',
          event: 'order.paid',
          input: { query: 'mug' },
          is_active: true,
          agent: 'advisor',
        },
        {
          flow: 'Child',
          kind: 'schedule',
          name: 'Weekday mornings',
          cron: '0 9 * * 1-5',
          time_zone: 'America/New_York',
          input: {},
          is_active: false,
          agent: null,
        },
      ]);
      assert.deepEqual((await exportOf(engine, empty.token)).bundle.flows, []);

      const deployed = ok(await deploy(engine, empty.token, { bundle }));
      assert.equal(deployed.applied, true);
      assert.deepEqual(await exportOf(engine, empty.token), exported, 'the round trip reproduces the configuration');
      // The target runs Child at the bundle's number, and Parent's nodes hold the target realm's own ids.
      const flows = ok(await engine.call('GET', `${FLOWS}?limit=10`, { token: empty.token })).data;
      const targetChild = flows.find((f: any) => f.name === 'Child');
      const targetParent = flows.find((f: any) => f.name === 'Parent');
      const versions = ok(
        await engine.call('GET', `${FLOWS}/${targetChild.id}/versions?limit=10`, { token: empty.token }),
      ).data;
      assert.deepEqual(
        versions.map((v: any) => [v.version, v.status]),
        [[2, 'published']],
      );
      const stored = ok(await engine.call('GET', `${FLOWS}/${targetParent.id}`, { token: empty.token }));
      const nodes = stored.config.nodes;
      assert.equal(nodes[0].flow_id, targetChild.id);
      const advisorId = nodes[1].agent_id;
      assert.notEqual(advisorId, engine.a.identityId);
      const agentConfig = ok(
        await engine.call('GET', `/api/v1/runtime/agents/${advisorId}/config`, { token: empty.token }),
      );
      assert.equal(agentConfig.default_flow_id, targetParent.id);
      const redeploy = ok(await deploy(engine, empty.token, { bundle }));
      assert.equal(redeploy.applied, false, JSON.stringify(redeploy.changes));
      const triggers = ok(await engine.call('GET', `${FLOWS}/${targetChild.id}/triggers`, { token: empty.token })).data;
      assert.deepEqual(triggers.map((t: any) => [t.name, t.agent_id, t.next_run_at === null]).sort(), [
        ['Hourly', null, false],
        ['Order paid', advisorId, true],
        ['Weekday mornings', null, false],
      ]);

      // Triggers: a dry run shows the changed field and the pruned trigger; the deploy then exports as the bundle.
      const edited = structuredClone(bundle);
      edited.flow_triggers = [{ ...bundle.flow_triggers[0], interval_seconds: 7200 }];
      const diff = ok(await deploy(engine, empty.token, { bundle: edited, dry_run: true, prune: true }));
      assert.deepEqual(
        diff.changes.filter((c: any) => c.section === 'flow_triggers').map((c: any) => [c.name, c.action, c.fields]),
        [
          ['Child/Hourly', 'update', ['interval_seconds']],
          ['Child/Order paid', 'delete', []],
          ['Child/Weekday mornings', 'delete', []],
        ],
      );
      assert.deepEqual((await exportOf(engine, empty.token)).bundle, bundle, 'a dry run writes nothing');
      ok(await deploy(engine, empty.token, { bundle: edited, prune: true }));
      assert.deepEqual((await exportOf(engine, empty.token)).bundle.flow_triggers, edited.flow_triggers);
    });

    test('named nodes: a missing agent or pinned version is a 400 naming the item; nothing is written', async () => {
      const engine = await shared.fresh();
      await configureNamedNodes(engine, engine.a);
      const { bundle } = await exportOf(engine, engine.a.token);
      // Realm B has no agent `advisor`: the flows alone do not deploy there (dry run or not).
      const flowsOnly = { format: bundle.format, flows: bundle.flows };
      for (const dry_run of [true, false]) {
        const reply = await deploy(engine, engine.b.token, { bundle: flowsOnly, dry_run });
        assert.equal(reply.status, 400, JSON.stringify(reply.body));
        assert.match(reply.body.error.message, /^flows\/Parent: agents has no item "advisor"/);
      }
      // Triggers name their flow and agent in the token's realm only.
      const triggersOnly = { format: bundle.format, flow_triggers: bundle.flow_triggers };
      const orphan = await deploy(engine, engine.b.token, { bundle: triggersOnly });
      assert.equal(orphan.status, 400, JSON.stringify(orphan.body));
      assert.match(orphan.body.error.message, /^flow_triggers\/Child\/Hourly: flows has no item "Child"/);
      // A pinned version the target does not have after the deploy (Child is created at v2 only).
      const stale = structuredClone(bundle);
      stale.flows.find((f: any) => f.name === 'Parent').config.nodes[0].version = 1;
      const refused = await deploy(engine, engine.b.token, { bundle: stale });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.match(
        refused.body.error.message,
        /^flows\/Parent: node sub pins flow "Child" version 1, which is not a published version/,
      );
      const after = (await exportOf(engine, engine.b.token)).bundle;
      assert.deepEqual([after.flows, after.agents], [[], []], 'a refused deploy leaves nothing behind');
      // A node naming its item by id is not portable.
      const byId = structuredClone(bundle);
      const node = byId.flows.find((f: any) => f.name === 'Parent').config.nodes[1];
      node.agent_id = engine.a.identityId;
      delete node.agent;
      const idRef = await deploy(engine, engine.a.token, { bundle: byId, dry_run: true });
      assert.equal(idRef.status, 400, JSON.stringify(idRef.body));
      assert.match(idRef.body.error.message, /^flows\/Parent: node ask \(specialist\) names another agent by its id/);
      // Realm A is untouched by all of it.
      assert.deepEqual((await exportOf(engine, engine.a.token)).bundle, bundle);
    });
  });
}
