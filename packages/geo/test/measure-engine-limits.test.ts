import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import ExcelJS from 'exceljs';
import { runMeasureWorkerOnce } from '../src/measure/measure-worker.ts';
import { runWorkerOnce } from '../src/worker/geo-worker.ts';
import { call, testDatabaseTargets } from './helper.ts';
import { type SuiteGeo as GeoUnderTest, sharedGeo } from './measure-suite.ts';

/**
 * A chat-completions engine on 127.0.0.1 that answers after `delayMs`, records the most asks it had in flight per
 * engine (the URL's first segment), and answers each engine's first ask of a prompt containing "busy" with a 429 +
 * Retry-After: 1.
 */
async function startCountingEngine(t: TestContext, delayMs: number) {
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  const asks: { engine: string; prompt: string; at: number; status: number }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const engine = (request.url ?? '').split('/')[1] ?? '';
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const prompt: string = body.messages.find((m: { role: string }) => m.role === 'user')?.content ?? '';
      const now = (inFlight.get(engine) ?? 0) + 1;
      inFlight.set(engine, now);
      peak.set(engine, Math.max(peak.get(engine) ?? 0, now));
      const throttled = prompt.includes('busy') && !asks.some((a) => a.prompt === prompt && a.engine === engine);
      asks.push({ engine, prompt, at: Date.now(), status: throttled ? 429 : 200 });
      setTimeout(() => {
        inFlight.set(engine, (inFlight.get(engine) ?? 1) - 1);
        if (throttled) {
          response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
          response.end('{"error":{"message":"slow down"}}');
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            choices: [{ message: { role: 'assistant', content: `Acme answers ${prompt}. https://acme.com/x` } }],
            usage: { prompt_tokens: 10, completion_tokens: 5 },
          }),
        );
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const port = (server.address() as AddressInfo).port;
  return { baseUrl: (engine: string) => `http://127.0.0.1:${port}/${engine}`, peak, asks };
}

async function addEngine(geo: GeoUnderTest, name: string, baseUrl: string, concurrency: number) {
  const engine = await call(geo.app, 'POST', '/api/v1/geo/engines', {
    key: geo.a.keys.write,
    body: {
      workspaceId: geo.a.workspaceId,
      name,
      provider: 'chat_completions',
      baseUrl,
      model: 'm',
      concurrency,
      requestsPerMinute: 100_000,
      inputPricePerMillionTokens: '1',
      outputPricePerMillionTokens: '2',
    },
  });
  assert.equal(engine.status, 201, JSON.stringify(engine.body));
  return engine.body.id as string;
}

async function completedRun(geo: GeoUnderTest, body: Record<string, unknown>) {
  const created = await call(geo.app, 'POST', '/api/v1/geo/runs', {
    key: geo.a.keys.write,
    body: { workspaceId: geo.a.workspaceId, ...body },
  });
  assert.equal(created.status, 202, JSON.stringify(created.body));
  await runMeasureWorkerOnce(geo.ctx, 'w');
  const run = await call(geo.app, 'GET', `/api/v1/geo/runs/${created.body.id}?workspaceId=${geo.a.workspaceId}`, {
    key: geo.a.keys.read,
  });
  assert.equal(run.body.status, 'completed', JSON.stringify(run.body));
  return run.body;
}

