import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { buildGeo, call, testDatabaseTargets } from './helper.ts';

async function connect(t: TestContext, url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'geo-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  t.after(() => client.close());
  return client;
}

const READ_TOOLS = [
  'geo_get_report',
  'geo_get_target_graph',
  'geo_list_actions',
  'geo_list_content',
  'geo_list_experiments',
  'geo_list_metrics',
  'geo_list_recommendations',
];

for (const target of testDatabaseTargets()) {
  describe(`MCP tool endpoint (${target.dialect})`, () => {
    async function setup(t: TestContext) {
      const geo = await buildGeo(t, target);
      const { app, a } = geo;
      const signals = await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.admin,
        headers: { 'idempotency-key': 'seed' },
        body: {
          workspaceId: a.workspaceId,
          records: [
            {
              dataset: 'metrics',
              definitionVersion: 'ai-visibility/3',
              runId: 'run-1',
              data: { metric: 'ai_visibility', value: 0.42 },
              confidence: { value: 0.42, interval: [0.38, 0.46] },
              evidence: [{ type: 'query', ref: 'best running shoes' }],
            },
            {
              dataset: 'recommendations',
              definitionVersion: 'rec/1',
              data: { text: 'Add FAQ schema' },
              evidence: [{ type: 'metric', ref: 'ai_visibility' }],
            },
            { dataset: 'content', definitionVersion: 'content/1', data: { title: 'FAQ' } },
            { dataset: 'experiments', definitionVersion: 'exp/1', mode: 'observed', data: { name: 'A/B title' } },
            { dataset: 'experiments', definitionVersion: 'exp/1', mode: 'simulated', data: { name: 'What-if schema' } },
            { dataset: 'reports', definitionVersion: 'weekly/2', runId: 'r-7', data: { title: 'Week 47' } },
          ],
        },
      });
      assert.equal(signals.status, 201);
      const action = await call(app, 'POST', '/api/v1/geo/actions', {
        key: a.keys.admin,
        body: { workspaceId: a.workspaceId, title: 'Add FAQ schema', kind: 'update_schema_markup' },
      });
      assert.equal(action.status, 201);
      await app.listen({ host: '127.0.0.1', port: 0 });
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1/geo/mcp`;
      return { ...geo, url, actionId: action.body.id as string };
    }

    test('initialize → tools/list → tools/call with the SDK Client; tools/list shows only what the key may call', async (t) => {
      const { url, a } = await setup(t);
      const reader = await connect(t, url, a.keys.read);
      assert.equal(reader.getServerVersion()?.version, '2026-09-20');
      assert.deepEqual((await reader.listTools()).tools.map((x) => x.name).sort(), READ_TOOLS);
      const writer = await connect(t, url, a.keys.write);
      const tools = (await writer.listTools()).tools;
      assert.deepEqual(tools.map((x) => x.name).sort(), [...READ_TOOLS, 'geo_request_action_approval'].sort());
      for (const tool of tools) assert.equal(tool.inputSchema.type, 'object', `${tool.name} has an input schema`);
      const signalsOnly = await connect(t, url, a.keys.signals);
      assert.deepEqual((await signalsOnly.listTools()).tools, []);

      const metrics = await reader.callTool({
        name: 'geo_list_metrics',
        arguments: { workspaceId: a.workspaceId, limit: 25 },
      });
      const metric = (metrics.structuredContent as any).items[0];
      assert.deepEqual(metric.confidence, { value: 0.42, interval: [0.38, 0.46] });
      assert.equal(metric.version.definitionVersion, 'ai-visibility/3');
      assert.equal(metric.evidence[0].ref, 'best running shoes');
      const recs = await reader.callTool({
        name: 'geo_list_recommendations',
        arguments: { workspaceId: a.workspaceId },
      });
      assert.equal((recs.structuredContent as any).items[0].evidence.length, 1);
      const experiments = await reader.callTool({
        name: 'geo_list_experiments',
        arguments: { workspaceId: a.workspaceId },
      });
      assert.deepEqual(
        (experiments.structuredContent as any).observed.map((e: any) => e.data.name),
        ['A/B title'],
      );
      assert.deepEqual(
        (experiments.structuredContent as any).simulated.map((e: any) => e.data.name),
        ['What-if schema'],
      );
      const content = await reader.callTool({ name: 'geo_list_content', arguments: { workspaceId: a.workspaceId } });
      assert.equal((content.structuredContent as any).items[0].status, 'draft');
      const report = await reader.callTool({ name: 'geo_get_report', arguments: { workspaceId: a.workspaceId } });
      assert.equal((report.structuredContent as any).report.version.runId, 'r-7');
      const graph = await reader.callTool({ name: 'geo_get_target_graph', arguments: { workspaceId: a.workspaceId } });
      assert.deepEqual((graph.structuredContent as any).targets, []);
      const actions = await reader.callTool({ name: 'geo_list_actions', arguments: { workspaceId: a.workspaceId } });
      assert.equal((actions.structuredContent as any).items[0].approvalState, 'proposed');
    });

    test('geo_request_action_approval only moves a proposed action into approval review', async (t) => {
      const { url, a, app, actionId } = await setup(t);
      const writer = await connect(t, url, a.keys.write);
      const moved = await writer.callTool({
        name: 'geo_request_action_approval',
        arguments: { workspaceId: a.workspaceId, actionId, note: 'please review' },
      });
      assert.equal(moved.isError, undefined);
      assert.equal((moved.structuredContent as any).action.status, 'approval_review');
      const again = await writer.callTool({
        name: 'geo_request_action_approval',
        arguments: { workspaceId: a.workspaceId, actionId },
      });
      assert.equal(again.isError, true, 'not proposed any more: a business failure');
      assert.match(JSON.stringify(again.content), /GEO_ACTION_INVALID_STATE/);
      const read = await call(app, 'GET', `/api/v1/geo/actions/${actionId}?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(read.body.status, 'approval_review', 'not executed, not approved');
      assert.deepEqual(
        read.body.transitions.map((x: any) => [x.from, x.to, x.via]),
        [['proposed', 'approval_review', 'mcp']],
      );
    });

    test('permission and workspace failures are JSON-RPC errors with HTTP 403; bad arguments are isError results', async (t) => {
      const { url, a, b, app, actionId } = await setup(t);
      const rpc = (key: string, name: string, args: unknown) =>
        call(app, 'POST', '/api/v1/geo/mcp', {
          key,
          body: { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name, arguments: args } },
          headers: { accept: 'application/json, text/event-stream' },
        });
      const noWrite = await rpc(a.keys.read, 'geo_request_action_approval', { workspaceId: a.workspaceId, actionId });
      assert.equal(noWrite.status, 403);
      assert.equal(noWrite.body.error.code, -32003);
      assert.match(noWrite.body.error.message, /geo:write/);
      const otherTenant = await rpc(b.keys.read, 'geo_list_metrics', { workspaceId: a.workspaceId, limit: 25 });
      const unknownWs = await rpc(b.keys.read, 'geo_list_metrics', {
        workspaceId: '0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77',
        limit: 25,
      });
      assert.equal(otherTenant.status, 403);
      assert.equal(otherTenant.body.error.code, -32003);
      assert.deepEqual(
        otherTenant.body.error.message,
        unknownWs.body.error.message,
        'same answer as a missing workspace',
      );
      const noKey = await call(app, 'POST', '/api/v1/geo/mcp', {
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      assert.equal(noKey.status, 401);
      assert.equal(noKey.body.error.code, -32001);

      const reader = await connect(t, url, a.keys.read);
      const tooMany = await reader.callTool({
        name: 'geo_list_metrics',
        arguments: { workspaceId: a.workspaceId, limit: 101 },
      });
      assert.equal(tooMany.isError, true);
      const missing = await reader.callTool({ name: 'geo_list_metrics', arguments: { limit: 5 } });
      assert.equal(missing.isError, true);
      await assert.rejects(
        reader.callTool({ name: 'geo_delete_everything', arguments: {} }),
        (e: { code?: number }) => e.code === -32602,
      );
    });
  });
}
