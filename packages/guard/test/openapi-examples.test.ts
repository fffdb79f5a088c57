import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { exampleOperations, exampleProblems, httpSender, replayExamples } from '@keel/core/testing';
import { EXAMPLE_IDS } from '../src/openapi-examples.ts';
import { buildGuard, completion, startFakeUpstream, testDatabaseTargets } from './helper.ts';

const MODELS = {
  object: 'list',
  data: [{ id: 'gpt-4o-mini', object: 'model', created: 1_721_172_741, owned_by: 'system' }],
};

for (const target of testDatabaseTargets()) {
  describe(`guard /docs examples (${target.dialect})`, () => {
    test('every operation has an example that validates against its schema', async (t) => {
      const { app } = await buildGuard(t, target);
      const document = (await app.inject({ url: '/openapi.json' })).json();
      assert.deepEqual(exampleProblems(document), []);
      const detect = exampleOperations(document).find((operation) => operation.key === 'POST /detect');
      assert.equal((detect?.body?.example as { guardrails: string[] }).guardrails[0], 'no_secrets');
    });

    test("every operation's example, sent as is to a running guard, succeeds", async (t) => {
      // The gateway's and AI scoring's upstream: a chat-completions double on 127.0.0.1.
      const upstream = await startFakeUpstream(t, (request) => ({
        body: request.url.endsWith('/models') ? MODELS : completion('Your order 4821 shipped yesterday.'),
      }));
      const { app } = await buildGuard(t, target, {
        AUTH_ENABLED: 'true',
        AUTH_TOKEN_PERMISSIONS: 'docs-reader=*',
        AI_MODEL_URL: upstream.url,
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const document = await (await fetch(`${base}/openapi.json`)).json();
      const created = (name: keyof typeof EXAMPLE_IDS) => (body: { ID: number }, ids: Map<string, string>) => {
        ids.set(EXAMPLE_IDS[name], String(body.ID));
      };
      const results = await replayExamples({
        document,
        ids: new Map(),
        headers: () => ({ authorization: 'Bearer docs-reader' }),
        send: httpSender(base),
        after: {
          'POST /patterns': created('pattern'),
          'POST /allowlist': created('allowlistItem'),
          'POST /blacklist': created('blacklistItem'),
          'POST /validators': created('validator'),
        },
      });
      const detect = results.find((result) => result.key === 'POST /detect')!.body as Record<string, unknown>;
      assert.equal(detect.contains_pii, true, 'the detect example finds the e-mail address');
      assert.equal(results.length, exampleOperations(document).length, 'nothing excluded');
      assert.ok(upstream.requests.some((request) => request.url === '/v1/chat/completions'));
    });
  });
}
