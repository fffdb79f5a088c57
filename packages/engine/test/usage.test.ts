// Usage: turns appear once, AI usage is priced from the provider (never the caller), entries, summaries, stats,
// roles, realm isolation, idempotency, window limits, and a streamed export that reads in bounded pages.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import type { KyselyPlugin } from 'kysely';
import { newId } from '../src/ids.ts';
import { exportUsage } from '../src/usage/usage-service.ts';
import { insertUsageRecord } from '../src/usage/usage-store.ts';
import { allPages, tamperCursor } from './cursor-pages.ts';
import { roleToken, setupAgent, sharedRuntime, startUpstream, testDatabaseTargets } from './runtime-helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`usage (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('chat and execute turns appear in usage once, priced from the provider, and totals add up exactly', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t, () => ({ usage: { prompt_tokens: 12, completion_tokens: 5 } }));
      const ids = await setupAgent(engine, engine.a, upstream.url, {
        provider: { input_price_per_million: 1.5, output_price_per_million: 2.25, currency: 'EUR' },
      });
      const token = engine.a.token;
      for (const message of ['one', 'two']) {
        const chat = await engine.call('POST', '/api/v1/runtime/ai/chat', {
          token,
          body: { agent_id: ids.agentId, messages: [{ role: 'user', content: message }] },
        });
        assert.equal(chat.status, 200, JSON.stringify(chat.body));
        assert.equal(chat.body.usage.cost, '0.00002925');
      }
      const execute = await engine.call('POST', '/api/v1/runtime/execute', {
        token,
        body: { agent_id: ids.agentId, input: { message: 'three' } },
      });
      assert.equal(execute.status, 200, JSON.stringify(execute.body));

      const list = await engine.call('GET', '/api/v1/usages?type=ai', { token });
      assert.equal(list.status, 200);
      assert.equal(list.body.data.length, 3);
      assert.deepEqual(list.body.data.map((r: any) => r.source).sort(), ['chat', 'chat', 'execute']);
      for (const record of list.body.data) {
        assert.equal(record.cost, '0.00002925');
        assert.equal(record.currency, 'EUR');
        assert.equal(record.provider_id, ids.providerId);
        assert.equal(record.agent_id, ids.agentId);
        assert.equal(record.cost_source, 'provider_prices');
        assert.ok(record.execution_id);
      }
      assert.equal(new Set(list.body.data.map((r: any) => r.execution_id)).size, 3);

      const summary = await engine.call('GET', '/api/v1/usages/summary', { token });
      assert.equal(summary.status, 200);
      assert.equal(summary.body.totals.records, 3);
      assert.equal(summary.body.totals.input_tokens, 36);
      assert.equal(summary.body.totals.output_tokens, 15);
      assert.deepEqual(summary.body.totals.cost, { EUR: '0.00008775' });
      assert.deepEqual(summary.body.by_status, { succeeded: 3 });
      assert.equal(summary.body.agents.length, 1);
      assert.deepEqual(summary.body.agents[0].cost, { EUR: '0.00008775' });

      // The MCP tool reads the same totals (one way to compute them).
      const { usageSummary } = await import('../src/usage/usage-service.ts');
      const principal = await engine.runtime.principals.authenticate(`Bearer ${token}`);
      const mcp = await usageSummary(engine.runtime, principal, { days: 7 });
      assert.equal(mcp.totals.executions, 3);
      assert.deepEqual(mcp.totals.cost, { EUR: '0.00008775' });
    });

    test('reported AI usage is priced from the provider, never from the caller', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url, {
        provider: { input_price_per_million: 3, output_price_per_million: 15, image_price: 0.04, currency: 'USD' },
      });
      const token = engine.a.token;
      const body = {
        provider_id: ids.providerId,
        agent_id: ids.agentId,
        model: 'big-model',
        input_tokens: 1000,
        output_tokens: 500,
        images: 2,
      };
      const recorded = await engine.call('POST', '/api/v1/runtime/ai/usage', { token, body });
      assert.equal(recorded.status, 201, JSON.stringify(recorded.body));
      // 1000 × 3/1e6 + 500 × 15/1e6 + 2 × 0.04 = 0.003 + 0.0075 + 0.08
      assert.equal(recorded.body.cost, '0.0905');
      assert.equal(recorded.body.currency, 'USD');
      assert.equal(recorded.body.source, 'api');
      assert.equal(recorded.body.name, 'big-model');
      const withCost = await engine.call('POST', '/api/v1/runtime/ai/usage', {
        token,
        body: { ...body, cost: 0, currency: 'EUR' },
      });
      assert.equal(withCost.status, 201);
      assert.equal(withCost.body.cost, '0.0905');
      assert.equal(withCost.body.currency, 'USD');

      const stats = await engine.call('GET', '/api/v1/runtime/ai/usage/stats', { token });
      assert.equal(stats.status, 200, JSON.stringify(stats.body));
      assert.equal(stats.body.providers.length, 1);
      assert.equal(stats.body.providers[0].provider_id, ids.providerId);
      assert.deepEqual(stats.body.providers[0].cost, { USD: '0.181' });
      assert.equal(stats.body.providers[0].average_tokens_per_record, 1500);
      assert.deepEqual(
        stats.body.providers[0].models.map((m: any) => m.model),
        ['big-model'],
      );
      assert.equal(stats.body.agents[0].agent_id, ids.agentId);
      assert.equal(stats.body.agents[0].images, 4);

      const unknown = await engine.call('POST', '/api/v1/runtime/ai/usage', {
        token,
        body: { ...body, provider_id: newId() },
      });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'RUNTIME_NOT_FOUND');
    });

    test("another realm's provider, agent and records are invisible (a foreign id is a 404 like an unknown one)", async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const b = engine.b.token;
      await engine.call('POST', '/api/v1/runtime/ai/usage', {
        token: engine.a.token,
        body: { provider_id: ids.providerId, input_tokens: 10, output_tokens: 10 },
      });
      const foreignProvider = await engine.call('POST', '/api/v1/runtime/ai/usage', {
        token: b,
        body: { provider_id: ids.providerId, input_tokens: 10, output_tokens: 10 },
      });
      assert.equal(foreignProvider.status, 404);
      const own = await setupAgent(engine, engine.b, upstream.url);
      const foreignAgent = await engine.call('POST', '/api/v1/usages', {
        token: b,
        body: { type: 'tool', name: 'search', agent_id: ids.agentId },
      });
      assert.equal(foreignAgent.status, 404);
      const foreignAgentAi = await engine.call('POST', '/api/v1/runtime/ai/usage', {
        token: b,
        body: { provider_id: own.providerId, agent_id: ids.agentId, input_tokens: 1, output_tokens: 1 },
      });
      assert.equal(foreignAgentAi.status, 404);
      for (const path of [
        '/api/v1/usages',
        '/api/v1/usages/summary',
        '/api/v1/runtime/ai/usage/stats',
        '/api/v1/usages/tools/summary',
      ]) {
        const answer = await engine.call('GET', path, { token: b });
        assert.equal(answer.status, 200, path);
        assert.ok(!JSON.stringify(answer.body).includes(ids.providerId), path);
      }
      const summary = await engine.call('GET', '/api/v1/usages/summary', { token: b });
      assert.equal(summary.body.totals.records, 0);
      const exported = await engine.call('POST', '/api/v1/usages/export', { token: b, body: { format: 'json' } });
      assert.deepEqual(exported.body.data, []);
    });

    test('recording needs operator or stronger; reading and exporting any role; no token is a 401', async () => {
      const engine = await shared.fresh();
      const viewer = await roleToken(engine, 'viewer');
      const operator = await roleToken(engine, 'operator');
      const entry = { type: 'tool', name: 'lookup' };
      const denied = await engine.call('POST', '/api/v1/usages', { token: viewer, body: entry });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'RUNTIME_FORBIDDEN');
      const deniedAi = await engine.call('POST', '/api/v1/runtime/ai/usage', {
        token: viewer,
        body: { provider_id: newId(), input_tokens: 1, output_tokens: 1 },
      });
      assert.equal(deniedAi.status, 403);
      assert.equal((await engine.call('POST', '/api/v1/usages', { token: operator, body: entry })).status, 201);
      for (const [method, path] of [
        ['GET', '/api/v1/usages'],
        ['GET', '/api/v1/usages/summary'],
        ['GET', '/api/v1/usages/tools/summary'],
        ['GET', '/api/v1/runtime/ai/usage/stats'],
        ['POST', '/api/v1/usages/export'],
      ] as const) {
        const answer = await engine.call(method, path, { token: viewer, ...(method === 'POST' ? { body: {} } : {}) });
        assert.equal(answer.status, 200, path);
        const anonymous = await engine.call(method, path, method === 'POST' ? { body: {} } : {});
        assert.equal(anonymous.status, 401, path);
      }
    });

    test('an Idempotency-Key replays the first record; another body with it is a 409', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const headers = { 'idempotency-key': 'usage-entry-1' };
      const body = { type: 'custom', name: 'pages_rendered', quantity: 40, unit: 'page' };
      const first = await engine.call('POST', '/api/v1/usages', { token, body, headers });
      assert.equal(first.status, 201);
      const again = await engine.call('POST', '/api/v1/usages', { token, body, headers });
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body.id, first.body.id);
      const other = await engine.call('POST', '/api/v1/usages', { token, body: { ...body, quantity: 41 }, headers });
      assert.equal(other.status, 409);
      const list = await engine.call('GET', '/api/v1/usages', { token });
      assert.equal(list.body.data.length, 1);
    });

    test('tool entries: summary per tool and server, caller cost in its currency, limits are 400s', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const server = newId();
      const post = (body: unknown) => engine.call('POST', '/api/v1/usages', { token, body });
      assert.equal((await post({ type: 'tool', name: 'search', tool_server_id: server })).status, 201);
      assert.equal((await post({ type: 'tool', name: 'search', tool_server_id: server, quantity: 3 })).status, 201);
      const paid = await post({ type: 'tool', name: 'geocode', cost: 0.1, currency: 'usd' });
      assert.equal(paid.status, 201);
      assert.equal(paid.body.cost_source, 'caller');
      assert.equal(paid.body.currency, 'USD');
      assert.equal((await post({ type: 'tool', name: 'geocode', cost: 0.2, currency: 'USD' })).status, 201);
      assert.equal((await post({ type: 'custom', name: 'emails', quantity: 2 })).status, 201);
      const summary = await engine.call('GET', '/api/v1/usages/tools/summary', { token });
      assert.equal(summary.status, 200);
      assert.deepEqual(summary.body.totals, { records: 4, quantity: 6, cost: { USD: '0.3' } });
      const search = summary.body.tools.find((tool: any) => tool.tool_name === 'search');
      assert.deepEqual(search, { tool_name: 'search', tool_server_id: server, records: 2, quantity: 4, cost: {} });
      const geocode = summary.body.tools.find((tool: any) => tool.tool_name === 'geocode');
      assert.deepEqual(geocode.cost, { USD: '0.3' });

      for (const bad of [
        { type: 'tool', name: 'x', cost: 1 },
        { type: 'tool', name: 'x', currency: 'USD' },
        { type: 'tool', name: 'x', cost: 0.1234567, currency: 'USD' },
        { type: 'ai', name: 'x' },
        { type: 'tool', name: 'x', occurred_at: '2000-01-01T00:00:00Z' },
        { type: 'tool', name: '' },
      ]) {
        const answer = await post(bad);
        assert.equal(answer.status, 400, JSON.stringify(bad));
      }
      const wide = await engine.call('GET', '/api/v1/usages?from=2020-01-01T00:00:00Z&to=2022-01-01T00:00:00Z', {
        token,
      });
      assert.equal(wide.status, 400);
      const reversed = await engine.call(
        'GET',
        '/api/v1/usages/summary?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z',
        { token },
      );
      assert.equal(reversed.status, 400);
      // Pages: keyset cursors cover every record once; an edited cursor is a 400.
      const pages = await allPages((url) => engine.call('GET', url, { token }), '/api/v1/usages', 'next_cursor');
      assert.equal(pages.seen.length, 5);
      assert.equal(new Set(pages.seen).size, 5);
      const tampered = await engine.call(
        'GET',
        `/api/v1/usages?limit=2&cursor=${encodeURIComponent(tamperCursor(pages.cursors[0]!))}`,
        { token },
      );
      assert.equal(tampered.status, 400);
    });

    test('the export streams CSV and JSON in bounded pages: reading stops while the client does not read', async () => {
      const engine = await shared.fresh();
      const realmId = engine.a.realmId;
      const rows = 5000;
      const now = Date.now();
      await engine.ctx.db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows; i++)
          await insertUsageRecord(trx, {
            id: newId(),
            realm_id: realmId,
            type: i % 2 ? 'tool' : 'custom',
            source: 'api',
            name: i === 0 ? '=HYPERLINK("http://evil")' : `metric-${i}`,
            provider_id: null,
            agent_id: null,
            tool_server_id: null,
            session_id: null,
            execution_id: null,
            status: null,
            input_tokens: 0,
            output_tokens: 0,
            images: 0,
            quantity: 1,
            unit: 'call',
            cost_picos: '1000000000',
            currency: 'USD',
            cost_source: 'caller',
            metadata: null,
            occurred_at: new Date(now - i * 1000).toISOString(),
            created_by: engine.a.identityId,
            created_at: new Date(now).toISOString(),
          });
      });
      // Count the queries the export runs, and read it as a client that stops after the first chunk.
      let queries = 0;
      const counter: KyselyPlugin = {
        transformQuery: (args) => {
          queries += 1;
          return args.node;
        },
        transformResult: async (args) => args.result,
      };
      const principal = await engine.runtime.principals.authenticate(`Bearer ${engine.a.token}`);
      const counted = { ...engine.runtime, db: engine.runtime.db.withPlugin(counter) };
      const csv = exportUsage(counted, principal, { format: 'csv' });
      const firstChunk = await new Promise<Buffer>((resolve) => csv.body.once('data', resolve));
      csv.body.pause();
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok(queries <= 3, `the export read ${queries} pages before the client asked for more`);
      const rest: Buffer[] = [firstChunk];
      csv.body.on('data', (chunk) => rest.push(chunk));
      csv.body.resume();
      await once(csv.body, 'end');
      assert.equal(queries, Math.ceil(rows / 500) + 1);
      const parsed = parse(Buffer.concat(rest).toString('utf8'), { columns: true }) as Record<string, string>[];
      assert.equal(parsed.length, rows);
      assert.equal(parsed[0]!.cost, '0.001');
      assert.equal(parsed.find((row) => row.name?.includes('HYPERLINK'))?.name, '\'=HYPERLINK("http://evil")');

      // Over HTTP: chunked (no Content-Length), an attachment, and valid JSON for the json format.
      await engine.rest.listen({ port: 0, host: '127.0.0.1' });
      {
        const port = (engine.rest.server.address() as AddressInfo).port;
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/usages/export`, {
          method: 'POST',
          headers: { authorization: `Bearer ${engine.a.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ format: 'json', type: 'tool' }),
        });
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('content-length'), null);
        assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename="usage-.*\.json"$/);
        const json = (await response.json()) as { data: { type: string }[] };
        assert.equal(json.data.length, rows / 2);
        assert.ok(json.data.every((row) => row.type === 'tool'));
        const csvResponse = await fetch(`http://127.0.0.1:${port}/api/v1/usages/export`, {
          method: 'POST',
          headers: { authorization: `Bearer ${engine.a.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ format: 'csv', from: '2026-01-02T00:00:00Z', to: '2020-01-01T00:00:00Z' }),
        });
        assert.equal(csvResponse.status, 400);
        await csvResponse.body?.cancel();
      }
    });
  });
}
