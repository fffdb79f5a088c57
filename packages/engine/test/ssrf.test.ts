import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SSRF_URLS } from '@keel/core/testing';
import { buildEngine, testDatabaseTargets } from './helper.ts';
import { buildRuntime } from './runtime-helper.ts';

const STRICT = { KEEL_ALLOW_PRIVATE_URLS: 'false' };

for (const target of testDatabaseTargets()) {
  describe(`outbound URLs refuse every embedding of a private address (${target.dialect})`, () => {
    test('a webhook destination at an IPv4-compatible, mapped, NAT64, 6to4 or Teredo address, or another IPv4 spelling, is a 400', async (t) => {
      const engine = await buildEngine(t, target, { env: STRICT });
      for (const url of SSRF_URLS) {
        const reply = await engine.call('POST', '/api/v1/catalog/webhooks/destinations', {
          body: { url, events: ['product.created'] },
        });
        assert.equal(reply.status, 400, `${url} → ${JSON.stringify(reply.body)}`);
        assert.equal(reply.body.error.code, 'OUTBOUND_URL_REJECTED', url);
      }
      const list = await engine.call('GET', '/api/v1/catalog/webhooks/destinations');
      assert.equal(list.status, 200);
      assert.equal(
        SSRF_URLS.some((url) => JSON.stringify(list.body).includes(url)),
        false,
        'nothing was stored',
      );
    });

    test('a provider base URL at https://[::127.0.0.1]/ (and the rest of the list) is a 400', async (t) => {
      const engine = await buildRuntime(t, target, { env: STRICT });
      for (const url of SSRF_URLS) {
        const reply = await engine.call('POST', '/api/v1/runtime/providers', {
          token: engine.a.token,
          body: { type: 'openai_compatible', name: 'p', base_url: url, text_model: 'm' },
        });
        assert.equal(reply.status, 400, `${url} → ${JSON.stringify(reply.body)}`);
      }
      const list = await engine.call('GET', '/api/v1/runtime/providers', { token: engine.a.token });
      assert.equal(JSON.stringify(list.body).includes('"p"'), false, 'nothing was stored');
    });
  });
}
