import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { createWorkspace } from '../src/tenancy/tenancy-service.ts';
import { bucketOf } from '../src/views/view-query.ts';
import { call, testDatabaseTargets } from './helper.ts';
import { type SuiteGeo as GeoUnderTest, sharedGeo } from './measure-suite.ts';

const CHROMIUM = '/usr/bin/chromium';
const METRICS = ['mention_rate', 'citation_rate', 'share_of_voice'];
const ENGINES = ['gpt', 'sonar', 'claude', null];

/** 250 metric records over 5 days: metric i%3, engine i%4 (null = all engines), value (i*37 % 100)/100. */
function metricRecord(i: number) {
  const day = 1 + (i % 5);
  return {
    dataset: 'metrics',
    definitionVersion: 'v/1',
    key: `m${i}`,
    computedAt: `2026-11-0${day}T${String(i % 24).padStart(2, '0')}:00:00Z`,
    data: { metric: METRICS[i % 3], engineName: ENGINES[i % 4], value: ((i * 37) % 100) / 100, sampleCount: i },
    confidence: { value: 0.5, interval: [0.4, 0.6] },
  };
}

async function seedMetrics(geo: GeoUnderTest, workspaceId = geo.a.workspaceId) {
  const written = await call(geo.app, 'POST', '/api/v1/geo/signals', {
    key: geo.a.keys.signals,
    headers: { 'idempotency-key': `seed-${workspaceId}` },
    body: { workspaceId, records: Array.from({ length: 250 }, (_, i) => metricRecord(i)) },
  });
  assert.equal(written.status, 201);
}

/** Every record of a dataset through the analytics endpoint (the dataset query), newest first. */
async function allRecords(geo: GeoUnderTest, dataset: string, workspaceId = geo.a.workspaceId) {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await call(
      geo.app,
      'GET',
      `/api/v1/geo/analytics?workspaceId=${workspaceId}&dataset=${dataset}&limit=500${cursor ? `&cursor=${cursor}` : ''}`,
      { key: geo.a.keys.read },
    );
    assert.equal(page.status, 200);
    items.push(...page.body.items);
    cursor = page.body.nextCursor;
  } while (cursor);
  return items;
}

