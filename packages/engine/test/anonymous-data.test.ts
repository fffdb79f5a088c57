// Anonymous data: ingestion (single and batch) stores nothing guard's detector finds, identifiers only as keyed
// pseudonyms; idempotent replay and conflict; limits; roles; realm isolation; query pages and summary counts.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { hmacPads, pseudonym } from '../src/anonymous/anonymous-service.ts';
import { createPiiScrubber } from '../src/anonymous/pii-scrubber.ts';
import { allPages, tamperCursor } from './cursor-pages.ts';
import {
  type RuntimeUnderTest,
  setupAgent,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

const PII = {
  email: 'jane.doe@example.com',
  phone: '+1 415 555 0100',
  card: '4111 1111 1111 1111',
  ssn: '123-45-6789',
  iban: 'DE89 3704 0044 0532 0130 00',
};
const scanner = createPiiScrubber();

async function viewerToken(engine: RuntimeUnderTest, role: string): Promise<string> {
  const created = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/identities/services`, {
    token: engine.a.token,
    body: { username: `svc-${role}-${Math.random().toString(36).slice(2, 8)}`, role },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const c = created.body.credentials;
  return (await engine.exchange(c.access_key, c.secret_key)).body.access_token;
}

for (const target of testDatabaseTargets()) {
  describe(`anonymous data (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('PII sent through every path never reaches the store; identifiers are pseudonyms', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const one = await engine.call('POST', '/api/v1/data/events', {
        token,
        body: {
          type: 'search',
          subject_id: PII.email,
          session_id: 'sess-1',
          properties: { query: `shoes for ${PII.email}`, phone: PII.phone, count: 4111111111111111, ok: true },
          idempotency_key: 'single-1',
        },
      });
      assert.equal(one.status, 201, JSON.stringify(one.body));
      assert.match(one.body.subject, /^p1_[0-9a-f]{32}$/);
      assert.equal(one.body.properties.query, 'shoes for [EMAIL]');
      assert.equal(one.body.properties.ok, true);
      assert.ok(one.body.redactions >= 3);
      // Card numbers in text are refused at the edge (the engine's payment-data guard), before anything is stored.
      const card = await engine.call('POST', '/api/v1/data/events/batch', {
        token,
        body: { events: [{ type: 'checkout', properties: { number: PII.card } }] },
      });
      assert.equal(card.status, 400);
      assert.equal(card.body.error.code, 'CATALOG_PAYMENT_DATA_REJECTED');
      const { card: _card, ...removable } = PII;
      const batch = await engine.call('POST', '/api/v1/data/events/batch', {
        token,
        body: {
          events: Object.entries(removable).map(([name, value], i) => ({
            type: 'product_view',
            subject_id: value,
            properties: { note: `my ${name} is ${value}`, [`f${i}`]: value, sku: `SKU-${i}` },
          })),
        },
      });
      assert.equal(batch.status, 201, JSON.stringify(batch.body));
      assert.equal(batch.body.recorded, 4);
      assert.equal(batch.body.data[3].properties.sku, 'SKU-3');
      const rows = await engine.ctx.db.selectFrom('anonymous_event').selectAll().execute();
      assert.ok(rows.length >= 5);
      const stored = JSON.stringify(rows);
      for (const value of Object.values(PII)) assert.ok(!stored.includes(value), `${value} stored`);
      for (const row of rows)
        for (const [column, value] of Object.entries(row)) {
          const text = typeof value === 'string' ? value : JSON.stringify(value);
          assert.deepEqual(scanner.find(text), [], `${column}: ${text}`);
          if (typeof value === 'object' && value && !(value instanceof Date))
            for (const leaf of Object.values(value)) assert.deepEqual(scanner.find(String(leaf)), [], String(leaf));
          if (column === 'properties' && typeof value === 'string')
            for (const leaf of Object.values(JSON.parse(value))) assert.deepEqual(scanner.find(String(leaf)), []);
        }
      // Same identifier, same pseudonym within the realm; another realm's key gives another pseudonym.
      const again = await engine.call('POST', '/api/v1/data/events', {
        token,
        body: { type: 'x', subject_id: PII.email },
      });
      assert.equal(again.body.subject, one.body.subject);
      const other = await engine.call('POST', '/api/v1/data/events', {
        token: engine.b.token,
        body: { type: 'x', subject_id: PII.email },
      });
      assert.notEqual(other.body.subject, one.body.subject);
    });

    test('idempotent replay and conflict, single and batch; limits and bad input are 400 with nothing written', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const body = { type: 'cart_created', properties: { items: 2 }, idempotency_key: 'k-1' };
      const first = await engine.call('POST', '/api/v1/data/events', { token, body });
      assert.equal(first.status, 201);
      const replay = await engine.call('POST', '/api/v1/data/events', { token, body });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body.id, first.body.id);
      const conflict = await engine.call('POST', '/api/v1/data/events', {
        token,
        body: { ...body, properties: { items: 3 } },
      });
      assert.equal(conflict.status, 409);
      assert.equal(conflict.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
      // The same key in another realm is another event.
      const foreign = await engine.call('POST', '/api/v1/data/events', { token: engine.b.token, body });
      assert.equal(foreign.status, 201);
      assert.notEqual(foreign.body.id, first.body.id);

      const batch = await engine.call('POST', '/api/v1/data/events/batch', {
        token,
        body: { events: [body, { type: 'y', idempotency_key: 'k-2' }, { type: 'y', idempotency_key: 'k-2' }] },
      });
      assert.equal(batch.status, 201, JSON.stringify(batch.body));
      assert.equal(batch.body.recorded, 1);
      assert.equal(batch.body.replayed, 1);
      assert.equal(batch.body.data[0].id, first.body.id);
      assert.equal(batch.body.data[1].id, batch.body.data[2].id);
      const count = async () =>
        Number(
          (
            await engine.ctx.db
              .selectFrom('anonymous_event')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('realm_id', '=', engine.a.realmId)
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await count();
      const conflicting = await engine.call('POST', '/api/v1/data/events/batch', {
        token,
        body: { events: [{ type: 'z' }, { ...body, properties: { items: 9 } }] },
      });
      assert.equal(conflicting.status, 409);
      assert.equal(await count(), before, 'a conflicting batch writes nothing');

      const tooMany = await engine.call('POST', '/api/v1/data/events/batch', {
        token,
        body: { events: Array.from({ length: 101 }, () => ({ type: 'z' })) },
      });
      assert.equal(tooMany.status, 400);
      const empty = await engine.call('POST', '/api/v1/data/events/batch', { token, body: { events: [] } });
      assert.equal(empty.status, 400);
      for (const bad of [
        { type: 'Bad Type' },
        { type: 'x', properties: { nested: { a: 1 } } },
        { type: 'x', properties: { long: 'a'.repeat(1001) } },
        { type: 'x', occurred_at: new Date(Date.now() + 3_600_000).toISOString() },
        { type: 'x', occurred_at: 'yesterday' },
        { type: 'x', properties: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`p${i}`, i])) },
      ]) {
        const reply = await engine.call('POST', '/api/v1/data/events', { token, body: bad });
        assert.equal(reply.status, 400, JSON.stringify(bad));
        assert.equal(typeof reply.body.error.message, 'string');
      }
      const lateInBatch = await engine.call('POST', '/api/v1/data/events/batch', {
        token,
        body: { events: [{ type: 'z' }, { type: 'z', occurred_at: '2001-01-01T00:00:00Z' }] },
      });
      assert.equal(lateInBatch.status, 400);
      assert.match(lateInBatch.body.error.message, /events\/1\/occurred_at/);
      assert.equal(await count(), before, 'rejected requests write nothing');
    });

    test('roles, authentication and realm isolation', async () => {
      const engine = await shared.fresh();
      const none = await engine.call('POST', '/api/v1/data/events', { body: { type: 'x' } });
      assert.equal(none.status, 401);
      const viewer = await viewerToken(engine, 'viewer');
      const denied = await engine.call('POST', '/api/v1/data/events', { token: viewer, body: { type: 'x' } });
      assert.equal(denied.status, 403);
      const deniedBatch = await engine.call('POST', '/api/v1/data/events/batch', {
        token: viewer,
        body: { events: [{ type: 'x' }] },
      });
      assert.equal(deniedBatch.status, 403);
      const operator = await viewerToken(engine, 'operator');
      const ok = await engine.call('POST', '/api/v1/data/events', { token: operator, body: { type: 'secret_a' } });
      assert.equal(ok.status, 201);
      const read = await engine.call('GET', '/api/v1/data/query', { token: viewer });
      assert.equal(read.status, 200);
      assert.equal(read.body.data.length, 1);
      const foreign = await engine.call('GET', '/api/v1/data/query?type=secret_a', { token: engine.b.token });
      assert.deepEqual(foreign.body.data, []);
      const foreignSummary = await engine.call('GET', '/api/v1/data/summary', { token: engine.b.token });
      assert.equal(foreignSummary.body.total, 0);
      const summary = await engine.call('GET', '/api/v1/data/summary', { token: viewer });
      assert.equal(summary.body.total, 1);
    });

    test('chat turns record session user and assistant events without the chat text, only from then on', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t, () => ({
        content: 'Write to support@acme-outdoor.com for trail shoes.',
      }));
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const token = engine.a.token;
      const session = await engine.call('POST', '/api/v1/runtime/sessions', {
        token,
        body: { agent_id: ids.agentId, channel: 'web' },
      });
      assert.equal(session.status, 201);
      const before = await engine.call('GET', '/api/v1/data/query?source=runtime', { token });
      assert.deepEqual(before.body.data, [], 'nothing is backfilled');
      const chat = await engine.call('POST', '/api/v1/runtime/ai/chat', {
        token,
        body: {
          agent_id: ids.agentId,
          session_id: session.body.session_id,
          resume_token: session.body.resume_token,
          messages: [{ role: 'user', content: `I am ${PII.email}, call me at ${PII.phone} about trail shoes` }],
          metadata: { variables: { shop: 'Acme Outdoor' } },
        },
      });
      assert.equal(chat.status, 200, JSON.stringify(chat.body));
      const events = await engine.call('GET', '/api/v1/data/query?source=runtime', { token });
      assert.deepEqual(events.body.data.map((e: any) => e.type).sort(), [
        'session_assistant_message',
        'session_user_message',
      ]);
      for (const event of events.body.data) {
        assert.match(event.session, /^p1_/);
        assert.equal(event.properties.agent_id, ids.agentId);
      }
      const stored = JSON.stringify(
        await engine.ctx.db
          .selectFrom('anonymous_event')
          .selectAll()
          .where('realm_id', '=', engine.a.realmId)
          .execute(),
      );
      for (const text of [PII.email, PII.phone, 'trail shoes', 'support@acme-outdoor.com', session.body.session_id])
        assert.ok(!stored.includes(text), `${text} stored`);
      const foreign = await engine.call('GET', '/api/v1/data/query?source=runtime', { token: engine.b.token });
      assert.deepEqual(foreign.body.data, []);
    });

    test('the pseudonymization key rotates after 30 days and the old key is overwritten, not kept', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const first = await engine.call('POST', '/api/v1/data/events', {
        token,
        body: { type: 'x', subject_id: 'u-42' },
      });
      assert.match(first.body.subject, /^p1_/);
      const keyBefore = await engine.ctx.db
        .selectFrom('anonymous_pseudonym_key')
        .selectAll()
        .where('realm_id', '=', engine.a.realmId)
        .executeTakeFirstOrThrow();
      assert.ok(!keyBefore.key_sealed.includes(engine.a.realmId));
      engine.advance(31 * 24 * 3600 * 1000);
      const fresh = (await engine.exchange(engine.a.accessKey, engine.a.secretKey)).body.access_token;
      const later = await engine.call('POST', '/api/v1/data/events', {
        token: fresh,
        body: { type: 'x', subject_id: 'u-42' },
      });
      assert.equal(later.status, 201, JSON.stringify(later.body));
      assert.match(later.body.subject, /^p2_/);
      assert.notEqual(later.body.subject.slice(3), first.body.subject.slice(3));
      const keys = await engine.ctx.db
        .selectFrom('anonymous_pseudonym_key')
        .selectAll()
        .where('realm_id', '=', engine.a.realmId)
        .execute();
      assert.equal(keys.length, 1, 'only the current key exists');
      assert.equal(keys[0]!.version, 2);
      assert.notEqual(keys[0]!.key_sealed, keyBefore.key_sealed);
      // The pseudonym is HMAC-SHA256 (RFC 2104), the same as node's createHmac.
      const key = Buffer.alloc(32, 9);
      assert.equal(
        pseudonym({ version: 3, ...hmacPads(key) }, 'subject', 'u-42'),
        `p3_${createHmac('sha256', key).update('subject\nu-42').digest('hex').slice(0, 32)}`,
      );
    });

    test('query filters and pages every event once; summary counts by type and bucket', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const base = Date.now() - 5 * 86_400_000;
      const day = (n: number, h = 10) => {
        const d = new Date(base + n * 86_400_000);
        d.setUTCHours(h, 0, 0, 0);
        return d.toISOString();
      };
      const events = [
        { type: 'search', occurred_at: day(0), subject_id: 'u1' },
        { type: 'search', occurred_at: day(0, 11) },
        { type: 'product_view', occurred_at: day(1) },
        { type: 'order_completed', occurred_at: day(1), subject_id: 'u1' },
        { type: 'search', occurred_at: day(2) },
      ];
      const batch = await engine.call('POST', '/api/v1/data/events/batch', { token, body: { events } });
      assert.equal(batch.status, 201, JSON.stringify(batch.body));
      const { seen, cursors } = await allPages(
        (url) => engine.call('GET', url, { token }),
        '/api/v1/data/query',
        'next_cursor',
      );
      assert.equal(seen.length, 5);
      assert.equal(new Set(seen).size, 5);
      const bad = await engine.call(
        'GET',
        `/api/v1/data/query?cursor=${encodeURIComponent(tamperCursor(cursors[0]!))}`,
        {
          token,
        },
      );
      assert.equal(bad.status, 400);
      const searches = await engine.call('GET', '/api/v1/data/query?type=search', { token });
      assert.equal(searches.body.data.length, 3);
      const subject = batch.body.data[0].subject;
      const bySubject = await engine.call('GET', `/api/v1/data/query?subject=${subject}`, { token });
      assert.deepEqual(bySubject.body.data.map((e: any) => e.type).sort(), ['order_completed', 'search']);
      const window = await engine.call(
        'GET',
        `/api/v1/data/query?from=${encodeURIComponent(day(1, 0))}&to=${encodeURIComponent(day(2, 0))}`,
        { token },
      );
      assert.equal(window.body.data.length, 2);
      const from = encodeURIComponent(day(0, 0));
      const to = encodeURIComponent(day(3, 0));
      const summary = await engine.call('GET', `/api/v1/data/summary?from=${from}&to=${to}`, { token });
      assert.equal(summary.status, 200, JSON.stringify(summary.body));
      assert.equal(summary.body.total, 5);
      assert.deepEqual(summary.body.by_type[0], { type: 'search', count: 3 });
      assert.deepEqual(
        summary.body.buckets.map((b: any) => b.count),
        [2, 2, 1],
      );
      const hourly = await engine.call('GET', `/api/v1/data/summary?bucket=hour&from=${from}&to=${to}&type=search`, {
        token,
      });
      assert.equal(hourly.body.buckets.length, 3);
      assert.equal(hourly.body.buckets[0].start, day(0));
      const tooLong = await engine.call(
        'GET',
        `/api/v1/data/summary?bucket=hour&from=${encodeURIComponent(day(-40))}&to=${to}`,
        { token },
      );
      assert.equal(tooLong.status, 400);
      const reversed = await engine.call('GET', `/api/v1/data/summary?from=${to}&to=${from}`, { token });
      assert.equal(reversed.status, 400);
    });
  });
}
