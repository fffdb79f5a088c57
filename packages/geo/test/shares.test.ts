import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { sha256Hex } from '@keel/core';
import { chromium } from 'playwright-core';
import { buildGeo, call, type GeoUnderTest, testDatabaseTargets } from './helper.ts';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

async function seedDashboard(geo: GeoUnderTest): Promise<string> {
  const { app, a } = geo;
  const days = ['2026-11-01', '2026-11-08', '2026-11-15'];
  const records = [
    ...days.map((day, i) => ({
      dataset: 'metrics',
      definitionVersion: 'v/1',
      computedAt: `${day}T00:00:00Z`,
      data: { metric: 'ai_visibility', value: 0.3 + i / 10 },
      confidence: { value: 0.3 + i / 10, interval: [0.2, 0.9] },
    })),
    ...days.map((day, i) => ({
      dataset: 'metrics',
      definitionVersion: 'v/1',
      computedAt: `${day}T00:00:00Z`,
      data: { metric: 'ai_referrals', value: 10 * (i + 1) },
      confidence: { value: 0.5, interval: [0.4, 0.6] },
    })),
    {
      dataset: 'dashboards',
      definitionVersion: 'dash/1',
      key: 'ai-overview',
      data: {
        title: 'AI visibility overview',
        description: 'Weekly',
        widgets: [
          { title: 'Visibility', type: 'line', metric: 'ai_visibility' },
          { title: 'Referrals', type: 'bar', metric: 'ai_referrals' },
        ],
      },
    },
  ];
  const written = await call(app, 'POST', '/api/v1/geo/signals', {
    key: a.keys.admin,
    headers: { 'idempotency-key': 'dash' },
    body: { workspaceId: a.workspaceId, records },
  });
  assert.equal(written.status, 201);
  return written.body.ids.at(-1);
}

async function share(geo: GeoUnderTest, dashboardId: string, hours = 24) {
  return call(geo.app, 'POST', `/api/v1/geo/dashboards/${dashboardId}/shares`, {
    key: geo.a.keys.write,
    body: { workspaceId: geo.a.workspaceId, expiresInHours: hours },
  });
}

