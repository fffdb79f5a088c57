import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyCrawler, classifyReferral } from '../src/events/classify.ts';
import { buildGeo, call, testDatabaseTargets } from './helper.ts';
import { sharedGeo } from './measure-suite.ts';

test('AI referrers and AI crawler user agents are classified', () => {
  assert.equal(classifyReferral('chatgpt.com', null), 'chatgpt');
  assert.equal(classifyReferral('www.perplexity.ai', null), 'perplexity');
  assert.equal(classifyReferral('gemini.google.com', null), 'gemini');
  assert.equal(classifyReferral('copilot.microsoft.com', null), 'copilot');
  assert.equal(classifyReferral('claude.ai', null), 'claude');
  assert.equal(classifyReferral('www.google.com', null), null);
  assert.equal(classifyReferral(null, 'chatgpt.com'), 'chatgpt');
  assert.equal(classifyReferral('notchatgpt.com', null), null, 'suffix match is on a label boundary');
  assert.equal(
    classifyCrawler(
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
    ),
    'GPTBot',
  );
  assert.equal(classifyCrawler('Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)'), 'ClaudeBot');
  assert.equal(classifyCrawler('Mozilla/5.0 (compatible; PerplexityBot/1.0)'), 'PerplexityBot');
  assert.equal(classifyCrawler('Mozilla/5.0 (X11; Linux x86_64) Chrome/120'), null);
});

