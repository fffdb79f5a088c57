import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { renderPrompt, templateProblems } from '../src/prompts/render.ts';
import { costPicos, picosText, priceText } from '../src/providers/pricing.ts';
import { buildRuntime, sharedRuntime, startUpstream, testDatabaseTargets } from './runtime-helper.ts';

const API_KEY = 'sk-provider-secret-DO-NOT-LEAK-0123456789';

describe('prompt rendering and pricing (pure)', () => {
  test('placeholders render in one pass: values cannot inject placeholders, control characters go, values are cut', () => {
    const out = renderPrompt('Hi {{ name }} from {{shop}}; {{ missing }}.', {
      name: 'Eve {{shop}}\u0000\u202e',
      shop: 'x'.repeat(3000),
    });
    assert.equal(out, `Hi Eve { {shop} } from ${'x'.repeat(2000)}; .`);
    assert.deepEqual(templateProblems('{{ a }} {{b}}', ['a']), ['{{b}} is used but not declared in variables']);
    assert.deepEqual(templateProblems('{{ a-b }}', ['a']), ['{{ a-b }} is not a valid placeholder']);
    assert.deepEqual(templateProblems('{ {not} }', []), []);
  });

  test('prices are exact decimals; costs are exact in pico-units', () => {
    assert.equal(priceText(0.15, 'p'), '0.15');
    assert.throws(() => priceText(0.1 + 0.2, 'p'), /at most 6 decimals/);
    assert.throws(() => priceText(0.0000001, 'p'));
    assert.equal(
      picosText(costPicos({ input: '0.15', output: '0.6', image: '0' }, { inputTokens: 1, outputTokens: 1 })),
      '0.00000075',
    );
    assert.equal(
      picosText(
        costPicos({ input: '3', output: '15', image: '0.04' }, { inputTokens: 1000, outputTokens: 500, images: 2 }),
      ),
      '0.0905',
    );
  });
});