for (const target of testDatabaseTargets()) {
  describe(`engine limits and run reports (${target.dialect})`, () => {
    const freshGeo = sharedGeo(target, { KEEL_ALLOW_PRIVATE_URLS: 'true' });
    test('each engine is asked within its own concurrency; a 429 is retried after its Retry-After', async (t) => {
      const geo = await freshGeo();
      const engine = await startCountingEngine(t, 60);
      const wide = await addEngine(geo, 'wide', engine.baseUrl('wide'), 3);
      const narrow = await addEngine(geo, 'narrow', engine.baseUrl('narrow'), 1);
      await call(geo.app, 'POST', '/api/v1/geo/prompts', {
        key: geo.a.keys.write,
        body: {
          workspaceId: geo.a.workspaceId,
          prompts: [...Array.from({ length: 5 }, (_, i) => ({ text: `question ${i}` })), { text: 'busy question' }],
        },
      });
      const run = await completedRun(geo, { samples: 2, engineIds: [wide, narrow] });
      // 6 prompts × 2 samples × 2 engines, plus one retried 429 per engine.
      assert.equal(run.summary.answered, 24);
      assert.equal(run.summary.failed, 0);
      assert.equal(engine.asks.length, 26);
      assert.equal(engine.peak.get('wide'), 3, 'the wide engine used its 3 slots, and no more');
      assert.equal(engine.peak.get('narrow'), 1, 'the narrow engine was asked one question at a time');
      for (const name of ['wide', 'narrow']) {
        const busy = engine.asks.filter((a) => a.engine === name && a.prompt === 'busy question');
        // Two samples, the first throttled once: three asks, the retry at least Retry-After (1 s) after the 429.
        assert.deepEqual(
          busy.map((a) => a.status),
          [429, 200, 200],
        );
        assert.ok(busy[2]!.at - busy[0]!.at >= 1000, `${name}: the retry waited for Retry-After (1 s)`);
      }
      // Tokens and cost: 24 answers × (10 in, 5 out) at 1 / 2 per million.
      assert.deepEqual(
        { input: run.summary.inputTokens, output: run.summary.outputTokens, cost: run.summary.cost },
        { input: 240, output: 120, cost: '0.000480' },
      );
    });

    test("a run's report is exported as XLSX and PDF with its metric rows", async (t) => {
      const geo = await freshGeo();
      const engine = await startCountingEngine(t, 0);
      await call(geo.app, 'POST', '/api/v1/geo/target-graph', {
        key: geo.a.keys.write,
        headers: { 'idempotency-key': 'g' },
        body: {
          operation: 'import',
          workspaceId: geo.a.workspaceId,
          targets: [{ key: 'acme', name: 'Acme', url: 'https://acme.com/' }],
          relations: [],
        },
      });
      await addEngine(geo, 'e', engine.baseUrl('e'), 2);
      await call(geo.app, 'POST', '/api/v1/geo/prompts', {
        key: geo.a.keys.write,
        body: { workspaceId: geo.a.workspaceId, prompts: [{ text: 'q1' }, { text: 'q2' }] },
      });
      const run = await completedRun(geo, { samples: 2 });
      const reportId = run.summary.reportId as string;
      const files: Record<string, Buffer> = {};
      for (const format of ['xlsx', 'pdf']) {
        const job = await call(geo.app, 'POST', '/api/v1/geo/exports', {
          key: geo.a.keys.read,
          body: { workspaceId: geo.a.workspaceId, source: 'report', reportId, format },
        });
        assert.equal(job.status, 202, JSON.stringify(job.body));
        await runWorkerOnce(geo.ctx, 'w1');
        const file = await geo.app.inject({
          method: 'GET',
          url: `/api/v1/geo/exports/${job.body.id}`,
          headers: { authorization: `Bearer ${geo.a.keys.read}` },
        });
        assert.equal(file.statusCode, 200, file.body);
        files[format] = file.rawPayload;
      }
      assert.equal(files.pdf!.subarray(0, 5).toString(), '%PDF-');
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(files.xlsx as never);
      const sheet = workbook.worksheets[0]!;
      const header = (sheet.getRow(1).values as unknown[]).slice(1).map(String);
      const rows = [];
      for (let r = 2; r <= sheet.rowCount; r++) {
        const values = (sheet.getRow(r).values as unknown[]).slice(1);
        rows.push(Object.fromEntries(header.map((h, i) => [h, values[i]])));
      }
      const mention = rows.find((row) => row.metric === 'mention_rate' && row.scope === 'all');
      assert.ok(mention, JSON.stringify(rows.slice(0, 3)));
      assert.equal(Number(mention.value), 1, 'every answer names Acme');
      assert.equal(Number(mention.sampleCount), 4);
      assert.equal(mention.definitionVersion, 'mention_rate@1');
    });
  });
}
