import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Reply, type RuntimeUnderTest, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

const PROVIDER_KEY = 'sk-config-provider-SECRET-0123456789';
const SERVER_KEY = 'mcp-config-server-SECRET-9876543210';
const BASE = '/api/v1/runtime/configuration';

async function roleToken(engine: RuntimeUnderTest, role: string): Promise<string> {
  const created = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/identities/services`, {
    token: engine.a.token,
    body: { username: `cfg-${role}-${Math.random().toString(36).slice(2, 8)}`, role },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const c = created.body.credentials;
  return (await engine.exchange(c.access_key, c.secret_key)).body.access_token;
}

function ok(reply: Reply, status = 200): any {
  assert.equal(reply.status, status, JSON.stringify(reply.body));
  return reply.body;
}

/** Realm A's configuration: two providers (one with a key), two prompt keys (versions, one active), a server. */
async function configure(engine: RuntimeUnderTest, token: string) {
  const post = (url: string, body: unknown) => engine.call('POST', url, { token, body });
  ok(
    await post('/api/v1/runtime/providers', {
      type: 'openai_compatible',
      name: 'main',
      api_key: PROVIDER_KEY,
      base_url: 'http://127.0.0.1:9/v1',
      text_model: 'gpt-test',
      input_price_per_million: 0.15,
      output_price_per_million: 0.6,
      is_default: true,
      settings: { temperature: 0.2, max_tokens: 512 },
    }),
    201,
  );
  ok(
    await post('/api/v1/runtime/providers', {
      type: 'openai_compatible',
      name: 'local',
      description: 'keyless local model',
      base_url: 'http://127.0.0.1:10/v1',
      text_model: 'llama',
      is_active: false,
    }),
    201,
  );
  const v1 = ok(
    await post('/api/v1/runtime/prompts', {
      name: 'Greeting',
      key: 'greeting',
      content: 'Hello {{ name }}',
      variables: ['name'],
      is_active: true,
    }),
    201,
  );
  ok(
    await post('/api/v1/runtime/prompts', {
      name: 'Greeting v2',
      key: 'greeting',
      content: 'Hi {{ name }}!',
      variables: ['name'],
    }),
    201,
  );
  ok(await post('/api/v1/runtime/prompts', { name: 'Policy', key: 'policy', content: 'Be brief.' }), 201);
  const server = ok(
    await post('/api/v1/runtime/mcp/servers', {
      name: 'catalog',
      url: 'http://127.0.0.1:11/mcp',
      description: 'catalog tools',
      api_key: SERVER_KEY,
      capabilities: ['search'],
    }),
    201,
  );
  ok(
    await engine.call('PUT', `/api/v1/runtime/mcp/servers/${server.id}/profile`, {
      token,
      body: {
        auth: { type: 'api_key', header_name: 'X-Catalog-Key' },
        egress: { allowed_hosts: ['127.0.0.1'] },
        region: 'eu',
        data_handling: ['no_retention'],
        estimated_cost: 2000,
      },
    }),
  );
  return { promptV1: v1.id as string, serverId: server.id as string };
}

const credentials = { 'providers/main': PROVIDER_KEY, 'tool_servers/catalog': SERVER_KEY };

/** The sections this file configures (the other sections: configuration-sections.test.ts). */
function firstSections(bundle: Record<string, unknown>) {
  const { format, providers, prompts, tool_servers } = bundle;
  return { format, providers, prompts, tool_servers };
}

for (const target of testDatabaseTargets()) {
  describe(`configuration export and deploy (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('export → deploy into an empty realm → export is identical; no secret ever appears; re-deploy is a no-op', async () => {
      const engine = await shared.fresh();
      await configure(engine, engine.a.token);
      const exported = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token }));
      assert.equal(exported.bundle.format, 'keel.engine.config/v1');
      assert.deepEqual(exported.required_credentials, ['providers/main', 'tool_servers/catalog']);
      assert.deepEqual(
        exported.bundle.providers.map((p: any) => [p.name, p.credential]),
        [
          ['local', null],
          ['main', 'api_key'],
        ],
      );
      assert.deepEqual(exported.bundle.prompts[0], {
        key: 'greeting',
        active_version: 1,
        versions: [
          { version: 1, name: 'Greeting', content: 'Hello {{ name }}', variables: ['name'] },
          { version: 2, name: 'Greeting v2', content: 'Hi {{ name }}!', variables: ['name'] },
        ],
      });
      assert.deepEqual(exported.bundle.tool_servers[0].profile, {
        auth: { type: 'api_key', header_name: 'X-Catalog-Key' },
        egress: { allowed_hosts: ['127.0.0.1'] },
        region: 'eu',
        data_handling: ['no_retention'],
        estimated_cost: 2000,
      });
      const text = JSON.stringify(exported);
      assert.ok(!text.includes(PROVIDER_KEY) && !text.includes(SERVER_KEY), 'no secret in the export');
      assert.ok(!/"id"|realm_id|_at"/.test(text), 'no ids, no timestamps');

      const empty = await engine.newRealm('Empty');
      const deployed = ok(
        await engine.call('POST', `${BASE}/deploy`, {
          token: empty.token,
          body: { bundle: exported.bundle, credentials },
        }),
      );
      assert.equal(deployed.applied, true);
      // The one-object sections (routing, governance) are the defaults of the empty realm: unchanged.
      assert.deepEqual(deployed.summary, { create: 5, update: 0, unchanged: 3, delete: 0 });
      assert.deepEqual(deployed.missing_credentials, []);
      assert.ok(!JSON.stringify(deployed).includes(PROVIDER_KEY));
      const again = ok(await engine.call('GET', `${BASE}/export`, { token: empty.token }));
      assert.deepEqual(again, exported, 'the round trip reproduces the configuration exactly');

      // The secrets arrived sealed: the provider and the server report a key, and the engine can use it.
      const providers = ok(await engine.call('GET', '/api/v1/runtime/providers', { token: empty.token }));
      assert.deepEqual(providers.data.map((p: any) => [p.name, p.api_key_set, p.is_default]).sort(), [
        ['local', false, false],
        ['main', true, true],
      ]);
      const redeploy = ok(
        await engine.call('POST', `${BASE}/deploy`, {
          token: empty.token,
          body: { bundle: exported.bundle, credentials },
        }),
      );
      assert.equal(redeploy.applied, false);
      assert.deepEqual(redeploy.summary, { create: 0, update: 0, unchanged: 8, delete: 0 });
      assert.ok(redeploy.changes.every((c: any) => c.action === 'unchanged' && c.fields.length === 0));
      assert.ok(!engine.logs().includes(PROVIDER_KEY) && !engine.logs().includes(SERVER_KEY), 'no secret logged');
    });

    test('missing credentials: deployed inactive and reported; a re-deploy is a no-op; supplying them activates', async () => {
      const engine = await shared.fresh();
      await configure(engine, engine.a.token);
      const { bundle } = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token }));
      const body = ok(await engine.call('POST', `${BASE}/deploy`, { token: engine.b.token, body: { bundle } }));
      assert.deepEqual(body.missing_credentials, [
        { ref: 'providers/main', section: 'providers', name: 'main', credential: 'api_key' },
        { ref: 'tool_servers/catalog', section: 'tool_servers', name: 'catalog', credential: 'api_key' },
      ]);
      const exported = ok(await engine.call('GET', `${BASE}/export`, { token: engine.b.token })).bundle;
      const main = exported.providers.find((p: any) => p.name === 'main');
      assert.equal(main.is_active, false);
      assert.equal(main.credential, null);
      assert.equal(exported.tool_servers[0].is_active, false);
      const noop = ok(await engine.call('POST', `${BASE}/deploy`, { token: engine.b.token, body: { bundle } }));
      assert.equal(noop.applied, false);
      assert.equal(noop.summary.unchanged, 8);
      assert.equal(noop.missing_credentials.length, 2);
      const supplied = ok(
        await engine.call('POST', `${BASE}/deploy`, { token: engine.b.token, body: { bundle, credentials } }),
      );
      assert.deepEqual(
        supplied.changes.filter((c: any) => c.action !== 'unchanged'),
        [
          { section: 'providers', name: 'main', action: 'update', fields: ['is_active', 'credential'] },
          { section: 'tool_servers', name: 'catalog', action: 'update', fields: ['is_active', 'credential'] },
        ],
      );
      const after = ok(await engine.call('GET', `${BASE}/export`, { token: engine.b.token })).bundle;
      assert.deepEqual(after, bundle);
      // A different secret for a stored one is a rotation: shown as a credential change, then a new server version.
      const rotated = ok(
        await engine.call('POST', `${BASE}/deploy`, {
          token: engine.b.token,
          body: { bundle, credentials: { 'tool_servers/catalog': 'another-secret-value' }, dry_run: true },
        }),
      );
      assert.deepEqual(
        rotated.changes.filter((c: any) => c.action !== 'unchanged'),
        [{ section: 'tool_servers', name: 'catalog', action: 'update', fields: ['credential'] }],
      );
    });

    test('dry run: a readable per-item diff, and nothing is written', async () => {
      const engine = await shared.fresh();
      await configure(engine, engine.a.token);
      const { bundle } = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token }));
      const edited = structuredClone(bundle);
      edited.providers.find((p: any) => p.name === 'local').text_model = 'llama-3';
      edited.prompts[0].versions.push({
        version: 3,
        name: 'Greeting v3',
        content: 'Hey {{ name }}',
        variables: ['name'],
      });
      edited.prompts[0].active_version = 3;
      edited.prompts.push({
        key: 'new-one',
        active_version: null,
        versions: [{ version: 1, name: 'N', content: 'x', variables: [] }],
      });
      const diff = ok(
        await engine.call('POST', `${BASE}/deploy`, { token: engine.a.token, body: { bundle: edited, dry_run: true } }),
      );
      assert.equal(diff.dry_run, true);
      assert.equal(diff.applied, false);
      assert.deepEqual(diff.summary, { create: 1, update: 2, unchanged: 6, delete: 0 });
      assert.deepEqual(
        diff.changes.map((c: any) => [c.section, c.name, c.action, c.fields]),
        [
          ['providers', 'local', 'update', ['text_model']],
          ['providers', 'main', 'unchanged', []],
          ['prompts', 'greeting', 'update', ['active_version', 'versions']],
          ['prompts', 'policy', 'unchanged', []],
          ['prompts', 'new-one', 'create', []],
          ['tool_servers', 'catalog', 'unchanged', []],
          ['tool_routing', 'realm', 'unchanged', []],
          ['flow_routing', 'realm', 'unchanged', []],
          ['governance', 'realm', 'unchanged', []],
        ],
      );
      assert.deepEqual(ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token })).bundle, bundle);
      const applied = ok(
        await engine.call('POST', `${BASE}/deploy`, { token: engine.a.token, body: { bundle: edited } }),
      );
      assert.equal(applied.applied, true);
      const after = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token })).bundle;
      assert.equal(after.prompts.find((p: any) => p.key === 'greeting').active_version, 3);
      assert.equal(after.providers.find((p: any) => p.name === 'local').text_model, 'llama-3');
      // Versions the bundle leaves out are kept (history pinned to executions): the old bundle still deploys.
      const older = ok(
        await engine.call('POST', `${BASE}/deploy`, { token: engine.a.token, body: { bundle, dry_run: true } }),
      );
      assert.deepEqual(
        older.changes.filter((c: any) => c.action !== 'unchanged').map((c: any) => [c.name, c.fields]),
        [
          ['local', ['text_model']],
          ['greeting', ['active_version']],
        ],
      );
    });

    test('a failed deploy leaves nothing behind: a later item fails after earlier ones were written', async () => {
      const engine = await shared.fresh();
      await configure(engine, engine.a.token);
      const before = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token })).bundle;
      const bundle = structuredClone(before);
      bundle.providers.push({ ...bundle.providers[0], name: 'added-first', is_default: false });
      bundle.providers[0].text_model = 'changed';
      // Version 1 of greeting has been active: its template cannot change (prompts come after providers).
      bundle.prompts[0].versions[0].content = 'Rewritten {{ name }}';
      const failed = await engine.call('POST', `${BASE}/deploy`, {
        token: engine.a.token,
        body: { bundle, credentials },
      });
      assert.equal(failed.status, 409, JSON.stringify(failed.body));
      assert.equal(failed.body.error.code, 'RUNTIME_PROMPT_VERSION_IMMUTABLE');
      assert.deepEqual(ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token })).bundle, before);
      const providers = ok(await engine.call('GET', '/api/v1/runtime/providers', { token: engine.a.token }));
      assert.equal(providers.data.length, 2, 'the provider written before the failure was rolled back');

      // An invalid item (a base URL the SSRF policy refuses) is a 400 naming the item; nothing is written.
      const bad = structuredClone(before);
      bad.prompts.push({
        key: 'extra',
        active_version: null,
        versions: [{ version: 1, name: 'E', content: 'e', variables: [] }],
      });
      bad.tool_servers[0].url = 'file:///etc/passwd';
      const invalid = await engine.call('POST', `${BASE}/deploy`, { token: engine.a.token, body: { bundle: bad } });
      assert.equal(invalid.status, 400);
      assert.match(invalid.body.error.message, /^tool_servers\/catalog: /);
      assert.deepEqual(ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token })).bundle, before);
    });

    test('prune: items a section does not name are deleted; one still in use is a 409 and nothing changes', async () => {
      const engine = await shared.fresh();
      await configure(engine, engine.a.token);
      const before = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token })).bundle;
      const slim = {
        format: before.format,
        providers: before.providers.filter((p: any) => p.name === 'main'),
        prompts: before.prompts.filter((p: any) => p.key === 'greeting'),
      };
      const deploy = (body: Record<string, unknown>) =>
        engine.call('POST', `${BASE}/deploy`, {
          token: engine.a.token,
          body: { bundle: slim, credentials: { 'providers/main': PROVIDER_KEY }, ...body },
        });
      const kept = ok(await deploy({}));
      assert.equal(kept.summary.delete, 0, 'without prune nothing is deleted');
      const preview = ok(await deploy({ prune: true, dry_run: true }));
      assert.deepEqual(
        preview.changes.filter((c: any) => c.action === 'delete').map((c: any) => `${c.section}/${c.name}`),
        ['providers/local', 'prompts/policy'],
        'tool_servers is left out of the bundle: untouched',
      );
      // An agent runs the provider "local": pruning it is refused, and the whole deploy writes nothing.
      const agent = ok(
        await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
          token: engine.a.token,
          body: { username: `prune-agent-${Math.random().toString(36).slice(2, 8)}` },
        }),
        201,
      );
      const providers = ok(await engine.call('GET', '/api/v1/runtime/providers', { token: engine.a.token }));
      const local = providers.data.find((p: any) => p.name === 'local');
      ok(
        await engine.call('PUT', `/api/v1/runtime/agents/${agent.identity.id}/config`, {
          token: engine.a.token,
          body: { ai_provider_id: local.id },
        }),
      );
      const refused = await deploy({
        prune: true,
        bundle: { ...slim, providers: [{ ...slim.providers[0], text_model: 'x' }] },
      });
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'RUNTIME_IN_USE');
      assert.match(refused.body.error.message, /^providers\/local is used by 1 agent/);
      const unchanged = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token })).bundle;
      assert.deepEqual(firstSections(unchanged), firstSections(before));
      // Without the agent's provider the prune goes through.
      ok(
        await engine.call('PUT', `/api/v1/runtime/agents/${agent.identity.id}/config`, {
          token: engine.a.token,
          body: {},
        }),
      );
      const pruned = ok(await deploy({ prune: true }));
      assert.equal(pruned.summary.delete, 2);
      const after = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token })).bundle;
      assert.deepEqual(firstSections(after), { ...slim, tool_servers: before.tool_servers });
    });

    test('bad bundles are one readable 400', async () => {
      const engine = await shared.fresh();
      await configure(engine, engine.a.token);
      const { bundle } = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token }));
      const deploy = (body: unknown) => engine.call('POST', `${BASE}/deploy`, { token: engine.a.token, body });
      const cases: Array<[unknown, RegExp]> = [
        [{ bundle: { ...bundle, format: 'keel.engine.config/v0' } }, /format/],
        [{ bundle: { ...bundle, providers: [bundle.providers[0], bundle.providers[0]] } }, /appears twice/],
        [{ bundle, credentials: { 'providers/local': 'x' } }, /no bundle item that needs a credential/],
        [
          { bundle: { ...bundle, providers: bundle.providers.map((p: any) => ({ ...p, is_default: true })) } },
          /default/,
        ],
        [
          { bundle: { ...bundle, prompts: [{ ...bundle.prompts[0], active_version: 9 }] } },
          /prompts\/greeting: active_version/,
        ],
        [
          {
            bundle: {
              ...bundle,
              prompts: [
                {
                  key: 'p',
                  active_version: null,
                  versions: [{ version: 1, name: 'p', content: '{{ x }}', variables: [] }],
                },
              ],
            },
          },
          /prompts\/p: /,
        ],
      ];
      for (const [body, message] of cases) {
        const reply = await deploy(body);
        assert.equal(reply.status, 400, JSON.stringify(reply.body));
        assert.match(reply.body.error.message, message);
      }
    });

    test('roles: any role reads the schema and the export and dry-runs; deploy needs developer+', async () => {
      const engine = await shared.fresh();
      await configure(engine, engine.a.token);
      const viewer = await roleToken(engine, 'viewer');
      const operator = await roleToken(engine, 'operator');
      const developer = await roleToken(engine, 'developer');
      const schema = ok(await engine.call('GET', `${BASE}/schema`, { token: viewer }));
      assert.equal(schema['x-keel-format'], 'keel.engine.config/v1');
      assert.deepEqual(schema.properties.format, { const: 'keel.engine.config/v1', type: 'string' });
      const { bundle } = ok(await engine.call('GET', `${BASE}/export`, { token: viewer }));
      ok(await engine.call('POST', `${BASE}/deploy`, { token: viewer, body: { bundle, dry_run: true } }));
      const probe = await engine.call('POST', `${BASE}/deploy`, {
        token: viewer,
        body: { bundle, dry_run: true, credentials: { 'providers/main': 'a-guess' } },
      });
      assert.equal(probe.status, 403, 'a reader cannot test secret guesses against the stored ones');
      for (const token of [viewer, operator]) {
        const denied = await engine.call('POST', `${BASE}/deploy`, { token, body: { bundle } });
        assert.equal(denied.status, 403);
        assert.equal(denied.body.error.code, 'RUNTIME_FORBIDDEN');
      }
      ok(await engine.call('POST', `${BASE}/deploy`, { token: developer, body: { bundle } }));
      for (const path of ['schema', 'export']) assert.equal((await engine.call('GET', `${BASE}/${path}`)).status, 401);
    });

    test('realms are isolated: export shows only the own realm, deploy touches only it; Idempotency-Key replays', async () => {
      const engine = await shared.fresh();
      await configure(engine, engine.a.token);
      const emptyB = ok(await engine.call('GET', `${BASE}/export`, { token: engine.b.token })).bundle;
      assert.deepEqual(emptyB, {
        format: 'keel.engine.config/v1',
        providers: [],
        prompts: [],
        tool_servers: [],
        flows: [],
        agents: [],
        flow_triggers: [],
        tool_routing: { rules: [] },
        flow_routing: { mode: 'automatic', compatibility_fallback: true, fallback_flow: null, canary_percentage: 0 },
        governance: { policy: null, quota: null },
        runtime_webhooks: [],
        integration_clients: [],
      });
      const { bundle } = ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token }));
      const edited = structuredClone(bundle);
      edited.providers[0].text_model = 'only-in-b';
      const headers = { 'idempotency-key': `deploy-${Math.random()}` };
      const first = await engine.call('POST', `${BASE}/deploy`, {
        token: engine.b.token,
        body: { bundle: edited },
        headers,
      });
      assert.equal(ok(first).summary.create, 5, 'same names in B are new items of B');
      const replay = await engine.call('POST', `${BASE}/deploy`, {
        token: engine.b.token,
        body: { bundle: edited },
        headers,
      });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, first.body);
      assert.deepEqual(ok(await engine.call('GET', `${BASE}/export`, { token: engine.a.token })).bundle, bundle);
    });
  });
}
