import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DATASETS } from '../src/datasets/dataset-schemas.ts';
import { buildGeo, call, testDatabaseTargets } from './helper.ts';

const metric = (i: number) => ({
  dataset: 'metrics',
  definitionVersion: 'ai-visibility/3',
  runId: `run-${i}`,
  computedAt: '2026-11-20T00:00:00Z',
  data: { metric: 'ai_visibility', value: i / 100 },
  confidence: { value: 0.5, interval: [0.4, 0.6] },
  evidence: [{ type: 'query', ref: `q${i}` }],
});

for (const target of testDatabaseTargets()) {
  describe(`datasets, signals and actions (${target.dialect})`, () => {
    test('analytics: limit 1–500 (default 100; out of range is a 400), every dataset of the enum, keyset pages without overlap', async (t) => {
      const { app, a } = await buildGeo(t, target);
      const base = `/api/v1/geo/analytics?workspaceId=${a.workspaceId}`;
      for (const limit of ['0', '501', '-1', '1.5', 'x']) {
        const response = await call(app, 'GET', `${base}&dataset=metrics&limit=${limit}`, { key: a.keys.read });
        assert.equal(response.status, 400, `limit=${limit}`);
        assert.equal(response.body.error.code, 'VALIDATION_FAILED');
      }
      assert.equal((await call(app, 'GET', `${base}&dataset=nope`, { key: a.keys.read })).status, 400);
      assert.equal(
        (await call(app, 'GET', `/api/v1/geo/analytics?dataset=metrics`, { key: a.keys.read })).status,
        400,
        'workspaceId is required',
      );
      for (const dataset of DATASETS) {
        const page = await call(app, 'GET', `${base}&dataset=${dataset}`, { key: a.keys.read });
        assert.equal(page.status, 200, dataset);
        assert.equal(page.body.limit, 100);
        assert.deepEqual(page.body.items, []);
        assert.equal(page.body.nextCursor, null);
      }
      const written = await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.signals,
        headers: { 'idempotency-key': 'page-seed' },
        body: { workspaceId: a.workspaceId, records: Array.from({ length: 250 }, (_, i) => metric(i)) },
      });
      assert.equal(written.status, 201);
      const seen = new Set<string>();
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: any = await call(
          app,
          'GET',
          `${base}&dataset=metrics&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
          { key: a.keys.read },
        );
        assert.equal(page.status, 200);
        for (const item of page.body.items) seen.add(item.id);
        cursor = page.body.nextCursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 3);
      assert.equal(seen.size, 250);
      const first = await call(app, 'GET', `${base}&dataset=metrics&limit=1`, { key: a.keys.read });
      const record = first.body.items[0];
      assert.equal(record.data.value, 2.49, 'newest first');
      assert.deepEqual(record.version, {
        definitionVersion: 'ai-visibility/3',
        runId: 'run-249',
        importId: null,
        computedAt: '2026-11-20T00:00:00.000Z',
      });
      assert.deepEqual(record.confidence, { value: 0.5, interval: [0.4, 0.6] });
      assert.deepEqual(record.evidence, [{ type: 'query', ref: 'q249' }]);
      const wrongCursor = await call(app, 'GET', `${base}&dataset=reports&cursor=${first.body.nextCursor}`, {
        key: a.keys.read,
      });
      assert.equal(wrongCursor.status, 400);
      assert.equal(wrongCursor.body.error.code, 'GEO_INVALID_CURSOR');
    });

    test('signals: Idempotency-Key required, same key and body replays, a different body is a 409; all or nothing', async (t) => {
      const { app, a, db } = await buildGeo(t, target);
      const body = { workspaceId: a.workspaceId, records: [metric(1)] };
      const noKey = await call(app, 'POST', '/api/v1/geo/signals', { key: a.keys.signals, body });
      assert.equal(noKey.status, 400);
      const first = await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.signals,
        body,
        headers: { 'idempotency-key': 'k1' },
      });
      const replay = await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.signals,
        body,
        headers: { 'idempotency-key': 'k1' },
      });
      assert.equal(first.status, 201);
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, first.body);
      const conflict = await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.signals,
        body: { ...body, records: [metric(2)] },
        headers: { 'idempotency-key': 'k1' },
      });
      assert.equal(conflict.status, 409);
      assert.equal(conflict.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
      const partial = await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.signals,
        headers: { 'idempotency-key': 'k2' },
        body: {
          workspaceId: a.workspaceId,
          records: [metric(3), { dataset: 'metrics', definitionVersion: 'v', data: {} }],
        },
      });
      assert.equal(partial.status, 400);
      assert.match(partial.body.error.message, /records\[1\]: metrics carry a confidence/);
      const count = await db
        .selectFrom('dataset_record')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 1, 'the batch with a bad record wrote nothing');
      let n = 0;
      for (const [record, pattern] of [
        [{ dataset: 'recommendations', definitionVersion: 'v', data: {} }, /evidence/],
        [{ dataset: 'experiments', definitionVersion: 'v', data: {} }, /observed or simulated/],
        [{ dataset: 'actions', definitionVersion: 'v', data: {} }, /not written through signals/],
        [{ dataset: 'tracking_events', definitionVersion: 'v', data: {} }, /not written through signals/],
        [{ ...metric(1), confidence: { value: 0.9, interval: [0.1, 0.2] } }, /interval must hold/],
      ] as const) {
        const response = await call(app, 'POST', '/api/v1/geo/signals', {
          key: a.keys.signals,
          headers: { 'idempotency-key': `rule-${n++}` },
          body: { workspaceId: a.workspaceId, records: [record] },
        });
        assert.equal(response.status, 400);
        assert.match(response.body.error.message, pattern);
      }
      assert.equal(
        (
          await call(app, 'POST', '/api/v1/geo/signals', {
            key: a.keys.read,
            body,
            headers: { 'idempotency-key': 'k3' },
          })
        ).status,
        403,
      );
    });

    test('experiments are listed apart: observed by default, simulated on request', async (t) => {
      const { app, a } = await buildGeo(t, target);
      await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.signals,
        headers: { 'idempotency-key': 'exp' },
        body: {
          workspaceId: a.workspaceId,
          records: [
            { dataset: 'experiments', definitionVersion: 'e/1', mode: 'observed', data: { name: 'real' } },
            { dataset: 'experiments', definitionVersion: 'e/1', mode: 'simulated', data: { name: 'what-if' } },
          ],
        },
      });
      const observed = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=experiments`,
        { key: a.keys.read },
      );
      assert.deepEqual(
        observed.body.items.map((e: any) => [e.data.name, e.mode]),
        [['real', 'observed']],
      );
      assert.equal(observed.body.mode, 'observed');
      const simulated = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=experiments&mode=simulated`,
        { key: a.keys.read },
      );
      assert.deepEqual(
        simulated.body.items.map((e: any) => e.data.name),
        ['what-if'],
      );
    });

    test('governed actions: draft (geo:draft) → approval review (geo:write) → approve (geo:approve) → execute (geo:execute), each recorded; wrong state 409', async (t) => {
      const { app, a } = await buildGeo(t, target);
      const key = async (permissions: string[]) =>
        (
          await call(app, 'POST', '/api/v1/geo/keys', {
            key: a.keys.admin,
            body: { name: permissions.join('+'), permissions, scope: { type: 'tenant' } },
          })
        ).body.key as string;
      const drafter = await key(['geo:draft']);
      const approver = await key(['geo:approve']);
      const executor = await key(['geo:execute']);
      const ws = { workspaceId: a.workspaceId };
      assert.equal(
        (await call(app, 'POST', '/api/v1/geo/actions', { key: a.keys.read, body: { ...ws, title: 'x', kind: 'k' } }))
          .status,
        403,
      );
      const draft = await call(app, 'POST', '/api/v1/geo/actions', {
        key: drafter,
        body: { ...ws, title: 'Publish FAQ', kind: 'publish_content' },
      });
      assert.equal(draft.status, 201);
      assert.equal(draft.body.status, 'proposed');
      const id = draft.body.id;
      const move = (k: string, path: string) =>
        call(app, 'POST', `/api/v1/geo/actions/${id}/${path}`, { key: k, body: ws });
      assert.equal((await move(approver, 'approve')).status, 409, 'not in review yet');
      assert.equal((await move(executor, 'execute')).status, 409, 'not approved');
      assert.equal((await move(drafter, 'request-approval')).status, 403, 'needs geo:write');
      assert.equal((await move(a.keys.write, 'request-approval')).body.status, 'approval_review');
      assert.equal((await move(a.keys.write, 'approve')).status, 403, 'needs geo:approve');
      assert.equal((await move(approver, 'approve')).body.status, 'approved');
      const executed = await move(executor, 'execute');
      assert.equal(executed.body.status, 'executed');
      assert.deepEqual(
        executed.body.transitions.map((x: any) => `${x.from}>${x.to}`),
        ['proposed>approval_review', 'approval_review>approved', 'approved>executed'],
      );
      const missing = await call(
        app,
        'GET',
        `/api/v1/geo/actions/0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77?workspaceId=${a.workspaceId}`,
        { key: a.keys.read },
      );
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error.code, 'GEO_ACTION_NOT_FOUND');
      const replay1 = await call(app, 'POST', '/api/v1/geo/actions', {
        key: drafter,
        body: { ...ws, title: 'Once', kind: 'k' },
        headers: { 'idempotency-key': 'once' },
      });
      const replay2 = await call(app, 'POST', '/api/v1/geo/actions', {
        key: drafter,
        body: { ...ws, title: 'Once', kind: 'k' },
        headers: { 'idempotency-key': 'once' },
      });
      assert.equal(replay2.body.id, replay1.body.id);
    });
  });
}