for (const target of testDatabaseTargets()) {
  describe(`dashboard shares (${target.dialect})`, () => {
    test('create (token ≥ 128 bits, shown once, stored hashed), read by token without a key, read-only and one dashboard', async (t) => {
      const geo = await buildGeo(t, target);
      const dashboardId = await seedDashboard(geo);
      const created = await share(geo, dashboardId);
      assert.equal(created.status, 201);
      const token: string = created.body.token;
      assert.ok(token.length - 'geoshare_'.length >= 22, '≥ 128 bits of base62');
      assert.match(created.body.url, /^\/shared\/dashboard#token=/);
      const stored = await geo.db.selectFrom('dashboard_share').selectAll().execute();
      assert.equal(stored[0]!.token_hash, sha256Hex(token));
      assert.equal(JSON.stringify(stored).includes(token), false);
      const read = await call(geo.app, 'GET', '/api/v1/geo/shared-dashboard', { headers: { 'x-share-token': token } });
      assert.equal(read.status, 200);
      assert.equal(read.body.dashboard.id, dashboardId);
      assert.equal(read.body.dashboard.title, 'AI visibility overview');
      assert.deepEqual(
        read.body.dashboard.widgets.map((w: any) => w.points.length),
        [3, 3],
      );
      const list = await call(
        geo.app,
        'GET',
        `/api/v1/geo/dashboards/${dashboardId}/shares?workspaceId=${geo.a.workspaceId}`,
        { key: geo.a.keys.read },
      );
      assert.equal(list.body.items.length, 1);
      assert.equal(JSON.stringify(list.body).includes(token), false);
      // The token opens nothing else: it is no API key.
      assert.equal(
        (
          await call(geo.app, 'GET', `/api/v1/geo/analytics?workspaceId=${geo.a.workspaceId}&dataset=metrics`, {
            key: token,
          })
        ).status,
        401,
      );
      const notDashboard = await call(
        geo.app,
        'POST',
        `/api/v1/geo/dashboards/0195f3a2-7c1e-7d4b-9a61-3e2f1c0b5a77/shares`,
        { key: geo.a.keys.write, body: { workspaceId: geo.a.workspaceId } },
      );
      assert.equal(notDashboard.status, 404);
      const readOnlyKey = await call(geo.app, 'POST', `/api/v1/geo/dashboards/${dashboardId}/shares`, {
        key: geo.a.keys.read,
        body: { workspaceId: geo.a.workspaceId },
      });
      assert.equal(readOnlyKey.status, 403);
      const foreign = await call(geo.app, 'POST', `/api/v1/geo/dashboards/${dashboardId}/shares`, {
        key: geo.b.keys.admin,
        body: { workspaceId: geo.a.workspaceId },
      });
      assert.equal(foreign.status, 403);
    });

    test('a dashboard is shared by its key as well as its id; an unknown key is a 404', async (t) => {
      const geo = await buildGeo(t, target);
      const dashboardId = await seedDashboard(geo);
      const byKey = await share(geo, 'ai-overview');
      assert.equal(byKey.status, 201, JSON.stringify(byKey.body));
      assert.equal(byKey.body.dashboardId, dashboardId);
      const read = await call(geo.app, 'GET', '/api/v1/geo/shared-dashboard', {
        headers: { 'x-share-token': byKey.body.token },
      });
      assert.equal(read.status, 200);
      const unknown = await share(geo, 'no-such-dashboard');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'GEO_DASHBOARD_NOT_FOUND');
    });

    test("the OpenAPI bound of expiresInHours is the server's own (GEO_SHARE_MAX_DAYS × 24)", async (t) => {
      const geo = await buildGeo(t, target, { GEO_SHARE_MAX_DAYS: '3' });
      const dashboardId = await seedDashboard(geo);
      const openapi = (await geo.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const body =
        openapi.paths['/api/v1/geo/dashboards/{dashboardId}/shares'].post.requestBody.content['application/json']
          .schema;
      assert.equal(body.properties.expiresInHours.maximum, 72);
      assert.equal(body.properties.expiresInHours.default, 72, 'the default fits inside the bound');
      assert.equal((await share(geo, dashboardId, 72)).status, 201);
      const over = await share(geo, dashboardId, 73);
      assert.equal(over.status, 400);
      assert.match(over.body.error.message, /expiresInHours must be at most 72 \(got 73\)/);
      const byDefault = await call(geo.app, 'POST', `/api/v1/geo/dashboards/${dashboardId}/shares`, {
        key: geo.a.keys.write,
        body: { workspaceId: geo.a.workspaceId },
      });
      assert.equal(byDefault.status, 201);
    });

    test('revoked, expired and unknown tokens get the same answer', async (t) => {
      const geo = await buildGeo(t, target);
      const dashboardId = await seedDashboard(geo);
      const revoked = await share(geo, dashboardId);
      const expiring = await share(geo, dashboardId, 1);
      assert.equal(
        (
          await call(
            geo.app,
            'DELETE',
            `/api/v1/geo/dashboards/${dashboardId}/shares/${revoked.body.id}?workspaceId=${geo.a.workspaceId}`,
            { key: geo.a.keys.write },
          )
        ).status,
        204,
      );
      geo.clock.now = new Date(Date.now() + 2 * 3_600_000);
      const answers = [];
      for (const token of [
        revoked.body.token,
        expiring.body.token,
        'geoshare_unknownunknownunknownunknown',
        undefined,
      ]) {
        const response = await call(geo.app, 'GET', '/api/v1/geo/shared-dashboard', {
          headers: token ? { 'x-share-token': token } : {},
        });
        assert.equal(response.status, 404);
        answers.push({ ...response.body.error, traceId: '' });
      }
      for (const answer of answers) assert.deepEqual(answer, answers[0]);
    });

    test('the shared dashboard renders as a page with charts in headless Chromium', {
      skip: fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (run .ci/install-chromium)`,
    }, async (t: TestContext) => {
      const geo = await buildGeo(t, target);
      const dashboardId = await seedDashboard(geo);
      const created = await share(geo, dashboardId);
      const revoked = await share(geo, dashboardId);
      await call(
        geo.app,
        'DELETE',
        `/api/v1/geo/dashboards/${dashboardId}/shares/${revoked.body.id}?workspaceId=${geo.a.workspaceId}`,
        { key: geo.a.keys.write },
      );
      await geo.app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(geo.app.server.address() as AddressInfo).port}`;
      const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-chromium-'));
      const context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_FLAGS,
      });
      t.after(async () => {
        await context.close();
        fs.rmSync(userDataDir, { recursive: true, force: true });
      });
      const page = await context.newPage();
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().includes('404')) blocked.push(message.text());
      });
      page.on('response', (response) => {
        if (response.status() >= 400 && !response.url().endsWith('/favicon.ico'))
          blocked.push(`${response.status()} ${response.url()}`);
      });
      await page.goto(`${base}${created.body.url}`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
      assert.equal(await page.textContent('h1'), 'AI visibility overview');
      assert.equal(await page.locator('[data-widget]').count(), 2);
      assert.equal(await page.locator('[data-type="line"] svg circle.point').count(), 3);
      assert.equal(await page.locator('[data-type="bar"] svg rect.bar').count(), 3);
      assert.deepEqual(blocked, [], 'no CSP violations or failed loads');
      const screenshot = await page.screenshot();
      assert.ok(screenshot.length > 1000);
      if (process.env.GEO_SCREENSHOT) fs.writeFileSync(process.env.GEO_SCREENSHOT, screenshot);

      const other = await context.newPage();
      await other.goto(`${base}${revoked.body.url}`);
      await other.waitForSelector('body[data-ready="error"]', { timeout: 15_000 });
      assert.match((await other.textContent('#message')) ?? '', /not valid or has expired/);
    });
  });
}
