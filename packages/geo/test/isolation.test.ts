import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildGeo, call, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`cross-tenant isolation (${target.dialect})`, () => {
    test("every key-authenticated route denies another tenant's workspace exactly like a non-existent one", async (t) => {
      const { app, a, b } = await buildGeo(t, target);
      const UNKNOWN = '0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77';
      const FAKE_ID = '0195f3a2-7c1e-7d4b-9a61-000000000001';
      const routes = (ws: string): [string, string, unknown?, Record<string, string>?][] => [
        ['GET', `/api/v1/geo/analytics?workspaceId=${ws}&dataset=metrics`],
        [
          'POST',
          '/api/v1/geo/signals',
          { workspaceId: ws, records: [{ dataset: 'alerts', definitionVersion: 'v', data: {} }] },
          { 'idempotency-key': `iso-${ws}` },
        ],
        ['POST', '/api/v1/geo/actions', { workspaceId: ws, title: 't', kind: 'k' }],
        ['GET', `/api/v1/geo/actions/${FAKE_ID}?workspaceId=${ws}`],
        ['POST', `/api/v1/geo/actions/${FAKE_ID}/request-approval`, { workspaceId: ws }],
        ['POST', `/api/v1/geo/actions/${FAKE_ID}/approve`, { workspaceId: ws }],
        ['POST', `/api/v1/geo/actions/${FAKE_ID}/reject`, { workspaceId: ws }],
        ['POST', `/api/v1/geo/actions/${FAKE_ID}/execute`, { workspaceId: ws }],
        ['GET', `/api/v1/geo/target-graph?workspaceId=${ws}`],
        [
          'POST',
          '/api/v1/geo/target-graph',
          { operation: 'import', workspaceId: ws, targets: [], relations: [] },
          { 'idempotency-key': `iso-g-${ws}` },
        ],
        ['GET', `/api/v1/geo/privacy?workspaceId=${ws}`],
        ['POST', '/api/v1/geo/privacy', { workspaceId: ws, type: 'access', subject: 's' }],
        ['GET', `/api/v1/geo/exports?workspaceId=${ws}`],
        ['POST', '/api/v1/geo/exports', { workspaceId: ws, source: 'dataset', dataset: 'metrics', format: 'csv' }],
        ['POST', `/api/v1/geo/dashboards/${FAKE_ID}/shares`, { workspaceId: ws }],
        ['GET', `/api/v1/geo/dashboards/${FAKE_ID}/shares?workspaceId=${ws}`],
        ['DELETE', `/api/v1/geo/dashboards/${FAKE_ID}/shares/${FAKE_ID}?workspaceId=${ws}`],
        ['POST', '/api/v1/geo/site-tokens', { workspaceId: ws, name: 'x' }],
      ];
      const foreign = routes(a.workspaceId);
      const unknown = routes(UNKNOWN);
      for (let i = 0; i < foreign.length; i++) {
        const [method, url, body, headers] = foreign[i]!;
        const answer = await call(app, method as 'GET', url, { key: b.keys.admin, body, headers });
        const [m2, u2, b2, h2] = unknown[i]!;
        const missing = await call(app, m2 as 'GET', u2, { key: b.keys.admin, body: b2, headers: h2 });
        assert.equal(answer.status, 403, `${method} ${url}`);
        assert.equal(answer.body.error.code, 'GEO_WORKSPACE_DENIED', `${method} ${url}`);
        assert.deepEqual(
          { ...answer.body.error, traceId: '' },
          { ...missing.body.error, traceId: '' },
          `${method} ${url}: same as a missing workspace`,
        );
      }
      const tool = await call(app, 'POST', '/api/v1/geo/mcp', {
        key: b.keys.admin,
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'geo_list_metrics', arguments: { workspaceId: a.workspaceId, limit: 25 } },
        },
        headers: { accept: 'application/json, text/event-stream' },
      });
      assert.equal(tool.status, 403);
      assert.equal(tool.body.error.code, -32003);
      // Nothing was written into tenant A's workspaces.
      const page = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=alerts`, {
        key: a.keys.read,
      });
      assert.deepEqual(page.body.items, []);
    });

    test('the OpenAPI description is 3.1.0, version 2026-09-20, and describes every operation of the spec', async (t) => {
      const { app } = await buildGeo(t, target);
      const doc = (await call(app, 'GET', '/openapi.json')).body;
      assert.equal(doc.openapi, '3.1.0');
      assert.equal(doc.info.version, '2026-09-20');
      for (const [path, method] of [
        ['/api/v1/geo/analytics', 'get'],
        ['/api/v1/geo/target-graph', 'get'],
        ['/api/v1/geo/target-graph', 'post'],
        ['/api/v1/geo/privacy', 'get'],
        ['/api/v1/geo/privacy', 'post'],
        ['/api/v1/geo/mcp', 'post'],
        ['/api/v1/geo/exports/{exportId}', 'get'],
        ['/api/v2/geo/events', 'post'],
      ] as const) {
        assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} is described`);
      }
      // Parameters shared by several operations are written once under components (compactOpenApi).
      const resolve = (p: any) => (p.$ref ? doc.components.parameters[p.$ref.split('/').at(-1)] : p);
      const analytics = doc.paths['/api/v1/geo/analytics'].get.parameters.map(resolve);
      const limit = analytics.find((p: any) => p.name === 'limit');
      assert.deepEqual([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [1, 500, 100]);
    });
  });
}
