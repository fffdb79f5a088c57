import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { chromium } from 'playwright-core';
import { buildGeo, testDatabaseTargets } from './helper.ts';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A customer's site on another origin that embeds the tracker. */
async function customerSite(t: TestContext, trackerUrl: string, siteToken: string): Promise<string> {
  const page = `<!doctype html><html><head><title>Shop</title>
<script src="${trackerUrl}" data-site-token="${siteToken}"></script></head>
<body><h1>Shop</h1></body></html>`;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/products/42?utm_source=chatgpt.com`;
}

test('the tracker sends nothing before the consent call, then delivers queued events cross-origin (headless Chromium)', {
  skip: fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (run .ci/install-chromium)`,
}, async (t: TestContext) => {
  const geo = await buildGeo(t, testDatabaseTargets()[0]!);
  await geo.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(geo.app.server.address() as AddressInfo).port}`;
  const site = await customerSite(t, `${base}/api/v2/geo/tracker.js`, geo.a.siteToken);
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
  });
  t.after(async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  });

  const page = await context.newPage();
  const posts: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes('/api/v2/geo/events') && request.method() === 'POST')
      posts.push(request.postData() ?? '');
  });
  await page.goto(site);
  await page.waitForFunction(() => typeof (window as unknown as { keelGeo?: unknown }).keelGeo === 'object');
  await page.evaluate(() => (window as any).keelGeo.track('add_to_cart', { sku: 'SKU-1' }));
  await page.waitForTimeout(1500);
  assert.deepEqual(posts, [], 'nothing is sent before keelGeo.consent(…)');
  assert.equal((await geo.db.selectFrom('tracking_event').selectAll().execute()).length, 0);

  const delivered = page.waitForResponse(
    (response) => response.url().includes('/api/v2/geo/events') && response.request().method() === 'POST',
  );
  await page.evaluate(() => (window as any).keelGeo.consent(true));
  const response = await delivered;
  assert.equal(response.status(), 202);
  assert.deepEqual(await response.json(), { accepted: 2, rejected: [] });
  const rows = await geo.db.selectFrom('tracking_event').selectAll().orderBy('id').execute();
  assert.deepEqual(
    rows.map((row) => [row.kind, row.name, row.path, Number(row.consent)]),
    [
      ['pageview', null, '/products/42', 1],
      ['event', 'add_to_cart', '/products/42', 1],
    ],
  );
  assert.equal(rows[0]!.ai_engine, 'chatgpt', 'utm_source=chatgpt.com is an AI referral');
  assert.deepEqual(JSON.parse(rows[1]!.properties ?? 'null'), { sku: 'SKU-1' });
});

test('navigator.sendBeacon(url, jsonString) (text/plain, no preflight) is accepted from another origin (headless Chromium)', {
  skip: fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (run .ci/install-chromium)`,
}, async (t: TestContext) => {
  const geo = await buildGeo(t, testDatabaseTargets()[0]!);
  await geo.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(geo.app.server.address() as AddressInfo).port}`;
  // Any page on another origin; the tracker is not needed for a hand-written beacon.
  const site = await customerSite(t, `${base}/api/v2/geo/tracker.js`, geo.a.siteToken);
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
  });
  t.after(async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  });
  const page = await context.newPage();
  const seen: { contentType: string; status: number }[] = [];
  page.on('response', async (response) => {
    if (response.url() !== `${base}/api/v2/geo/events`) return;
    seen.push({ contentType: (await response.request().headerValue('content-type')) ?? '', status: response.status() });
  });
  await page.goto(site);
  const queued = await page.evaluate(
    ({ endpoint, siteToken }) =>
      navigator.sendBeacon(
        endpoint,
        JSON.stringify({
          siteToken,
          consent: { analytics: true },
          events: [{ type: 'event', name: 'checkout', url: location.href, occurredAt: new Date().toISOString() }],
        }),
      ),
    { endpoint: `${base}/api/v2/geo/events`, siteToken: geo.a.siteToken },
  );
  assert.equal(queued, true, 'the browser queued the beacon');
  const deadline = Date.now() + 15_000;
  let rows = await geo.db.selectFrom('tracking_event').selectAll().execute();
  while (rows.length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    rows = await geo.db.selectFrom('tracking_event').selectAll().execute();
  }
  assert.deepEqual(
    rows.map((row) => [row.kind, row.name, row.path]),
    [['event', 'checkout', '/products/42']],
  );
  if (seen.length > 0) {
    assert.match(seen[0]!.contentType, /^text\/plain/);
    assert.equal(seen[0]!.status, 202);
  }
});
