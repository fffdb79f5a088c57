import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import ExcelJS from 'exceljs';
import { pruneExpiredExports } from '../src/exports/export-service.ts';
import { neutraliseFormula } from '../src/exports/export-writers.ts';
import { uuidv7 } from '../src/ids.ts';
import { claimJob, runWorkerOnce } from '../src/worker/geo-worker.ts';
import { buildGeo, call, testDatabaseTargets } from './helper.ts';

test('formula-like cells are neutralised', () => {
  for (const bad of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) assert.equal(neutraliseFormula(bad), `'${bad}`);
  assert.equal(neutraliseFormula('plain'), 'plain');
});

for (const target of testDatabaseTargets()) {
  describe(`privacy requests and exports (${target.dialect})`, () => {
    const track = (app: any, token: string, userId: string, n: number) =>
      call(app, 'POST', '/api/v2/geo/events', {
        body: {
          consent: { analytics: true },
          events: Array.from({ length: n }, (_, i) => ({ type: 'event', name: 'view', userId, url: `/p/${i}` })),
        },
        headers: { 'x-site-token': token },
      });

    test('the subject is hashed on arrival and never stored in clear; GET shows redacted hashes and status', async (t) => {
      const { app, a, b, db } = await buildGeo(t, target);
      const submitted = await call(app, 'POST', '/api/v1/geo/privacy', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, type: 'access', subject: 'Jane@Example.org' },
      });
      assert.equal(submitted.status, 202);
      assert.equal(submitted.body.status, 'pending');
      assert.match(submitted.body.subjectHash, /^[0-9a-f]{8}…$/);
      const dump = JSON.stringify(await db.selectFrom('privacy_request').selectAll().execute());
      assert.equal(dump.toLowerCase().includes('jane@example.org'), false);
      const workspace = await db
        .selectFrom('workspace')
        .select('subject_secret')
        .where('id', '=', a.workspaceId)
        .executeTakeFirstOrThrow();
      assert.match(workspace.subject_secret, /^v1\./, 'the HMAC key is stored sealed (AES-256-GCM), not in clear');
      const list = await call(app, 'GET', `/api/v1/geo/privacy?workspaceId=${a.workspaceId}`, { key: a.keys.read });
      assert.equal(list.status, 200);
      assert.equal(list.body.items.length, 1);
      assert.equal(list.body.items[0].subjectHash, submitted.body.subjectHash);
      assert.equal(
        (
          await call(app, 'POST', '/api/v1/geo/privacy', {
            key: a.keys.read,
            body: { workspaceId: a.workspaceId, type: 'access', subject: 'x' },
          })
        ).status,
        403,
      );
      assert.equal(
        (await call(app, 'GET', `/api/v1/geo/privacy?workspaceId=${a.workspaceId}`, { key: b.keys.read })).status,
        403,
      );
      const bad = await call(app, 'POST', '/api/v1/geo/privacy', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, type: 'erase', subject: 'x' },
      });
      assert.equal(bad.status, 400);
    });

    test('privacy and export requests with an Idempotency-Key: a retry replays, another body is a 409', async (t) => {
      const { app, a, db } = await buildGeo(t, target);
      const privacy = (subject: string) =>
        call(app, 'POST', '/api/v1/geo/privacy', {
          key: a.keys.write,
          headers: { 'idempotency-key': 'privacy-retry-1' },
          body: { workspaceId: a.workspaceId, type: 'deletion', subject },
        });
      const first = await privacy('jane@example.org');
      assert.equal(first.status, 202);
      // The subject is normalised before hashing, so the same person written differently is the same request.
      const retry = await privacy(' Jane@Example.org ');
      assert.equal(retry.status, 202);
      assert.equal(retry.headers['idempotent-replayed'], 'true');
      assert.equal(retry.body.id, first.body.id);
      const other = await privacy('someone-else@example.org');
      assert.equal(other.status, 409);
      assert.equal(other.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
      const queued = await db
        .selectFrom('privacy_request')
        .select('id')
        .where('workspace_id', '=', a.workspaceId)
        .execute();
      assert.equal(queued.length, 1);
      const stored = JSON.stringify(
        await db
          .selectFrom('idempotency_key' as any)
          .selectAll()
          .execute(),
      );
      assert.equal(stored.toLowerCase().includes('jane@example.org'), false, 'the receipt never holds the subject');

      const exportBody = { workspaceId: a.workspaceId, source: 'dataset', dataset: 'metrics', format: 'csv' };
      const exportOnce = (body: unknown) =>
        call(app, 'POST', '/api/v1/geo/exports', {
          key: a.keys.read,
          headers: { 'idempotency-key': 'export-retry-1' },
          body,
        });
      const created = await exportOnce(exportBody);
      assert.equal(created.status, 202);
      assert.equal(created.headers.location, created.body.downloadUrl);
      const replayed = await exportOnce(exportBody);
      assert.equal(replayed.status, 202);
      assert.equal(replayed.headers['idempotent-replayed'], 'true');
      assert.equal(replayed.body.id, created.body.id);
      assert.equal((await exportOnce({ ...exportBody, format: 'json' })).status, 409);
      const jobs = await db.selectFrom('export_job').select('id').where('workspace_id', '=', a.workspaceId).execute();
      assert.equal(jobs.length, 1);
    });

    test("deletion removes the subject's events and derived rows in the background, and records completion", async (t) => {
      const { app, a, ctx, db } = await buildGeo(t, target);
      await track(app, a.siteToken, 'jane', 3);
      await track(app, a.siteToken, 'john', 2);
      await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.admin,
        headers: { 'idempotency-key': 'derived' },
        body: {
          workspaceId: a.workspaceId,
          records: [{ dataset: 'attribution', definitionVersion: 'a/1', data: { touch: 'chatgpt' }, subject: 'JANE' }],
        },
      });
      const request = await call(app, 'POST', '/api/v1/geo/privacy', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, type: 'deletion', subject: 'jane' },
      });
      assert.equal(await runWorkerOnce(ctx, 'w1'), 1);
      const list = await call(app, 'GET', `/api/v1/geo/privacy?workspaceId=${a.workspaceId}`, { key: a.keys.read });
      const done = list.body.items.find((r: any) => r.id === request.body.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.result, { eventsDeleted: 3, derivedRowsDeleted: 1, exportsDeleted: 0 });
      assert.ok(done.completedAt);
      const left = await db.selectFrom('tracking_event').select('subject_hash').execute();
      assert.equal(left.length, 2, "john's events stay");
      assert.equal(
        (await db.selectFrom('dataset_record').selectAll().where('dataset', '=', 'attribution').execute()).length,
        0,
      );
    });

    test("access produces an export of the subject's data (download needs geo:write)", async (t) => {
      const { app, a, ctx } = await buildGeo(t, target);
      await track(app, a.siteToken, 'jane', 4);
      await track(app, a.siteToken, 'john', 1);
      const request = await call(app, 'POST', '/api/v1/geo/privacy', {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, type: 'access', subject: 'jane' },
      });
      await runWorkerOnce(ctx, 'w1');
      const list = await call(app, 'GET', `/api/v1/geo/privacy?workspaceId=${a.workspaceId}`, { key: a.keys.read });
      const done = list.body.items.find((r: any) => r.id === request.body.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.result, { eventsExported: 4 });
      const file = await call(app, 'GET', `/api/v1/geo/exports/${done.exportId}`, { key: a.keys.write });
      assert.equal(file.status, 200);
      assert.match(String(file.headers['content-type']), /ndjson/);
      const lines = file.raw.body
        .trim()
        .split('\n')
        .map((l: string) => JSON.parse(l));
      assert.equal(lines.length, 4);
      assert.ok(lines.every((l: any) => l.name === 'view'));
      assert.equal((await call(app, 'GET', `/api/v1/geo/exports/${done.exportId}`, { key: a.keys.read })).status, 403);
    });

    test('exports: 202 then the file with the right content type in every format; formulas neutralised', async (t) => {
      const { app, a, ctx } = await buildGeo(t, target);
      await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.admin,
        headers: { 'idempotency-key': 'x1' },
        body: {
          workspaceId: a.workspaceId,
          records: [
            {
              dataset: 'campaigns',
              definitionVersion: 'c/1',
              key: '=HYPERLINK("http://evil")',
              data: { name: '@SUM(A1)', budget: 10 },
            },
            { dataset: 'campaigns', definitionVersion: 'c/1', key: 'plain', data: { name: 'Spring', budget: -5 } },
            {
              dataset: 'reports',
              definitionVersion: 'weekly/1',
              runId: 'r1',
              data: {
                title: 'Week 1',
                rows: [
                  { engine: 'chatgpt', visits: 10 },
                  { engine: 'perplexity', visits: 4 },
                ],
              },
            },
          ],
        },
      });
      const expected: Record<string, RegExp> = {
        json: /application\/json/,
        csv: /text\/csv/,
        ndjson: /ndjson/,
        xlsx: /spreadsheetml/,
        pdf: /application\/pdf/,
      };
      const ids: Record<string, string> = {};
      for (const format of Object.keys(expected)) {
        const created = await call(app, 'POST', '/api/v1/geo/exports', {
          key: a.keys.read,
          body: { workspaceId: a.workspaceId, source: 'dataset', dataset: 'campaigns', format },
        });
        assert.equal(created.status, 202);
        ids[format] = created.body.id;
      }
      const pending = await call(app, 'GET', `/api/v1/geo/exports/${ids.csv}`, { key: a.keys.read });
      assert.equal(pending.status, 202);
      assert.equal(pending.headers['retry-after'], '2');
      await runWorkerOnce(ctx, 'w1');
      for (const [format, type] of Object.entries(expected)) {
        const file = await app.inject({
          method: 'GET',
          url: `/api/v1/geo/exports/${ids[format]}`,
          headers: { authorization: `Bearer ${a.keys.read}` },
        });
        assert.equal(file.statusCode, 200, format);
        assert.match(String(file.headers['content-type']), type);
        assert.match(String(file.headers['content-disposition']), new RegExp(`\\.${format}"`));
        if (format === 'csv') {
          assert.match(file.body, /'=HYPERLINK/);
          assert.match(file.body, /'@SUM\(A1\)/);
          assert.doesNotMatch(file.body, /(^|,)=HYPERLINK/m);
        }
        if (format === 'json') assert.equal(JSON.parse(file.body).length, 2);
        if (format === 'pdf') assert.equal(file.rawPayload.subarray(0, 5).toString(), '%PDF-');
        if (format === 'xlsx') {
          const workbook = new ExcelJS.Workbook();
          await workbook.xlsx.load(file.rawPayload as never);
          const values = workbook.worksheets[0]!.getSheetValues().flat().map(String);
          assert.ok(values.includes('\'=HYPERLINK("http://evil")'), 'neutralised in XLSX');
          assert.ok(values.includes("'@SUM(A1)"));
          assert.ok(!values.some((v) => v.startsWith('=')));
        }
      }
      const report = await call(app, 'GET', `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=reports`, {
        key: a.keys.read,
      });
      const pdf = await call(app, 'POST', '/api/v1/geo/exports', {
        key: a.keys.read,
        body: { workspaceId: a.workspaceId, source: 'report', reportId: report.body.items[0].id, format: 'pdf' },
      });
      assert.equal(pdf.status, 202);
      await runWorkerOnce(ctx, 'w1');
      const reportPdf = await app.inject({
        method: 'GET',
        url: `/api/v1/geo/exports/${pdf.body.id}`,
        headers: { authorization: `Bearer ${a.keys.read}` },
      });
      assert.equal(reportPdf.statusCode, 200);
      assert.equal(reportPdf.rawPayload.subarray(0, 5).toString(), '%PDF-');
    });

    test("expired, another tenant's and unknown exports are the same 403", async (t) => {
      const geo = await buildGeo(t, target);
      const { app, a, b, ctx } = geo;
      const created = await call(app, 'POST', '/api/v1/geo/exports', {
        key: a.keys.read,
        body: { workspaceId: a.workspaceId, source: 'dataset', dataset: 'metrics', format: 'json' },
      });
      await runWorkerOnce(ctx, 'w1');
      assert.equal(
        (await call(app, 'GET', `/api/v1/geo/exports/${created.body.id}`, { key: a.keys.read })).status,
        200,
      );
      const foreign = await call(app, 'GET', `/api/v1/geo/exports/${created.body.id}`, { key: b.keys.admin });
      const unknown = await call(app, 'GET', '/api/v1/geo/exports/0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77', {
        key: a.keys.read,
      });
      geo.clock.now = new Date(Date.now() + 25 * 3_600_000);
      const expired = await call(app, 'GET', `/api/v1/geo/exports/${created.body.id}`, { key: a.keys.read });
      for (const response of [foreign, unknown, expired]) {
        assert.equal(response.status, 403);
        assert.equal(response.body.error.code, 'GEO_EXPORT_FORBIDDEN');
      }
      assert.equal((await call(app, 'GET', `/api/v1/geo/exports/${created.body.id}`)).status, 401);
    });

    test('a job is claimed by exactly one of several workers', async (t) => {
      const { app, a, ctx } = await buildGeo(t, target);
      await call(app, 'POST', '/api/v1/geo/exports', {
        key: a.keys.read,
        body: { workspaceId: a.workspaceId, source: 'dataset', dataset: 'metrics', format: 'csv' },
      });
      const claims = await Promise.all(['w1', 'w2', 'w3', 'w4'].map((w) => claimJob(ctx, 'export_job', w)));
      assert.equal(claims.filter(Boolean).length, 1);
    });
    test('a non-UUID export id is a 400 on every export route (the spec types exportId as a UUID)', async (t) => {
      const { app, a } = await buildGeo(t, target);
      for (const id of ['not-a-uuid', '123', '0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a7', "0195f3a2'--"]) {
        const response = await call(app, 'GET', `/api/v1/geo/exports/${encodeURIComponent(id)}`, { key: a.keys.read });
        assert.equal(response.status, 400, id);
        assert.equal(response.body.error.code, 'VALIDATION_FAILED');
      }
      const badReport = await call(app, 'POST', '/api/v1/geo/exports', {
        key: a.keys.read,
        body: { workspaceId: a.workspaceId, source: 'report', reportId: 'not-a-uuid', format: 'pdf' },
      });
      assert.equal(badReport.status, 400);
      const badWorkspace = await call(app, 'GET', '/api/v1/geo/exports?workspaceId=not-a-uuid', { key: a.keys.read });
      assert.equal(badWorkspace.status, 400);
      // Unauthenticated still answers 401 first: the id's shape is checked only for a known key.
      assert.equal((await call(app, 'GET', '/api/v1/geo/exports/not-a-uuid')).status, 401);
    });

    test('expired exports beyond the first batch of 100 lose their bytes and are marked pruned', async (t) => {
      const { a, ctx, db } = await buildGeo(t, target);
      const past = new Date(Date.now() - 3_600_000).toISOString();
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const job = (expiresAt: string) => ({
        id: uuidv7(),
        tenant_id: a.tenantId,
        workspace_id: a.workspaceId,
        source: 'dataset',
        dataset: 'metrics',
        report_id: null,
        subject_hash: null,
        format: 'csv',
        status: 'ready',
        attempts: 1,
        claimed_by: null,
        claimed_at: null,
        row_count: 1,
        byte_size: 3,
        error: null,
        created_at: past,
        completed_at: past,
        expires_at: expiresAt,
        pruned_at: null,
      });
      const expired = Array.from({ length: 250 }, () => job(past));
      const live = job(future);
      await db
        .insertInto('export_job')
        .values([...expired, live])
        .execute();
      await db
        .insertInto('export_chunk')
        .values([...expired, live].flatMap((row) => [0, 1].map((seq) => ({ export_id: row.id, seq, data: 'YWJj' }))))
        .execute();
      assert.equal(await pruneExpiredExports(ctx), 250);
      const left = await db.selectFrom('export_chunk').select('export_id').execute();
      assert.deepEqual([...new Set(left.map((row) => row.export_id))], [live.id]);
      const unpruned = await db.selectFrom('export_job').select('id').where('pruned_at', 'is', null).execute();
      assert.deepEqual(
        unpruned.map((row) => row.id),
        [live.id],
      );
      // The next round has nothing left to do (it does not pick the same jobs again).
      assert.equal(await pruneExpiredExports(ctx), 0);
    });
  });
}
