import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { exampleOperations, exampleProblems, httpSender, replayExamples } from '@keel/core/testing';
import { runMeasureWorkerOnce } from '../src/measure/measure-worker.ts';
import { EXAMPLE_IDS } from '../src/openapi-examples.ts';
import { startEngineDouble } from './engine-double.ts';
import { buildGeo, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`geo /docs examples (${target.dialect})`, () => {
    test('every operation has an example that validates against its schema', async (t) => {
      const { app } = await buildGeo(t, target);
      const document = (await app.inject({ url: '/openapi.json' })).json();
      assert.deepEqual(exampleProblems(document), []);
    });

    test("every operation's example, sent as is to a running geo, succeeds", async (t) => {
      // The answer engine the example registers: a chat-completions double on 127.0.0.1.
      const double = await startEngineDouble({
        chatgpt: { default: [{ text: 'The Acme Outdoor Trailhead 2 is a light, waterproof pick; Summit Gear too.' }] },
      });
      t.after(() => double.close());
      const { app, a, ctx } = await buildGeo(t, target, { KEEL_ALLOW_PRIVATE_URLS: 'true' });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const send = httpSender(base);
      const key = a.keys.admin;
      const authorized = { authorization: `Bearer ${key}` };
      const document = (await send({ method: 'GET', url: '/openapi.json', headers: {} })).body;
      const ids = new Map<string, string>([
        [EXAMPLE_IDS.workspace, a.workspaceId],
        [EXAMPLE_IDS.engineBaseUrl, double.baseUrl('chatgpt')],
      ]);
      const api = async (method: string, url: string, body?: unknown) => {
        const answer = await send({
          method,
          url,
          headers: { ...authorized, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        assert.ok(answer.status < 300, `${method} ${url}: ${answer.status} ${JSON.stringify(answer.body)}`);
        return answer.body;
      };
      /** A run of the example engine, measured to completion. */
      const completedRun = async () => {
        const run = await api('POST', '/api/v1/geo/runs', {
          workspaceId: a.workspaceId,
          engineIds: [ids.get(EXAMPLE_IDS.engine)],
          samples: 2,
        });
        while ((await runMeasureWorkerOnce(ctx, 'replay')) > 0);
        return run.id as string;
      };
      const results = await replayExamples({
        document,
        ids,
        send,
        headers: () => authorized,
        // Credentials and the engine first, then what refers to them; the rest in document order.
        first: [
          'POST /api/v1/geo/signals',
          'POST /api/v1/geo/site-tokens',
          'POST /api/v1/geo/keys',
          'POST /api/v1/geo/engines',
          'POST /api/v1/geo/prompts',
          'POST /api/v1/geo/runs',
          'POST /api/v1/geo/actions',
          'POST /api/v1/geo/exports',
          'POST /api/v1/geo/dashboards/{dashboardId}/shares',
        ],
        // Rejecting needs an action under review: a second one, after the first was approved and executed.
        last: ['POST /api/v1/geo/actions/{actionId}/reject'],
        after: {
          'POST /api/v1/geo/site-tokens': (body, map) => {
            map.set(EXAMPLE_IDS.siteTokenId, body.id);
            map.set(EXAMPLE_IDS.siteToken, body.token);
          },
          'POST /api/v1/geo/keys': (body, map) => void map.set(EXAMPLE_IDS.key, body.id),
          'POST /api/v1/geo/engines': (body, map) => void map.set(EXAMPLE_IDS.engine, body.id),
          'POST /api/v1/geo/prompts': (body, map) => void map.set(EXAMPLE_IDS.prompt, body.ids[0]),
          'POST /api/v1/geo/runs': async (body, map) => {
            map.set(EXAMPLE_IDS.run, body.id);
            while ((await runMeasureWorkerOnce(ctx, 'replay')) > 0);
            const answers = await api('GET', `/api/v1/geo/runs/${body.id}/answers?workspaceId=${a.workspaceId}`);
            map.set(EXAMPLE_IDS.answer, answers.items[0].id);
          },
          'POST /api/v1/geo/actions': (body, map) => void map.set(EXAMPLE_IDS.action, body.id),
          'POST /api/v1/geo/exports': (body, map) => void map.set(EXAMPLE_IDS.export, body.id),
          'POST /api/v1/geo/dashboards/{dashboardId}/shares': (body, map) => {
            map.set(EXAMPLE_IDS.share, body.id);
            map.set(EXAMPLE_IDS.shareToken, body.token);
          },
          'POST /api/v1/geo/schedules': (body, map) => void map.set(EXAMPLE_IDS.schedule, body.id),
          'POST /api/v1/geo/saved-views': (body, map) => void map.set(EXAMPLE_IDS.view, body.id),
        },
        before: {
          'POST /api/v1/geo/experiments': async (map) => void map.set(EXAMPLE_IDS.treatmentRun, await completedRun()),
          'POST /api/v1/geo/actions/{actionId}/reject': async (map) => {
            const action = await api('POST', '/api/v1/geo/actions', {
              workspaceId: a.workspaceId,
              title: 'Rename the Trailhead 2 page title',
              kind: 'content_update',
            });
            await api('POST', `/api/v1/geo/actions/${action.id}/request-approval`, { workspaceId: a.workspaceId });
            map.set(EXAMPLE_IDS.action, action.id);
          },
        },
      });
      assert.equal(results.length, exampleOperations(document).length, 'nothing excluded');
      const shared = results.find((result) => result.key === 'GET /api/v1/geo/shared-dashboard')!.body as any;
      assert.equal(shared.dashboard.title, 'Weekly AI visibility');
    });
  });
}
