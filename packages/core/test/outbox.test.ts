import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import {
  createOutboxTables,
  createOutboxWorker,
  enqueueOutbox,
  generateSigningSecret,
  OUTBOX_ATTEMPT_TABLE,
  OUTBOX_TABLE,
  type OutboxDb,
  withTransaction,
} from '../src/index.ts';
import { openTestDatabase, testDatabaseTargets } from '../src/testing.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function receiver(t: TestContext, answer: (count: number, received: Received) => number | 'hang' = () => 200) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      const status = answer(received.length, entry);
      if (status === 'hang') return;
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

async function outboxDb(
  t: TestContext,
  target: ReturnType<typeof testDatabaseTargets>[number],
): Promise<Kysely<OutboxDb>> {
  const database = await openTestDatabase<OutboxDb>(target, 'core');
  await createOutboxTables(database.db);
  t.after(() => database.close());
  return database.db;
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

for (const target of testDatabaseTargets()) {
  describe(`outbox on ${target.dialect}`, () => {
    test('a message committed with its change is delivered once, signed (Standard Webhooks), with the target headers', async (t) => {
      const db = await outboxDb(t, target);
      const hook = await receiver(t);
      const secret = generateSigningSecret();
      const worker = createOutboxWorker({
        db,
        allowPrivate: true,
        pollIntervalMs: 50,
        resolveTarget: async () => ({ url: hook.url, headers: { 'x-webhook-secret': 'shh' }, signingSecret: secret }),
      });
      t.after(() => worker.stop());
      const [id] = await withTransaction(db, (trx) =>
        enqueueOutbox(trx, [{ target: 'dest-1', topic: 'product.created', payload: '{"event":"product.created"}' }]),
      );
      worker.start();
      worker.notify();
      await until(() => hook.received.length === 1);
      const delivery = hook.received[0]!;
      assert.equal(delivery.headers['x-webhook-secret'], 'shh');
      assert.equal(delivery.headers['content-type'], 'application/json');
      assert.equal(delivery.headers['webhook-id'], id);
      assert.match(String(delivery.headers.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      const verified = new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
      assert.deepEqual(verified, { event: 'product.created' });
      await worker.idle();
      const row = await db.selectFrom(OUTBOX_TABLE).selectAll().where('id', '=', id!).executeTakeFirstOrThrow();
      assert.equal(row.status, 'delivered');
      const attempts = await db.selectFrom(OUTBOX_ATTEMPT_TABLE).selectAll().execute();
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0]!.status_code, 200);
    });

    test('a rolled-back transaction leaves no message', async (t) => {
      const db = await outboxDb(t, target);
      await assert.rejects(
        withTransaction(db, async (trx) => {
          await enqueueOutbox(trx, [{ target: 'd', topic: 'x', payload: '{}' }]);
          throw new Error('business rule failed');
        }),
      );
      assert.equal((await db.selectFrom(OUTBOX_TABLE).selectAll().execute()).length, 0);
    });

    test('failures are retried with the same webhook-id until a 2xx; each attempt is logged', async (t) => {
      const db = await outboxDb(t, target);
      const hook = await receiver(t, (count) => (count < 3 ? 503 : 200));
      const worker = createOutboxWorker({
        db,
        allowPrivate: true,
        pollIntervalMs: 20,
        retryScheduleMs: [50, 50, 50],
        resolveTarget: async () => ({ url: hook.url }),
      });
      t.after(() => worker.stop());
      const [id] = await enqueueOutbox(db, [{ target: 'd', topic: 'order.completed', payload: '{"n":1}' }]);
      worker.start();
      await until(() => hook.received.length === 3);
      assert.deepEqual(new Set(hook.received.map((r) => r.headers['webhook-id'])), new Set([id]));
      await until(
        async () =>
          (await db.selectFrom(OUTBOX_TABLE).select('status').executeTakeFirstOrThrow()).status === 'delivered',
      );
      const attempts = await db.selectFrom(OUTBOX_ATTEMPT_TABLE).selectAll().orderBy('attempt').execute();
      assert.deepEqual(
        attempts.map((a) => [a.attempt, a.status_code, Boolean(a.success)]),
        [
          [1, 503, false],
          [2, 503, false],
          [3, 200, true],
        ],
      );
      assert.match(attempts[0]!.error ?? '', /503/);
    });

    test('attempts run out into failed; a missing target cancels; private targets are refused without the switch', async (t) => {
      const db = await outboxDb(t, target);
      const hook = await receiver(t, () => 500);
      const worker = createOutboxWorker({
        db,
        allowPrivate: false,
        pollIntervalMs: 20,
        retryScheduleMs: [20],
        resolveTarget: async (m) =>
          m.target === 'gone'
            ? undefined
            : { url: m.target === 'private' ? hook.url.replace('http:', 'https:') : hook.url },
      });
      t.after(() => worker.stop());
      await enqueueOutbox(db, [
        { id: 'msg_gone', target: 'gone', topic: 'x', payload: '{}' },
        { id: 'msg_private', target: 'private', topic: 'x', payload: '{}' },
      ]);
      worker.start();
      await until(
        async () =>
          (await db.selectFrom(OUTBOX_TABLE).select('status').where('status', '=', 'pending').execute()).length === 0,
      );
      const rows = await db
        .selectFrom(OUTBOX_TABLE)
        .select(['id', 'status', 'attempts', 'last_error'])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.id, r.status]),
        [
          ['msg_gone', 'cancelled'],
          ['msg_private', 'failed'],
        ],
      );
      assert.match(rows[1]!.last_error ?? '', /url rejected/);
      assert.equal(hook.received.length, 0, 'nothing was sent to the loopback receiver');
    });

    test('a message whose lease ran out (its worker died) is delivered again', async (t) => {
      const db = await outboxDb(t, target);
      const hook = await receiver(t);
      const [id] = await enqueueOutbox(db, [{ target: 'd', topic: 'x', payload: '{}' }]);
      // As a dead worker leaves it: claimed, lease already expired.
      await db
        .updateTable(OUTBOX_TABLE)
        .set({ locked_until: new Date(Date.now() - 1000).toISOString() })
        .execute();
      const worker = createOutboxWorker({
        db,
        allowPrivate: true,
        pollIntervalMs: 20,
        resolveTarget: async () => ({ url: hook.url }),
      });
      t.after(() => worker.stop());
      worker.start();
      await until(() => hook.received.length === 1);
      assert.equal(hook.received[0]!.headers['webhook-id'], id);
    });

    test('two workers on one database deliver every message exactly once', async (t) => {
      const db = await outboxDb(t, target);
      const hook = await receiver(t);
      const make = () =>
        createOutboxWorker({
          db,
          allowPrivate: true,
          pollIntervalMs: 10,
          concurrency: 8,
          resolveTarget: async () => ({ url: hook.url }),
        });
      const a = make();
      const b = make();
      t.after(() => Promise.all([a.stop(), b.stop()]));
      await enqueueOutbox(
        db,
        Array.from({ length: 200 }, (_, i) => ({ target: 'd', topic: 'x', payload: JSON.stringify({ i }) })),
      );
      a.start();
      b.start();
      await until(
        async () =>
          (await db.selectFrom(OUTBOX_TABLE).select('id').where('status', '=', 'delivered').execute()).length === 200,
      );
      assert.equal(hook.received.length, 200);
      assert.equal(new Set(hook.received.map((r) => r.headers['webhook-id'])).size, 200);
    });
  });
}