for (const target of testDatabaseTargets()) {
  describe(`tracking events (${target.dialect})`, () => {
    // One app for the tests that look at their own tenants only; tests that read the whole event table, move the
    // clock or change the configuration build their own.
    const freshGeo = sharedGeo(target);
    const send = (app: any, token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
      call(app, 'POST', '/api/v2/geo/events', {
        body,
        headers: { ...(token ? { 'x-site-token': token } : {}), 'user-agent': 'Mozilla/5.0 Test', ...headers },
      });

    test('a site token (header or body) is required: 401 otherwise; an API key is not a site token', async () => {
      const { app, a } = await freshGeo();
      const events = [{ type: 'pageview', url: 'https://shop.example/p' }];
      assert.equal((await send(app, undefined, { events })).status, 401);
      const bad = await send(app, 'geosite_nope', { events });
      assert.equal(bad.status, 401);
      assert.equal(bad.body.error.code, 'GEO_INVALID_SITE_TOKEN');
      assert.equal((await send(app, a.keys.admin, { events })).status, 401);
      assert.equal((await send(app, a.siteToken, { events })).status, 202);
      assert.equal((await send(app, undefined, { siteToken: a.siteToken, events })).status, 202);
    });

    test('JSON sent as text/plain (sendBeacon) is accepted on the event endpoint only; bad JSON is a 400', async (t) => {
      const { app, a, db } = await buildGeo(t, target);
      const batch = JSON.stringify({
        siteToken: a.siteToken,
        events: [{ type: 'pageview', url: 'https://shop.example/b' }],
      });
      const beacon = await app.inject({
        method: 'POST',
        url: '/api/v2/geo/events',
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
        payload: batch,
      });
      assert.equal(beacon.statusCode, 202, beacon.body);
      assert.deepEqual(beacon.json(), { accepted: 1, rejected: [] });
      assert.equal((await db.selectFrom('tracking_event').selectAll().execute()).length, 1);
      const broken = await app.inject({
        method: 'POST',
        url: '/api/v2/geo/events',
        headers: { 'content-type': 'text/plain' },
        payload: '{"events": [',
      });
      assert.equal(broken.statusCode, 400);
      const elsewhere = await app.inject({
        method: 'POST',
        url: '/api/v1/geo/privacy',
        headers: { 'content-type': 'text/plain', authorization: `Bearer ${a.keys.admin}` },
        payload: JSON.stringify({ workspaceId: a.workspaceId, type: 'access', subject: 's' }),
      });
      assert.equal(elsewhere.statusCode, 415, 'other routes still need application/json');
    });

    test("202 with per-event rejections; accepted events are stored in the site token's workspace", async (t) => {
      const { app, a, db } = await buildGeo(t, target);
      const response = await send(app, a.siteToken, {
        events: [
          { type: 'pageview', url: 'https://shop.example/a?email=x@y.z#frag' },
          { type: 'bogus' },
          'not an object',
          { type: 'event' },
          {
            type: 'event',
            name: 'signup',
            properties: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])),
          },
          { type: 'event', name: 'signup', properties: { 'bad key!': 1 } },
          { type: 'event', name: 'signup', properties: { long: 'x'.repeat(257) } },
          { type: 'event', name: 'signup', properties: { nested: { a: 1 } } },
          { type: 'event', name: 'signup', occurredAt: '2001-01-01T00:00:00Z' },
          { type: 'event', name: 'signup', properties: { plan: 'pro', seats: 3, trial: true } },
        ],
      });
      assert.equal(response.status, 202);
      assert.equal(response.body.accepted, 2);
      assert.deepEqual(
        response.body.rejected.map((r: any) => [r.index, r.code]),
        [
          [1, 'INVALID_TYPE'],
          [2, 'INVALID_EVENT'],
          [3, 'NAME_REQUIRED'],
          [4, 'TOO_MANY_PROPERTIES'],
          [5, 'INVALID_PROPERTY_KEY'],
          [6, 'PROPERTY_VALUE_TOO_LONG'],
          [7, 'INVALID_PROPERTY_VALUE'],
          [8, 'TIME_OUT_OF_RANGE'],
        ],
      );
      const rows = await db.selectFrom('tracking_event').selectAll().execute();
      assert.equal(rows.length, 2);
      assert.ok(rows.every((row) => row.workspace_id === a.workspaceId));
      assert.equal(rows[0]!.path, '/a', 'query string and fragment are never stored');
      const tooMany = await send(app, a.siteToken, {
        events: Array.from({ length: 501 }, () => ({ type: 'pageview' })),
      });
      assert.equal(tooMany.status, 400);
      assert.equal((await send(app, a.siteToken, { events: [] })).status, 400);
    });

    test('without analytics consent nothing identifying is stored; with it a visitor id, hashed user id and properties', async (t) => {
      const { app, a, db } = await buildGeo(t, target);
      const event = {
        type: 'event',
        name: 'signup',
        url: 'https://shop.example/x',
        referrer: 'https://chatgpt.com/c/123',
        userId: 'jane@example.org',
        properties: { plan: 'pro' },
      };
      await send(app, a.siteToken, { events: [event] }, { 'x-forwarded-for': '203.0.113.9' });
      await send(app, a.siteToken, { consent: { analytics: true }, events: [event] });
      const rows = await db.selectFrom('tracking_event').selectAll().orderBy('id').execute();
      assert.equal(rows.length, 2);
      const [anonymous, consented] = rows as [any, any];
      assert.equal(Number(anonymous.consent), 0);
      assert.equal(anonymous.visitor_id, null);
      assert.equal(anonymous.subject_hash, null);
      assert.equal(anonymous.properties, null);
      assert.equal(anonymous.ai_engine, 'chatgpt');
      assert.equal(anonymous.referrer_host, 'chatgpt.com');
      assert.equal(Number(consented.consent), 1);
      assert.match(consented.visitor_id, /^[0-9a-f]{32}$/);
      assert.match(consented.subject_hash, /^[0-9a-f]{64}$/);
      assert.deepEqual(JSON.parse(consented.properties), { plan: 'pro' });
      const everything = JSON.stringify(await db.selectFrom('tracking_event').selectAll().execute());
      for (const secret of ['jane@example.org', 'Mozilla', '127.0.0.1', '203.0.113.9', '/c/123']) {
        assert.equal(everything.includes(secret), false, `${secret} is not stored`);
      }
    });

    test('AI crawler hits are kept as their own kind and show in the tracking_events dataset', async () => {
      const { app, a } = await freshGeo();
      await send(
        app,
        a.siteToken,
        { events: [{ type: 'pageview', url: 'https://shop.example/docs' }] },
        { 'user-agent': 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)' },
      );
      await send(app, a.siteToken, {
        events: [{ type: 'pageview', url: 'https://shop.example/docs', userAgent: 'ClaudeBot/1.0' }],
      });
      const page = await call(
        app,
        'GET',
        `/api/v1/geo/analytics?workspaceId=${a.workspaceId}&dataset=tracking_events&limit=10`,
        { key: a.keys.read },
      );
      assert.equal(page.status, 200);
      assert.deepEqual(
        page.body.items.map((e: any) => [e.kind, e.crawler]),
        [
          ['ai_crawler', 'ClaudeBot'],
          ['ai_crawler', 'GPTBot'],
        ],
      );
    });

    test("the visitor salt rotates daily and the previous day's salt is destroyed", async (t) => {
      const geo = await buildGeo(t, target);
      const { app, a, db } = geo;
      geo.clock.now = new Date('2026-11-20T12:00:00Z');
      const event = { type: 'pageview', url: 'https://shop.example/' };
      await send(app, a.siteToken, { consent: { analytics: true }, events: [event, event] });
      geo.clock.now = new Date('2026-11-21T00:00:01Z');
      await send(app, a.siteToken, { consent: { analytics: true }, events: [event] });
      const rows = await db.selectFrom('tracking_event').select('visitor_id').orderBy('id').execute();
      assert.equal(rows[0]!.visitor_id, rows[1]!.visitor_id, 'same visitor, same day');
      assert.notEqual(rows[1]!.visitor_id, rows[2]!.visitor_id, 'a new day, a new id');
      const salts = await db.selectFrom('daily_salt').select('day').execute();
      assert.deepEqual(
        salts.map((s) => s.day),
        ['2026-11-21'],
      );
    });

    test('CORS preflight and the tracker script are served without a key', async () => {
      const { app } = await freshGeo();
      const preflight = await app.inject({
        method: 'OPTIONS',
        url: '/api/v2/geo/events',
        headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(preflight.statusCode, 204);
      assert.equal(preflight.headers['access-control-allow-origin'], '*');
      const script = await app.inject({ method: 'GET', url: '/api/v2/geo/tracker.js' });
      assert.equal(script.statusCode, 200);
      assert.match(String(script.headers['content-type']), /javascript/);
      assert.match(script.body, /consent/);
    });

    test('a revoked site token is refused', async (t) => {
      const { app, a, db } = await buildGeo(t, target, { GEO_SITE_TOKEN_CACHE_MS: '0' });
      const events = [{ type: 'pageview' }];
      assert.equal((await send(app, a.siteToken, { events })).status, 202);
      const token = await db
        .selectFrom('site_token')
        .select('id')
        .where('tenant_id', '=', a.tenantId)
        .executeTakeFirstOrThrow();
      assert.equal(
        (await call(app, 'DELETE', `/api/v1/geo/site-tokens/${token.id}`, { key: a.keys.admin })).status,
        204,
      );
      assert.equal((await send(app, a.siteToken, { events })).status, 401);
    });
  });
}
