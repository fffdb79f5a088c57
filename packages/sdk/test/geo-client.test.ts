import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { createMemoryCache, createSecretBox } from '@keel/core';
import { openTestDatabase, testDatabaseTargets } from '@keel/core/testing';
import { bootstrapTenant, buildGeoApp, type GeoDb, prepareGeoDatabase, readGeoConfig } from '@keel/geo';
import { ApiError, GeoClient, ToolCallError, TransportError } from '../src/index.ts';

interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A stand-in service on 127.0.0.1 answering from a script, recording every request. */
async function fakeService(
  t: TestContext,
  answers: ({ status: number; body?: unknown; headers?: Record<string, string> } | 'hang')[],
) {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const answer = answers[Math.min(requests.length - 1, answers.length - 1)]!;
    if (answer === 'hang') return;
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(JSON.stringify(answer.body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const receipt = {
  mutationId: 'm',
  operation: 'import',
  workspaceId: 'w',
  projectId: null,
  targetsCreated: 0,
  targetsUpdated: 0,
  relationsCreated: 0,
  relationsRepointed: 0,
  merged: [],
  canonicalKey: null,
  graphVersion: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
};
const fast = { retryBaseDelayMs: 1, timeoutMs: 2000 };

describe('GeoClient retries', () => {
  test('transient failures (503, 429 with Retry-After, 500) are retried with the same Idempotency-Key', async (t) => {
    const service = await fakeService(t, [
      { status: 503 },
      { status: 429, headers: { 'retry-after': '0' } },
      { status: 500 },
      { status: 200, body: receipt },
    ]);
    const client = new GeoClient({ baseUrl: service.url, apiKey: 'geo_k', ...fast });
    const result = await client.importTargetGraph({ workspaceId: 'w', targets: [], relations: [] });
    assert.equal(result.graphVersion, 1);
    assert.equal(service.requests.length, 4);
    const keys = new Set(service.requests.map((r) => r.headers['idempotency-key']));
    assert.equal(keys.size, 1, 'one key for every attempt');
    assert.match(String([...keys][0]), /^[0-9a-f-]{36}$/);
    assert.equal(service.requests[0]!.headers.authorization, 'Bearer geo_k');
  });

  for (const status of [400, 401, 403, 404, 409, 422]) {
    test(`a ${status} is never retried`, async (t) => {
      const service = await fakeService(t, [
        { status, body: { error: { code: 'X', message: 'no', traceId: 't' } } },
        { status: 200, body: receipt },
      ]);
      const client = new GeoClient({ baseUrl: service.url, apiKey: 'k', ...fast });
      await assert.rejects(
        client.importTargetGraph({ workspaceId: 'w', targets: [], relations: [] }),
        (error: ApiError) => {
          assert.ok(error instanceof ApiError);
          assert.equal(error.status, status);
          assert.equal(error.code, 'X');
          assert.equal(error.traceId, 't');
          assert.equal(error.retryable, false);
          return true;
        },
      );
      assert.equal(service.requests.length, 1);
    });
  }

  test('a timeout is retried for reads and ends in a TransportError', async (t) => {
    const service = await fakeService(t, ['hang']);
    const client = new GeoClient({
      baseUrl: service.url,
      apiKey: 'k',
      timeoutMs: 100,
      maxRetries: 2,
      retryBaseDelayMs: 1,
    });
    await assert.rejects(
      client.analytics({ workspaceId: 'w', dataset: 'metrics' }),
      (error: TransportError) => error instanceof TransportError && error.attempts === 3,
    );
    assert.equal(service.requests.length, 3);
  });

  test('a write without an Idempotency-Key is not repeated after a lost answer, but is after a 503', async (t) => {
    const lost = await fakeService(t, ['hang']);
    const client = new GeoClient({ baseUrl: lost.url, apiKey: 'k', timeoutMs: 100, retryBaseDelayMs: 1 });
    await assert.rejects(client.callTool('geo_request_action_approval', { actionId: 'a' }), TransportError);
    assert.equal(lost.requests.length, 1);
    const busy = await fakeService(t, [
      { status: 503 },
      { status: 200, body: { jsonrpc: '2.0', id: 1, result: { content: [] } } },
    ]);
    const again = new GeoClient({ baseUrl: busy.url, apiKey: 'k', ...fast });
    assert.deepEqual((await again.callTool('geo_request_action_approval', { actionId: 'a' })).content, []);
    assert.equal(busy.requests.length, 2);
  });

  test('privacy and export requests carry an Idempotency-Key, so a lost answer is retried with the same key', async (t) => {
    const service = await fakeService(t, ['hang', { status: 202, body: { id: 'p' } }]);
    const client = new GeoClient({ baseUrl: service.url, apiKey: 'k', timeoutMs: 100, retryBaseDelayMs: 1 });
    assert.equal((await client.submitPrivacyRequest({ workspaceId: 'w', type: 'access', subject: 's' })).id, 'p');
    assert.equal(service.requests.length, 2);
    const keys = new Set(service.requests.map((r) => r.headers['idempotency-key']));
    assert.equal(keys.size, 1);
    assert.match(String([...keys][0]), /^[0-9a-f-]{36}$/);
    const exports = await fakeService(t, [{ status: 202, body: { id: 'e' } }]);
    const exporter = new GeoClient({ baseUrl: exports.url, apiKey: 'k', ...fast });
    await exporter.requestExport(
      { workspaceId: 'w', source: 'dataset', dataset: 'metrics', format: 'csv' },
      { idempotencyKey: 'mine' },
    );
    assert.equal(exports.requests[0]!.headers['idempotency-key'], 'mine');
  });
});

for (const target of testDatabaseTargets()) {
  describe(`GeoClient against the geo service (${target.dialect})`, () => {
    async function service(t: TestContext) {
      const database = await openTestDatabase<GeoDb>(target, 'geo');
      await prepareGeoDatabase(database.db);
      const secrets = createSecretBox(randomBytes(32).toString('hex'));
      const { app } = await buildGeoApp({
        secrets,
        config: readGeoConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000' }),
        db: database.db,
        cache: createMemoryCache(),
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      t.after(async () => {
        await app.close();
        await database.close();
      });
      const boot = await bootstrapTenant(database.db, secrets);
      return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, boot };
    }

    test('signals, analytics page iteration, graph import/merge with generated keys, privacy, tools', async (t) => {
      const { url, boot } = await service(t);
      const admin = new GeoClient({ baseUrl: url, apiKey: boot.keys.admin, ...fast });
      const written = await admin.writeSignals({
        workspaceId: boot.workspaceId,
        records: Array.from({ length: 7 }, (_, i) => ({
          dataset: 'metrics',
          definitionVersion: 'v/1',
          data: { metric: 'm', value: i },
          confidence: { value: 0.5, interval: [0.4, 0.6] },
        })),
      });
      assert.equal(written.accepted, 7);
      const pages = [];
      for await (const page of admin.analyticsPages({ workspaceId: boot.workspaceId, dataset: 'metrics', limit: 3 }))
        pages.push(page.items.length);
      assert.deepEqual(pages, [3, 3, 1]);
      const items = [];
      for await (const item of admin.analyticsItems({ workspaceId: boot.workspaceId, dataset: 'metrics', limit: 2 }))
        items.push(item);
      assert.equal(items.length, 7);
      assert.equal(new Set(items.map((i) => i.id)).size, 7, 'no row twice');

      const imported = await admin.importTargetGraph({
        workspaceId: boot.workspaceId,
        targets: [
          { key: 'a', name: 'A' },
          { key: 'b', name: 'B' },
          { key: 'c', name: 'C' },
        ],
        relations: [{ from: 'a', to: 'b' }],
      });
      assert.equal(imported.targetsCreated, 3);
      const replay = await admin.importTargetGraph(
        { workspaceId: boot.workspaceId, targets: [{ key: 'd', name: 'D' }], relations: [] },
        { idempotencyKey: 'fixed' },
      );
      const again = await admin.importTargetGraph(
        { workspaceId: boot.workspaceId, targets: [{ key: 'd', name: 'D' }], relations: [] },
        { idempotencyKey: 'fixed' },
      );
      assert.equal(again.mutationId, replay.mutationId);
      await assert.rejects(
        admin.importTargetGraph({ workspaceId: boot.workspaceId, targets: [], relations: [{ from: 'b', to: 'a' }] }),
        (error: ApiError) => error.status === 422 && error.code === 'GEO_GRAPH_CYCLE' && !error.retryable,
      );
      const merged = await admin.mergeTargets({
        workspaceId: boot.workspaceId,
        canonicalKey: 'a',
        duplicateKeys: ['c'],
      });
      assert.deepEqual(merged.merged, ['c']);
      const graph = await admin.getTargetGraph({ workspaceId: boot.workspaceId, includeHistory: true });
      assert.equal(graph.history?.length, 3);

      const privacy = await admin.submitPrivacyRequest({
        workspaceId: boot.workspaceId,
        type: 'deletion',
        subject: 'jane',
      });
      assert.equal(privacy.status, 'pending');
      assert.equal((await admin.listPrivacyRequests({ workspaceId: boot.workspaceId })).items.length, 1);

      const tools = await admin.listTools();
      assert.equal(tools.length, 8);
      const metrics = await admin.callTool('geo_list_metrics', { workspaceId: boot.workspaceId, limit: 2 });
      assert.equal((metrics.structuredContent as { items: unknown[] }).items.length, 2);
      const reader = new GeoClient({ baseUrl: url, apiKey: boot.keys.read, ...fast });
      await assert.rejects(
        reader.callTool('geo_request_action_approval', { workspaceId: boot.workspaceId, actionId: boot.workspaceId }),
        (error: ToolCallError) => {
          assert.ok(error instanceof ToolCallError);
          assert.equal(error.status, 403);
          assert.equal(error.rpcCode, -32003);
          return true;
        },
      );
      const wrongKey = new GeoClient({ baseUrl: url, apiKey: 'geo_wrong', ...fast });
      await assert.rejects(
        wrongKey.analytics({ workspaceId: boot.workspaceId, dataset: 'metrics' }),
        (error: ApiError) => error.status === 401,
      );
    });
  });
}