/** Every row of a view, following its cursors. */
async function allRows(geo: GeoUnderTest, viewId: string, limit: number, workspaceId = geo.a.workspaceId) {
  const items: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: any = await call(
      geo.app,
      'GET',
      `/api/v1/geo/saved-views/${viewId}/rows?workspaceId=${workspaceId}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { key: geo.a.keys.read },
    );
    assert.equal(page.status, 200, JSON.stringify(page.body));
    items.push(...page.body.items);
    cursor = page.body.nextCursor;
    pages++;
  } while (cursor);
  return { items, pages };
}

async function saveView(geo: GeoUnderTest, body: Record<string, unknown>, key = geo.a.keys.write) {
  return call(geo.app, 'POST', '/api/v1/geo/saved-views', {
    key,
    body: { workspaceId: geo.a.workspaceId, ...body },
  });
}

test('time buckets follow the reporting time zone (day, ISO week from Monday, month, hour)', () => {
  assert.equal(bucketOf('2026-11-20T23:30:00.000Z', 'day', 'UTC'), '2026-11-20');
  assert.equal(bucketOf('2026-11-20T23:30:00.000Z', 'day', 'Europe/Berlin'), '2026-11-21');
  assert.equal(bucketOf('2026-11-20T23:30:00.000Z', 'hour', 'Asia/Kolkata'), '2026-11-21T05:00');
  assert.equal(
    bucketOf('2026-11-22T12:00:00.000Z', 'week', 'UTC'),
    '2026-11-16',
    'a Sunday belongs to the week of Monday 16th',
  );
  assert.equal(bucketOf('2026-11-23T00:30:00.000Z', 'week', 'UTC'), '2026-11-23');
  assert.equal(bucketOf('2026-11-30T23:30:00.000Z', 'month', 'Pacific/Auckland'), '2026-12');
  assert.equal(bucketOf(null, 'day', 'UTC'), null);
});

for (const target of testDatabaseTargets()) {
  describe(`saved views (${target.dialect})`, () => {
    const freshGeo = sharedGeo(target);
    test('create, list, read, change (versioned, optimistic), delete; views are the saved_views dataset and only these routes write it', async () => {
      const geo = await freshGeo();
      const { app, a } = geo;
      const created = await saveView(geo, {
        name: '  Mention rate by engine ',
        description: 'Bars per engine',
        dataset: 'metrics',
        filters: [{ field: 'data.metric', op: 'eq', value: 'mention_rate' }],
        groupBy: [{ field: 'data.engineName' }],
        aggregates: [{ fn: 'avg', field: 'data.value' }],
        chart: { type: 'bar', x: 'data.engineName', y: 'avg(data.value)' },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const view = created.body;
      assert.equal(view.name, 'Mention rate by engine');
      assert.equal(view.version, 1);
      assert.equal(view.workspaceId, a.workspaceId);
      assert.equal(view.mode, null);
      assert.equal(created.headers.location, `/api/v1/geo/saved-views/${view.id}?workspaceId=${a.workspaceId}`);

      const read = await call(app, 'GET', `/api/v1/geo/saved-views/${view.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(read.status, 200);
      assert.deepEqual(read.body, view);
      const listed = await call(app, 'GET', `/api/v1/geo/saved-views?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.deepEqual(
        listed.body.items.map((v: any) => v.id),
        [view.id],
      );
      const asDataset = await allRecords(geo, 'saved_views');
      assert.equal(asDataset.length, 1);
      assert.equal(asDataset[0].id, view.id);
      assert.equal(asDataset[0].data.name, 'Mention rate by engine');
      assert.equal(asDataset[0].version.definitionVersion, 'saved_view@1');

      const changed = await call(app, 'PATCH', `/api/v1/geo/saved-views/${view.id}`, {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, expectedVersion: 1, name: 'Renamed', chart: null },
      });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assert.equal(changed.body.version, 2);
      assert.equal(changed.body.name, 'Renamed');
      assert.equal(changed.body.chart, null);
      assert.deepEqual(changed.body.groupBy, view.groupBy, 'fields not sent are kept');
      assert.equal(changed.body.createdAt, view.createdAt);
      const stale = await call(app, 'PATCH', `/api/v1/geo/saved-views/${view.id}`, {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, expectedVersion: 1, name: 'Lost update' },
      });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.error.code, 'GEO_VIEW_VERSION_CONFLICT');
      const bad = await call(app, 'PATCH', `/api/v1/geo/saved-views/${view.id}`, {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, columns: ['data.value'] },
      });
      assert.equal(bad.status, 400, 'columns do not go with grouping');
      const after = await call(app, 'GET', `/api/v1/geo/saved-views/${view.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(after.body.name, 'Renamed', 'a refused change writes nothing');
      assert.equal(after.body.version, 2);
      const ungrouped = await call(app, 'PATCH', `/api/v1/geo/saved-views/${view.id}`, {
        key: a.keys.write,
        body: { workspaceId: a.workspaceId, groupBy: [], columns: ['data.value'] },
      });
      assert.equal(ungrouped.status, 200, JSON.stringify(ungrouped.body));
      assert.deepEqual(ungrouped.body.aggregates, [], 'no implied count once the grouping is gone');

      // Views are written only through their routes, which check them.
      const viaSignals = await call(app, 'POST', '/api/v1/geo/signals', {
        key: a.keys.signals,
        headers: { 'idempotency-key': 'sv' },
        body: { workspaceId: a.workspaceId, records: [{ dataset: 'saved_views', definitionVersion: 'x', data: {} }] },
      });
      assert.equal(viaSignals.status, 400);
      assert.equal(viaSignals.body.error.code, 'GEO_DATASET_NOT_WRITABLE');

      // Idempotent create: the same key and body replay the first answer; another body is a 409.
      const body = { name: 'Idem', dataset: 'alerts' };
      const first = await call(app, 'POST', '/api/v1/geo/saved-views', {
        key: a.keys.write,
        headers: { 'idempotency-key': 'view-1' },
        body: { workspaceId: a.workspaceId, ...body },
      });
      const again = await call(app, 'POST', '/api/v1/geo/saved-views', {
        key: a.keys.write,
        headers: { 'idempotency-key': 'view-1' },
        body: { workspaceId: a.workspaceId, ...body },
      });
      assert.equal(first.status, 201);
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body.id, first.body.id);
      const reused = await call(app, 'POST', '/api/v1/geo/saved-views', {
        key: a.keys.write,
        headers: { 'idempotency-key': 'view-1' },
        body: { workspaceId: a.workspaceId, ...body, name: 'Other' },
      });
      assert.equal(reused.status, 409);

      const removed = await call(app, 'DELETE', `/api/v1/geo/saved-views/${view.id}?workspaceId=${a.workspaceId}`, {
        key: a.keys.write,
      });
      assert.equal(removed.status, 204);
      for (const method of ['GET', 'DELETE'] as const) {
        const gone = await call(app, method, `/api/v1/geo/saved-views/${view.id}?workspaceId=${a.workspaceId}`, {
          key: a.keys.write,
        });
        assert.equal(gone.status, 404, method);
        assert.equal(gone.body.error.code, 'GEO_VIEW_NOT_FOUND');
      }
      const page = await call(app, 'GET', `/api/v1/geo/saved-views?workspaceId=${a.workspaceId}&limit=1`, {
        key: a.keys.read,
      });
      assert.deepEqual(
        page.body.items.map((v: any) => v.id),
        [first.body.id],
      );
      assert.equal(page.body.nextCursor, null);
    });

    test('a view that does not fit its dataset is a 400 naming the part at fault, and nothing is written', async () => {
      const geo = await freshGeo();
      const cases: [Record<string, unknown>, RegExp][] = [
        [
          { dataset: 'metrics', filters: [{ field: 'valu', op: 'eq', value: 1 }] },
          /filters\[0\]\.field: "valu" is not a field of metrics/,
        ],
        [
          { dataset: 'metrics', filters: [{ field: 'confidence.value', op: 'gt', value: 'high' }] },
          /filters\[0\]\.value: this field holds numbers/,
        ],
        [
          { dataset: 'metrics', filters: [{ field: 'computedAt', op: 'gte', value: 'yesterday' }] },
          /filters\[0\]\.value: this field is a time/,
        ],
        [
          { dataset: 'tracking_events', filters: [{ field: 'consent', op: 'gt', value: true }] },
          /boolean field takes eq/,
        ],
        [
          { dataset: 'metrics', filters: [{ field: 'data.value', op: 'in', value: [] }] },
          /in takes a list of 1 to 100 values/,
        ],
        [
          { dataset: 'metrics', filters: [{ field: 'data.__proto__', op: 'exists', value: true }] },
          /is not a field of metrics/,
        ],
        [{ dataset: 'metrics', filters: [{ field: 'data.a.b.c.d', op: 'exists', value: true }] }, /up to 3 levels/],
        [
          { dataset: 'tracking_events', filters: [{ field: 'data.metric', op: 'eq', value: 'x' }] },
          /properties\.<name>/,
        ],
        [{ dataset: 'metrics', groupBy: [{ field: 'data.metric', bucket: 'day' }] }, /only time fields are bucketed/],
        [
          { dataset: 'metrics', groupBy: [{ field: 'data.metric' }], columns: ['data.value'] },
          /columns: a grouped view/,
        ],
        [{ dataset: 'metrics', aggregates: [{ fn: 'avg', field: 'key' }] }, /avg needs a numeric field/],
        [{ dataset: 'metrics', aggregates: [{ fn: 'sum' }] }, /sum needs a field/],
        [
          { dataset: 'metrics', groupBy: [{ field: 'data.metric' }], sort: { field: 'data.value', direction: 'asc' } },
          /sort\.field: a grouped view orders and charts by data\.metric, count/,
        ],
        [{ dataset: 'metrics', chart: { type: 'line', x: 'computedAt', y: 'key' } }, /chart\.y: a numeric field/],
        [{ dataset: 'metrics', mode: 'observed' }, /mode applies to the experiments dataset only/],
        [{ dataset: 'saved_views' }, /dataset/],
        [
          {
            dataset: 'metrics',
            filters: Array.from({ length: 21 }, () => ({ field: 'key', op: 'exists', value: true })),
          },
          /filters/,
        ],
        [{ dataset: 'metrics', name: '   ' }, /name: 1 to 100 characters/],
        [{ dataset: 'metrics', columns: ['key', 'key'] }, /columns: each field once/],
      ];
      for (const [body, message] of cases) {
        const response = await saveView(geo, { name: 'v', ...body });
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.match(response.body.error.message, message, JSON.stringify(body));
      }
      const list = await call(geo.app, 'GET', `/api/v1/geo/saved-views?workspaceId=${geo.a.workspaceId}`, {
        key: geo.a.keys.read,
      });
      assert.deepEqual(list.body.items, []);
      // A cursor of another view (or none this route issued) is a 400.
      const one = await saveView(geo, { name: 'one', dataset: 'metrics' });
      const two = await saveView(geo, { name: 'two', dataset: 'metrics' });
      await seedMetrics(geo);
      const page = await call(
        geo.app,
        'GET',
        `/api/v1/geo/saved-views/${one.body.id}/rows?workspaceId=${geo.a.workspaceId}&limit=10`,
        { key: geo.a.keys.read },
      );
      const foreignCursor = await call(
        geo.app,
        'GET',
        `/api/v1/geo/saved-views/${two.body.id}/rows?workspaceId=${geo.a.workspaceId}&cursor=${page.body.nextCursor}`,
        { key: geo.a.keys.read },
      );
      assert.equal(foreignCursor.status, 400);
      assert.equal(foreignCursor.body.error.code, 'GEO_INVALID_CURSOR');
    });

    test("permissions, and isolation: another workspace's view is the same 404 as a missing one", async () => {
      const geo = await freshGeo();
      const { app, a, b } = geo;
      const view = (await saveView(geo, { name: 'mine', dataset: 'metrics' })).body;
      const url = (ws: string) => `/api/v1/geo/saved-views/${view.id}?workspaceId=${ws}`;
      assert.equal((await saveView(geo, { name: 'x', dataset: 'metrics' }, a.keys.read)).status, 403);
      assert.equal((await saveView(geo, { name: 'x', dataset: 'metrics' }, a.keys.signals)).status, 403);
      assert.equal(
        (
          await call(app, 'PATCH', `/api/v1/geo/saved-views/${view.id}`, {
            key: a.keys.read,
            body: { workspaceId: a.workspaceId, name: 'x' },
          })
        ).status,
        403,
      );
      assert.equal((await call(app, 'DELETE', url(a.workspaceId), { key: a.keys.read })).status, 403);
      assert.equal((await call(app, 'GET', url(a.workspaceId), { key: a.keys.signals })).status, 403);
      assert.equal((await call(app, 'GET', url(a.workspaceId))).status, 401);
      // Another tenant: its key has no access to the workspace at all.
      assert.equal((await call(app, 'GET', url(a.workspaceId), { key: b.keys.admin })).status, 403);
      // Its own workspace: the view is not there — the same answer as a view that never existed.
      const foreign = await call(app, 'GET', url(b.workspaceId), { key: b.keys.admin });
      const missing = await call(
        app,
        'GET',
        `/api/v1/geo/saved-views/0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77?workspaceId=${b.workspaceId}`,
        { key: b.keys.admin },
      );
      assert.equal(foreign.status, 404);
      assert.deepEqual(
        { ...foreign.body.error, traceId: '', message: '' },
        { ...missing.body.error, traceId: '', message: '' },
      );
      // The same tenant's other workspace does not see it either, for any operation.
      const other = a.workspaceIds[1];
      for (const [method, path, body] of [
        ['GET', url(other), undefined],
        ['GET', `/api/v1/geo/saved-views/${view.id}/rows?workspaceId=${other}`, undefined],
        ['DELETE', url(other), undefined],
        ['PATCH', `/api/v1/geo/saved-views/${view.id}`, { workspaceId: other, name: 'stolen' }],
      ] as const) {
        const response = await call(app, method, path, { key: a.keys.admin, ...(body ? { body } : {}) });
        assert.equal(response.status, 404, `${method} ${path}`);
      }
      const otherList = await call(app, 'GET', `/api/v1/geo/saved-views?workspaceId=${other}`, { key: a.keys.read });
      assert.deepEqual(otherList.body.items, []);
      assert.equal((await call(app, 'GET', url(a.workspaceId), { key: a.keys.read })).body.name, 'mine');
      const malformed = await call(app, 'GET', `/api/v1/geo/saved-views/not-a-uuid?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(malformed.status, 400);
    });

    test("a view's rows are the dataset query's rows, filtered, sorted, projected and grouped", async () => {
      const geo = await freshGeo();
      await seedMetrics(geo);
      await seedMetrics(geo, geo.a.workspaceIds[1]);
      const records = await allRecords(geo, 'metrics');
      assert.equal(records.length, 250);

      // No filters: exactly the analytics pages, page by page.
      const plain = (await saveView(geo, { name: 'all', dataset: 'metrics' })).body;
      const analyticsPage = await call(
        geo.app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${geo.a.workspaceId}&dataset=metrics&limit=100`,
        { key: geo.a.keys.read },
      );
      const viewPage = await call(
        geo.app,
        'GET',
        `/api/v1/geo/saved-views/${plain.id}/rows?workspaceId=${geo.a.workspaceId}&limit=100`,
        { key: geo.a.keys.read },
      );
      assert.equal(viewPage.body.kind, 'records');
      assert.deepEqual(viewPage.body.items, analyticsPage.body.items);
      const walked = await allRows(geo, plain.id, 100);
      assert.deepEqual(walked.items, records);
      assert.equal(walked.pages, 3);

      // Filters (and-ed), in the dataset's order.
      const filtered = (
        await saveView(geo, {
          name: 'mention ≥ .5',
          dataset: 'metrics',
          filters: [
            { field: 'data.metric', op: 'eq', value: 'mention_rate' },
            { field: 'data.value', op: 'gte', value: 0.5 },
            { field: 'data.engineName', op: 'in', value: ['gpt', 'sonar', null] },
            { field: 'computedAt', op: 'lt', value: '2026-11-05' },
          ],
        })
      ).body;
      const expected = records.filter(
        (r) =>
          r.data.metric === 'mention_rate' &&
          r.data.value >= 0.5 &&
          ['gpt', 'sonar', null].includes(r.data.engineName) &&
          r.version.computedAt < '2026-11-05',
      );
      assert.ok(expected.length > 5 && expected.length < 60, `${expected.length}`);
      assert.deepEqual((await allRows(geo, filtered.id, 7)).items, expected);

      // Sorted and projected: by value descending, ties newest first.
      const sorted = (
        await saveView(geo, {
          name: 'top values',
          dataset: 'metrics',
          filters: [{ field: 'data.metric', op: 'ne', value: 'share_of_voice' }],
          sort: { field: 'data.value', direction: 'desc' },
          columns: ['data.metric', 'data.value', 'confidence.low'],
        })
      ).body;
      const sortedExpected = records
        .filter((r) => r.data.metric !== 'share_of_voice')
        .sort((x, y) => y.data.value - x.data.value || (x.id < y.id ? 1 : -1))
        .map((r) => ({ id: r.id, 'data.metric': r.data.metric, 'data.value': r.data.value, 'confidence.low': 0.4 }));
      const sortedRows = await allRows(geo, sorted.id, 40);
      assert.deepEqual(sortedRows.items, sortedExpected);

      // Grouped: per metric and engine, count and average, in group order.
      const grouped = (
        await saveView(geo, {
          name: 'by metric and engine',
          dataset: 'metrics',
          groupBy: [{ field: 'data.metric' }, { field: 'data.engineName' }],
          aggregates: [{ fn: 'count' }, { fn: 'avg', field: 'data.value' }, { fn: 'max', field: 'data.sampleCount' }],
        })
      ).body;
      const groups = new Map<string, { metric: string; engine: string | null; n: number; sum: number; max: number }>();
      for (const r of records) {
        const id = `${r.data.metric}|${r.data.engineName}`;
        const g = groups.get(id) ?? { metric: r.data.metric, engine: r.data.engineName, n: 0, sum: 0, max: -1 };
        g.n++;
        g.sum += r.data.value;
        g.max = Math.max(g.max, r.data.sampleCount);
        groups.set(id, g);
      }
      const groupedPage = await call(
        geo.app,
        'GET',
        `/api/v1/geo/saved-views/${grouped.id}/rows?workspaceId=${geo.a.workspaceId}&limit=500`,
        { key: geo.a.keys.read },
      );
      assert.equal(groupedPage.body.kind, 'groups');
      assert.deepEqual(groupedPage.body.columns, [
        'data.metric',
        'data.engineName',
        'count',
        'avg(data.value)',
        'max(data.sampleCount)',
      ]);
      assert.equal(groupedPage.body.items.length, 12);
      const engineOrder = (e: string | null) => (e === null ? '~' : e);
      const groupExpected = [...groups.values()]
        .sort((x, y) =>
          x.metric !== y.metric
            ? x.metric < y.metric
              ? -1
              : 1
            : engineOrder(x.engine) < engineOrder(y.engine)
              ? -1
              : 1,
        )
        .map((g) => ({
          'data.metric': g.metric,
          'data.engineName': g.engine,
          count: g.n,
          'avg(data.value)': g.sum / g.n,
          'max(data.sampleCount)': g.max,
        }));
      assert.equal(groupedPage.body.items.length, groupExpected.length);
      groupedPage.body.items.forEach((row: any, i: number) => {
        const want = groupExpected[i]!;
        assert.equal(row['data.metric'], want['data.metric']);
        assert.equal(row['data.engineName'], want['data.engineName'], 'nulls last');
        assert.equal(row.count, want.count);
        assert.ok(Math.abs(row['avg(data.value)'] - want['avg(data.value)']) < 1e-9);
        assert.equal(row['max(data.sampleCount)'], want['max(data.sampleCount)']);
      });
      // Paged groups: the same rows across pages.
      assert.deepEqual((await allRows(geo, grouped.id, 5)).items, groupedPage.body.items);

      // Time buckets: per day in the workspace's zone, sorted by count descending.
      const daily = (
        await saveView(geo, {
          name: 'per day',
          dataset: 'metrics',
          groupBy: [{ field: 'computedAt', bucket: 'day' }],
          sort: { field: 'count', direction: 'desc' },
        })
      ).body;
      const days = await allRows(geo, daily.id, 100);
      assert.deepEqual(
        days.items.map((d: any) => [d.computedAt, d.count]),
        [
          ['2026-11-01', 50],
          ['2026-11-02', 50],
          ['2026-11-03', 50],
          ['2026-11-04', 50],
          ['2026-11-05', 50],
        ],
      );

      // A filter nothing passes: one page, no rows, no cursor.
      const none = (
        await saveView(geo, { name: 'none', dataset: 'metrics', filters: [{ field: 'key', op: 'eq', value: 'zz' }] })
      ).body;
      const empty = await call(
        geo.app,
        'GET',
        `/api/v1/geo/saved-views/${none.id}/rows?workspaceId=${geo.a.workspaceId}`,
        { key: geo.a.keys.read },
      );
      assert.deepEqual(
        { items: empty.body.items, next: empty.body.nextCursor, scanned: empty.body.scanned },
        { items: [], next: null, scanned: 250 },
      );
    });

    test('sorted pages keep a bounded cursor (long sort values) and continue after a row that is gone', async () => {
      const geo = await freshGeo();
      const records = Array.from({ length: 6 }, (_, i) => ({
        dataset: 'content',
        definitionVersion: 'c/1',
        key: `c${i}`,
        data: { note: `${String.fromCharCode(97 + i)}${'x'.repeat(450)}`, rank: i },
      }));
      const written = await call(geo.app, 'POST', '/api/v1/geo/signals', {
        key: geo.a.keys.signals,
        headers: { 'idempotency-key': 'long' },
        body: { workspaceId: geo.a.workspaceId, records },
      });
      assert.equal(written.status, 201);
      const byNote = (
        await saveView(geo, { name: 'by note', dataset: 'content', sort: { field: 'data.note', direction: 'asc' } })
      ).body;
      const walked = await allRows(geo, byNote.id, 1);
      assert.deepEqual(
        walked.items.map((r: any) => r.key),
        ['c0', 'c1', 'c2', 'c3', 'c4', 'c5'],
      );
      assert.equal(walked.pages, 6);

      const byRank = (
        await saveView(geo, { name: 'by rank', dataset: 'content', sort: { field: 'data.rank', direction: 'asc' } })
      ).body;
      const url = `/api/v1/geo/saved-views/${byRank.id}/rows?workspaceId=${geo.a.workspaceId}&limit=2`;
      const first = await call(geo.app, 'GET', url, { key: geo.a.keys.read });
      assert.deepEqual(
        first.body.items.map((r: any) => r.key),
        ['c0', 'c1'],
      );
      // The last row shown disappears before the next page (e.g. a privacy deletion): the page goes on after its value.
      await geo.db.deleteFrom('dataset_record').where('id', '=', first.body.items[1].id).execute();
      const next = await call(geo.app, 'GET', `${url}&cursor=${encodeURIComponent(first.body.nextCursor)}`, {
        key: geo.a.keys.read,
      });
      assert.deepEqual(
        next.body.items.map((r: any) => r.key),
        ['c2', 'c3'],
      );
    });

    test("time buckets are the workspace's reporting time zone's days", async () => {
      const geo = await freshGeo();
      const tokyo = await createWorkspace(
        geo.db,
        { tenantId: geo.a.tenantId, name: 'Tokyo', timezone: 'Asia/Tokyo' },
        geo.ctx.secrets,
      );
      const written = await call(geo.app, 'POST', '/api/v1/geo/signals', {
        key: geo.a.keys.signals,
        headers: { 'idempotency-key': 'tz' },
        body: {
          workspaceId: tokyo.workspaceId,
          records: ['2026-11-01T14:59:00Z', '2026-11-01T15:00:00Z', '2026-11-01T20:00:00Z'].map((at) => ({
            dataset: 'alerts',
            definitionVersion: 'a/1',
            computedAt: at,
            data: {},
          })),
        },
      });
      assert.equal(written.status, 201, JSON.stringify(written.body));
      const view = await call(geo.app, 'POST', '/api/v1/geo/saved-views', {
        key: geo.a.keys.write,
        body: {
          workspaceId: tokyo.workspaceId,
          name: 'alerts per day',
          dataset: 'alerts',
          groupBy: [{ field: 'computedAt', bucket: 'day' }],
        },
      });
      const rows = await allRows(geo, view.body.id, 10, tokyo.workspaceId);
      assert.deepEqual(
        rows.items.map((r: any) => [r.computedAt, r.count]),
        [
          ['2026-11-01', 1],
          ['2026-11-02', 2],
        ],
        '15:00 UTC is already the next day in Tokyo',
      );
    });

    test('tracking events: AI referrals per engine from the events dataset', async () => {
      const geo = await freshGeo();
      const referrers = [
        'https://chatgpt.com/',
        'https://www.perplexity.ai/',
        'https://chatgpt.com/c/1',
        'https://example.org/',
      ];
      const sent = await call(geo.app, 'POST', '/api/v2/geo/events', {
        headers: { 'x-site-token': geo.a.siteToken },
        body: {
          consent: { analytics: true },
          events: referrers.map((referrer) => ({ type: 'pageview', url: 'https://shop.example/p', referrer })),
        },
      });
      assert.equal(sent.status, 202);
      const view = (
        await saveView(geo, {
          name: 'AI referrals',
          dataset: 'tracking_events',
          filters: [{ field: 'aiEngine', op: 'exists', value: true }],
          groupBy: [{ field: 'aiEngine' }],
          sort: { field: 'count', direction: 'desc' },
          chart: { type: 'bar', x: 'aiEngine', y: 'count' },
        })
      ).body;
      const rows = await allRows(geo, view.id, 10);
      assert.deepEqual(
        rows.items.map((r: any) => [r.aiEngine, r.count]),
        [
          ['chatgpt', 2],
          ['perplexity', 1],
        ],
      );
    });

    test('a dashboard widget charts a saved view; the share page draws it', async () => {
      const geo = await freshGeo();
      await seedMetrics(geo);
      const view = (
        await saveView(geo, {
          name: 'Mention rate by engine',
          dataset: 'metrics',
          filters: [{ field: 'data.metric', op: 'eq', value: 'mention_rate' }],
          groupBy: [{ field: 'data.engineName' }],
          aggregates: [{ fn: 'avg', field: 'data.value' }],
          chart: { type: 'bar', x: 'data.engineName', y: 'avg(data.value)' },
        })
      ).body;
      const series = (
        await saveView(geo, {
          name: 'Citation rate over time',
          dataset: 'metrics',
          filters: [
            { field: 'data.metric', op: 'eq', value: 'citation_rate' },
            { field: 'data.engineName', op: 'eq', value: 'gpt' },
          ],
          chart: { type: 'line', x: 'computedAt', y: 'data.value' },
        })
      ).body;
      // A view of another tenant's workspace: never drawn in this workspace's dashboard.
      const foreign = await call(geo.app, 'POST', '/api/v1/geo/saved-views', {
        key: geo.b.keys.write,
        body: {
          workspaceId: geo.b.workspaceId,
          name: 'theirs',
          dataset: 'metrics',
          chart: { type: 'line', x: 'computedAt', y: 'data.value' },
        },
      });
      await call(geo.app, 'POST', '/api/v1/geo/signals', {
        key: geo.b.keys.signals,
        headers: { 'idempotency-key': 'b-seed' },
        body: { workspaceId: geo.b.workspaceId, records: [metricRecord(1)] },
      });
      const dashboard = await call(geo.app, 'POST', '/api/v1/geo/signals', {
        key: geo.a.keys.signals,
        headers: { 'idempotency-key': 'dash' },
        body: {
          workspaceId: geo.a.workspaceId,
          records: [
            {
              dataset: 'dashboards',
              definitionVersion: 'dash/1',
              key: 'views',
              data: {
                title: 'Views',
                widgets: [
                  { view: view.id },
                  { title: 'Citations', view: series.id },
                  { title: 'Foreign', type: 'line', view: foreign.body.id },
                ],
              },
            },
          ],
        },
      });
      assert.equal(dashboard.status, 201);
      const share = await call(geo.app, 'POST', '/api/v1/geo/dashboards/views/shares', {
        key: geo.a.keys.write,
        body: { workspaceId: geo.a.workspaceId },
      });
      assert.equal(share.status, 201);
      const read = await call(geo.app, 'GET', '/api/v1/geo/shared-dashboard', {
        headers: { 'x-share-token': share.body.token },
      });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      const [bars, line, foreignWidget] = read.body.dashboard.widgets;
      const rows = (await allRows(geo, view.id, 100)).items;
      assert.deepEqual(
        { title: bars.title, type: bars.type, source: bars.source, viewId: bars.viewId, metric: bars.metric },
        { title: 'Mention rate by engine', type: 'bar', source: 'view', viewId: view.id, metric: null },
      );
      assert.deepEqual(
        bars.points,
        rows.map((r: any) => ({ at: null, label: r['data.engineName'] ?? '(none)', value: r['avg(data.value)'] })),
      );
      const records = (await allRecords(geo, 'metrics')).filter(
        (r) => r.data.metric === 'citation_rate' && r.data.engineName === 'gpt',
      );
      assert.equal(line.type, 'line');
      assert.deepEqual(
        line.points.map((p: any) => [p.at, p.value]),
        records
          .map((r) => [r.version.computedAt, r.data.value])
          .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)),
        'a time series is drawn in time order',
      );
      assert.deepEqual({ viewId: foreignWidget.viewId, points: foreignWidget.points }, { viewId: null, points: [] });

      if (!fs.existsSync(CHROMIUM)) return;
      await geo.app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(geo.app.server.address() as AddressInfo).port}`;
      const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-chromium-'));
      const context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
      // Closed before the app (the after hooks close the app first, which would wait for the browser's connections).
      try {
        const page = await context.newPage();
        await page.goto(`${base}${share.body.url}`);
        await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
        assert.equal(await page.locator('[data-widget]').count(), 3);
        assert.equal(await page.locator('[data-widget="w1"] svg rect.bar').count(), bars.points.length);
        assert.deepEqual(
          await page.locator('[data-widget="w1"] svg text.label[text-anchor="middle"]').allTextContents(),
          bars.points.map((p: any) => p.label.slice(0, 10)),
        );
        assert.equal(await page.locator('[data-widget="w2"] svg circle.point').count(), line.points.length);
        assert.equal(await page.locator('[data-widget="w3"] .empty').count(), 1);
      } finally {
        await context.close();
        fs.rmSync(userDataDir, { recursive: true, force: true });
      }
    });
  });
}