for (const target of testDatabaseTargets()) {
  describe(`runtime providers and prompts (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('templates by type', async () => {
      const engine = await shared.fresh();
      const list = await engine.call('GET', '/api/v1/runtime/providers/templates', { token: engine.a.token });
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.data.map((t: { type: string }) => t.type),
        ['openai_compatible', 'bedrock'],
      );
      const one = await engine.call('GET', '/api/v1/runtime/providers/templates/bedrock', { token: engine.a.token });
      assert.equal(one.status, 200);
      assert.equal(one.body.api_key, 'unsupported');
      assert.equal(one.body.settings.region.required, true);
      const unknown = await engine.call('GET', '/api/v1/runtime/providers/templates/nope', { token: engine.a.token });
      assert.equal(unknown.status, 404);
    });

    test('the api key is write-only: encrypted at rest, never returned, never logged, sent only upstream', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t, () => ({ content: 'ok' }));
      const created = await engine.call('POST', '/api/v1/runtime/providers', {
        token: engine.a.token,
        body: {
          type: 'openai_compatible',
          name: 'primary',
          base_url: `${upstream.url}/`,
          api_key: API_KEY,
          text_model: 'gpt-test',
          input_price_per_million: 0.15,
          output_price_per_million: 0.6,
          settings: { temperature: 0.2, max_tokens: 256 },
          is_default: true,
        },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.api_key_set, true);
      assert.equal(created.body.base_url, upstream.url, 'trailing slash trimmed');
      assert.equal(created.body.input_price_per_million, 0.15);
      const id = created.body.id;
      const read = await engine.call('GET', `/api/v1/runtime/providers/${id}`, { token: engine.a.token });
      const list = await engine.call('GET', '/api/v1/runtime/providers', { token: engine.a.token });
      const put = await engine.call('PUT', `/api/v1/runtime/providers/${id}`, {
        token: engine.a.token,
        body: {
          type: 'openai_compatible',
          name: 'primary',
          base_url: upstream.url,
          text_model: 'gpt-test-2',
          is_default: true,
          settings: { temperature: 0.2, max_tokens: 256 },
        },
      });
      assert.equal(put.status, 200);
      assert.equal(put.body.api_key_set, true, 'an omitted api_key is kept');
      assert.equal(put.body.text_model, 'gpt-test-2');
      for (const reply of [created, read, list, put]) assert.ok(!JSON.stringify(reply.body).includes(API_KEY));
      const row = await engine.runtime.db
        .selectFrom('ai_provider')
        .select('api_key_sealed')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.ok(row.api_key_sealed?.startsWith('v1.'));
      assert.ok(!row.api_key_sealed!.includes(API_KEY));
      // The key goes upstream, and only there.
      const agent = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token: engine.a.token,
        body: { username: 'a1' },
      });
      await engine.call('PUT', `/api/v1/runtime/agents/${agent.body.identity.id}/config`, {
        token: engine.a.token,
        body: {},
      });
      const chat = await engine.call('POST', '/api/v1/runtime/ai/chat', {
        token: engine.a.token,
        body: { agent_id: agent.body.identity.id, messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(chat.status, 200, JSON.stringify(chat.body));
      assert.equal(upstream.calls[0]!.headers.authorization, `Bearer ${API_KEY}`);
      assert.equal(upstream.calls[0]!.body.temperature, 0.2);
      assert.equal(upstream.calls[0]!.body.max_tokens, 256);
      assert.ok(!JSON.stringify(chat.body).includes(API_KEY));
      const cleared = await engine.call('PUT', `/api/v1/runtime/providers/${id}`, {
        token: engine.a.token,
        body: { type: 'openai_compatible', name: 'primary', base_url: upstream.url, text_model: 'm', api_key: null },
      });
      assert.equal(cleared.body.api_key_set, false);
      assert.ok(!engine.logs().includes(API_KEY), 'never logged');
    });

    test('capability, template, price and URL rules', async () => {
      const engine = await shared.fresh();
      const base = { type: 'openai_compatible', name: 'p', base_url: 'http://127.0.0.1:9/v1', text_model: 'm' };
      const cases: [Record<string, unknown>, number][] = [
        [{ ...base, supports_text: false }, 400],
        [{ ...base, text_model: undefined }, 400],
        [{ ...base, supports_image: true }, 400],
        [{ ...base, supports_text: false, supports_image: true, image_model: 'img-1', name: 'images' }, 201],
        [{ type: 'bedrock', name: 'b1', text_model: 'anthropic.x' }, 400],
        [
          {
            type: 'bedrock',
            name: 'b2',
            text_model: 'anthropic.x',
            settings: { region: 'eu-central-1' },
            api_key: 'k',
          },
          400,
        ],
        [
          {
            type: 'bedrock',
            name: 'b3',
            text_model: 'anthropic.x',
            settings: { region: 'eu-central-1' },
            supports_image: true,
            image_model: 'i',
          },
          400,
        ],
        [{ type: 'bedrock', name: 'b4', text_model: 'anthropic.x', settings: { region: 'eu-central-1' } }, 201],
        [{ ...base, type: 'anthropic' }, 400],
        [{ ...base, input_price_per_million: 0.1 + 0.2 }, 400],
        [{ ...base, output_price_per_million: -1 }, 400],
        [{ ...base, settings: { temperature: 3 } }, 400],
        [{ ...base, settings: { max_tokens: 1.5 } }, 400],
        [{ ...base, settings: { unknown_knob: 1 } }, 400],
        [{ ...base, base_url: 'ftp://example.com' }, 400],
        [{ ...base, base_url: 'not a url' }, 400],
        [{ ...base, currency: 'EURO' }, 400],
        [{ ...base, realm_id: engine.b.realmId }, 403],
      ];
      for (const [body, status] of cases) {
        const reply = await engine.call('POST', '/api/v1/runtime/providers', { token: engine.a.token, body });
        assert.equal(reply.status, status, `${JSON.stringify(body)} → ${JSON.stringify(reply.body)}`);
      }
      const first = await engine.call('POST', '/api/v1/runtime/providers', {
        token: engine.a.token,
        body: { ...base, name: 'dup' },
      });
      assert.equal(first.status, 201);
      const dup = await engine.call('POST', '/api/v1/runtime/providers', {
        token: engine.a.token,
        body: { ...base, name: 'dup' },
      });
      assert.equal(dup.status, 409);
      const defaultOnce = await engine.call('POST', '/api/v1/runtime/providers', {
        token: engine.a.token,
        body: { ...base, name: 'd1', is_default: true },
      });
      const defaultTwice = await engine.call('POST', '/api/v1/runtime/providers', {
        token: engine.a.token,
        body: { ...base, name: 'd2', is_default: true },
      });
      const d1 = await engine.call('GET', `/api/v1/runtime/providers/${defaultOnce.body.id}`, {
        token: engine.a.token,
      });
      assert.equal(d1.body.is_default, false, 'one default per realm');
      assert.equal(defaultTwice.body.is_default, true);
    });

    test('the SSRF rules apply to base URLs unless the development switch is on', async (t) => {
      const engine = await buildRuntime(t, target, { env: { KEEL_ALLOW_PRIVATE_URLS: 'false' } });
      for (const url of [
        'http://api.example.com/v1',
        'https://127.0.0.1/v1',
        'https://10.1.2.3/v1',
        'https://[::1]/v1',
        'https://169.254.169.254/latest',
        'https://localhost/v1',
        'https://user:pw@api.example.com/v1',
        'https://intranet/v1',
      ]) {
        const reply = await engine.call('POST', '/api/v1/runtime/providers', {
          token: engine.a.token,
          body: { type: 'openai_compatible', name: 'x', base_url: url, text_model: 'm' },
        });
        assert.equal(reply.status, 400, url);
        assert.equal(reply.body.error.code, 'OUTBOUND_URL_REJECTED');
      }
    });

    test('toggle, list filters, delete only when unused, realm isolation on every provider route', async () => {
      const engine = await shared.fresh();
      const body = { type: 'openai_compatible', name: 'p1', base_url: 'http://127.0.0.1:9/v1', text_model: 'm' };
      const created = await engine.call('POST', '/api/v1/runtime/providers', { token: engine.a.token, body });
      const id = created.body.id;
      const off = await engine.call('PATCH', `/api/v1/runtime/providers/${id}/toggle`, {
        token: engine.a.token,
        body: {},
      });
      assert.equal(off.body.is_active, false);
      const on = await engine.call('PATCH', `/api/v1/runtime/providers/${id}/toggle`, {
        token: engine.a.token,
        body: { is_active: true },
      });
      assert.equal(on.body.is_active, true);
      const active = await engine.call('GET', '/api/v1/runtime/providers?is_active=true&limit=1', {
        token: engine.a.token,
      });
      assert.equal(active.body.data.length, 1);
      for (const [method, path, payload] of [
        ['GET', `/api/v1/runtime/providers/${id}`, undefined],
        ['PUT', `/api/v1/runtime/providers/${id}`, body],
        ['DELETE', `/api/v1/runtime/providers/${id}`, undefined],
        ['PATCH', `/api/v1/runtime/providers/${id}/toggle`, {}],
      ] as const) {
        const reply = await engine.call(method, path, { token: engine.b.token, ...(payload ? { body: payload } : {}) });
        assert.equal(reply.status, 404, `${method} ${path}`);
      }
      const listB = await engine.call('GET', '/api/v1/runtime/providers', { token: engine.b.token });
      assert.equal(listB.body.data.length, 0);
      const agent = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token: engine.a.token,
        body: { username: 'u1' },
      });
      await engine.call('PUT', `/api/v1/runtime/agents/${agent.body.identity.id}/config`, {
        token: engine.a.token,
        body: { ai_provider_id: id },
      });
      const inUse = await engine.call('DELETE', `/api/v1/runtime/providers/${id}`, { token: engine.a.token });
      assert.equal(inUse.status, 409);
      assert.equal(inUse.body.error.code, 'RUNTIME_IN_USE');
      await engine.call('PUT', `/api/v1/runtime/agents/${agent.body.identity.id}/config`, {
        token: engine.a.token,
        body: {},
      });
      // Now the agent relies on the realm default: a default provider is in use too.
      await engine.call('PUT', `/api/v1/runtime/providers/${id}`, {
        token: engine.a.token,
        body: { ...body, is_default: true },
      });
      const defaultInUse = await engine.call('DELETE', `/api/v1/runtime/providers/${id}`, { token: engine.a.token });
      assert.equal(defaultInUse.status, 409);
      await engine.call('PUT', `/api/v1/runtime/providers/${id}`, { token: engine.a.token, body });
      const deleted = await engine.call('DELETE', `/api/v1/runtime/providers/${id}`, { token: engine.a.token });
      assert.equal(deleted.status, 204);
      const gone = await engine.call('GET', `/api/v1/runtime/providers/${id}`, { token: engine.a.token });
      assert.equal(gone.status, 404);
    });

    test('prompts: twenty versions of one key created at once get twenty distinct numbers', async () => {
      const engine = await shared.fresh();
      const created = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          engine.call('POST', '/api/v1/runtime/prompts', {
            token: engine.a.token,
            body: { name: 'Race', key: 'race', content: `Version ${i}` },
          }),
        ),
      );
      assert.deepEqual(
        created.map((r) => r.status),
        Array(20).fill(201),
      );
      assert.deepEqual(
        created.map((r) => r.body.version as number).sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
    });

    test('prompts: versions per key, activation moves, content immutable once active, delete only when unused', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const v1 = await engine.call('POST', '/api/v1/runtime/prompts', {
        token,
        body: { name: 'Greeter', key: 'greeter', content: 'Hello {{ name }}', variables: ['name'] },
      });
      assert.equal(v1.status, 201);
      assert.equal(v1.body.version, 1);
      assert.equal(v1.body.is_active, false);
      const v2 = await engine.call('POST', '/api/v1/runtime/prompts', {
        token,
        body: { name: 'Greeter', key: 'greeter', content: 'Hi {{ name }}', variables: ['name'], is_active: true },
      });
      assert.equal(v2.body.version, 2);
      assert.equal(v2.body.is_active, true);
      const activate1 = await engine.call('POST', `/api/v1/runtime/prompts/${v1.body.id}/activate`, { token });
      assert.equal(activate1.body.is_active, true);
      const v2After = await engine.call('GET', `/api/v1/runtime/prompts/${v2.body.id}`, { token });
      assert.equal(v2After.body.is_active, false, 'one active version per key');
      const activeList = await engine.call('GET', '/api/v1/runtime/prompts?key=greeter&is_active=true', { token });
      assert.deepEqual(
        activeList.body.data.map((p: { version: number }) => p.version),
        [1],
      );
      const immutable = await engine.call('PUT', `/api/v1/runtime/prompts/${v2.body.id}`, {
        token,
        body: { name: 'Greeter', key: 'greeter', content: 'Changed {{ name }}', variables: ['name'] },
      });
      assert.equal(immutable.status, 409, 'v2 has been active');
      assert.equal(immutable.body.error.code, 'RUNTIME_PROMPT_VERSION_IMMUTABLE');
      const renamed = await engine.call('PUT', `/api/v1/runtime/prompts/${v2.body.id}`, {
        token,
        body: { name: 'Greeter v2', key: 'greeter', content: 'Hi {{ name }}', variables: ['name'] },
      });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.name, 'Greeter v2');
      const draft = await engine.call('POST', '/api/v1/runtime/prompts', {
        token,
        body: { name: 'D', key: 'draft', content: 'x' },
      });
      const editDraft = await engine.call('PUT', `/api/v1/runtime/prompts/${draft.body.id}`, {
        token,
        body: { name: 'D', key: 'draft', content: 'y {{ who }}', variables: ['who'] },
      });
      assert.equal(editDraft.status, 200);
      assert.equal(editDraft.body.content, 'y {{ who }}');
      const keyChange = await engine.call('PUT', `/api/v1/runtime/prompts/${draft.body.id}`, {
        token,
        body: { name: 'D', key: 'other', content: 'y' },
      });
      assert.equal(keyChange.status, 400);
      for (const bad of [
        { name: 'x', key: 'bad', content: 'Hi {{ undeclared }}' },
        { name: 'x', key: 'bad', content: 'Hi {{ 1x }}', variables: [] },
        { name: 'x', key: 'Bad Key', content: 'x' },
        { name: 'x', key: 'bad', content: 'x', variables: ['a', 'a'] },
        { name: 'x', key: 'bad', content: '', variables: [] },
      ]) {
        const reply = await engine.call('POST', '/api/v1/runtime/prompts', { token, body: bad });
        assert.equal(reply.status, 400, JSON.stringify(bad));
      }
      // Used by an agent: neither the referenced version nor the key's active version can go.
      const agent = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token,
        body: { username: 'g1' },
      });
      await engine.call('PUT', `/api/v1/runtime/agents/${agent.body.identity.id}/config`, {
        token,
        body: { system_prompt_id: v2.body.id },
      });
      const deleteReferenced = await engine.call('DELETE', `/api/v1/runtime/prompts/${v2.body.id}`, { token });
      assert.equal(deleteReferenced.status, 409);
      const deleteActive = await engine.call('DELETE', `/api/v1/runtime/prompts/${v1.body.id}`, { token });
      assert.equal(deleteActive.status, 409);
      const deactivate = await engine.call('PUT', `/api/v1/runtime/prompts/${v1.body.id}`, {
        token,
        body: { name: 'Greeter', key: 'greeter', content: 'Hello {{ name }}', variables: ['name'], is_active: false },
      });
      assert.equal(deactivate.status, 409);
      const deleteDraft = await engine.call('DELETE', `/api/v1/runtime/prompts/${draft.body.id}`, { token });
      assert.equal(deleteDraft.status, 204);
      for (const [method, path, payload] of [
        ['GET', `/api/v1/runtime/prompts/${v1.body.id}`, undefined],
        ['PUT', `/api/v1/runtime/prompts/${v1.body.id}`, { name: 'x', key: 'greeter', content: 'x' }],
        ['DELETE', `/api/v1/runtime/prompts/${v1.body.id}`, undefined],
        ['POST', `/api/v1/runtime/prompts/${v1.body.id}/activate`, undefined],
      ] as const) {
        const reply = await engine.call(method, path, { token: engine.b.token, ...(payload ? { body: payload } : {}) });
        assert.equal(reply.status, 404, `${method} ${path}`);
      }
      const listB = await engine.call('GET', '/api/v1/runtime/prompts', { token: engine.b.token });
      assert.equal(listB.body.data.length, 0);
    });
  });
}
