// Runtime webhooks: HTTPS-only registration, a signing secret shown once, turn and flow-execution events delivered
// through the engine's one outbox with Standard Webhooks signatures (verified with the `standardwebhooks`
// package), retries with a stable webhook-id, the delivery log, roles, realm isolation, limits, deletion.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { createOutboxWorker, parseTraceparent } from '@keel/core';
import { Webhook } from 'standardwebhooks';
import { createExecutionWorker } from '../src/executions/execution-worker.ts';
import { newId } from '../src/ids.ts';
import { publishedFlow } from './execution-helper.ts';
import { startReceiver, until } from './helper.ts';
import {
  buildRuntime,
  type RuntimeUnderTest,
  roleToken,
  setupAgent,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

const HOOKS = '/api/v1/runtime/webhooks';

/** The delivery worker of the engine under test (retries after 100 and 200 ms). */
function startWorker(t: { after(fn: () => Promise<void>): void }, engine: RuntimeUnderTest) {
  const worker = createOutboxWorker({
    db: engine.ctx.db,
    allowPrivate: true,
    timeoutMs: 5000,
    retryScheduleMs: [100, 200],
    pollIntervalMs: 20,
    resolveTarget: (message) => engine.ctx.destinations.resolve(message.target),
  });
  worker.start();
  t.after(() => worker.stop());
  return worker;
}

/** An in-process execution worker for the engine under test, stopped and unregistered after the test. */
function startExecutions(t: { after(fn: () => Promise<void>): void }, engine: RuntimeUnderTest) {
  const executions = createExecutionWorker(engine.runtime, { concurrency: 2, leaseMs: 3000, pollMs: 50 });
  engine.runtime.extensions.executions = executions;
  executions.start();
  t.after(async () => {
    await executions.stop();
    engine.runtime.extensions.executions = undefined;
  });
}

for (const target of testDatabaseTargets()) {
  describe(`runtime webhooks (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('a chat turn is delivered signed through the outbox; the signature verifies with standardwebhooks', async (t) => {
      const engine = await shared.fresh();
      startWorker(t, engine);
      const receiver = await startReceiver(t);
      const upstream = await startUpstream(t, () => ({ content: 'We have 4 mugs.' }));
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const token = engine.a.token;
      const created = await engine.call('POST', HOOKS, {
        token,
        body: { url: receiver.url, events: ['execution.succeeded'], description: 'Order system' },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.match(created.body.signing_secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.deepEqual(created.body.events, ['execution.succeeded']);
      const read = await engine.call('GET', `${HOOKS}/${created.body.id}`, { token });
      assert.equal(read.status, 200);
      assert.equal(read.body.signing_secret, undefined);
      const list = await engine.call('GET', HOOKS, { token });
      assert.deepEqual(
        list.body.data.map((hook: any) => hook.id),
        [created.body.id],
      );
      assert.ok(!JSON.stringify(list.body).includes(created.body.signing_secret));

      const chat = await engine.call('POST', '/api/v1/runtime/ai/chat', {
        token,
        body: { agent_id: ids.agentId, messages: [{ role: 'user', content: 'Do you have mugs?' }] },
      });
      assert.equal(chat.status, 200, JSON.stringify(chat.body));
      await until(() => receiver.received.length >= 1);
      const delivery = receiver.received[0]!;
      new Webhook(created.body.signing_secret).verify(delivery.raw, delivery.headers as Record<string, string>);
      assert.throws(() =>
        new Webhook(created.body.signing_secret).verify(
          delivery.raw.replace('succeeded', 'failed'),
          delivery.headers as Record<string, string>,
        ),
      );
      assert.match(String(delivery.headers['webhook-signature']), /^v1,/);
      assert.equal(delivery.body.type, 'execution.succeeded');
      assert.equal(delivery.body.realm_id, engine.a.realmId);
      assert.equal(delivery.body.version, '2026-11-26');
      assert.equal(delivery.body.data.execution_id, chat.body.execution_id);
      assert.equal(delivery.body.data.trace_id, chat.body.trace_id);
      assert.equal(delivery.body.data.usage.cost, chat.body.usage.cost);
      assert.ok(!delivery.raw.includes('mugs'), 'no chat text is sent');

      const log = await engine.call('GET', `${HOOKS}/${created.body.id}/deliveries`, { token });
      assert.equal(log.status, 200);
      await until(async () => {
        const page = await engine.call('GET', `${HOOKS}/${created.body.id}/deliveries`, { token });
        return page.body.data[0]?.status === 'delivered';
      });
      const delivered = (await engine.call('GET', `${HOOKS}/${created.body.id}/deliveries`, { token })).body.data[0];
      assert.equal(delivered.id, delivery.headers['webhook-id']);
      assert.equal(delivered.event, 'execution.succeeded');
      assert.equal(delivered.log[0].status_code, 200);
    });

    test('deliveries continue the originating trace: traceparent to the receiver, the delivery in the timeline', async (t) => {
      const engine = await shared.fresh();
      startWorker(t, engine);
      // The first attempt of each message fails (503): its retry continues the same trace too.
      const receiver = await startReceiver(t, (received) =>
        receiver.received.filter((r) => r.headers['webhook-id'] === received.headers['webhook-id']).length === 1
          ? 503
          : 200,
      );
      const upstream = await startUpstream(t, () => ({ content: 'We have 4 mugs.' }));
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const token = engine.a.token;
      await engine.call('POST', HOOKS, { token, body: { url: receiver.url, events: ['*'] } });
      startExecutions(t, engine);
      const flow = await publishedFlow(engine, token, 'Traced', [
        { id: 'done', type: 'output', action: 'RESPOND', content: 'Done' },
      ]);
      const newTrace = () => randomBytes(16).toString('hex');
      const header = (trace: string) => ({ traceparent: `00-${trace}-${randomBytes(8).toString('hex')}-01` });

      // Concurrent chat turns (one group commit on SQLite), each in its own trace, and an async flow execution
      // whose event is queued later by the execution worker.
      const turnTraces = [newTrace(), newTrace(), newTrace()];
      const turns = await Promise.all(
        turnTraces.map((trace) =>
          engine.call('POST', '/api/v1/runtime/ai/chat', {
            token,
            headers: header(trace),
            body: { agent_id: ids.agentId, messages: [{ role: 'user', content: 'Do you have mugs?' }] },
          }),
        ),
      );
      for (const [i, turn] of turns.entries()) {
        assert.equal(turn.status, 200, JSON.stringify(turn.body));
        assert.equal(turn.body.trace_id, turnTraces[i]);
      }
      const flowTrace = newTrace();
      const queued = await engine.call('POST', '/api/v1/runtime/executions', {
        token,
        headers: header(flowTrace),
        body: { flow_id: flow.id, input: {} },
      });
      assert.equal(queued.status, 202, JSON.stringify(queued.body));
      const delivered = () => receiver.received.filter((r) => r.body.type !== 'flow_execution.started');
      const deliveredOf = (type: string, executionId: string) =>
        delivered().filter((r) => r.body.type === type && r.body.data.execution_id === executionId);
      await until(
        () =>
          turns.every((turn) => deliveredOf('execution.succeeded', turn.body.execution_id).length === 2) &&
          deliveredOf('flow_execution.succeeded', queued.body.id).length === 2,
        15_000,
      );
      const traceOf = (r: { headers: Record<string, unknown> }) => parseTraceparent(String(r.headers.traceparent));
      for (const [i, turn] of turns.entries()) {
        const attempts = deliveredOf('execution.succeeded', turn.body.execution_id);
        for (const attempt of attempts) assert.equal(traceOf(attempt)?.traceId, turnTraces[i]);
        assert.notEqual(traceOf(attempts[0]!)?.spanId, traceOf(attempts[1]!)?.spanId, 'one span per attempt');
      }
      for (const attempt of deliveredOf('flow_execution.succeeded', queued.body.id))
        assert.equal(traceOf(attempt)?.traceId, flowTrace);

      // The origin's timeline shows both delivery attempts, children of the chat request, with their answers.
      const [trace] = turnTraces;
      const attempts = deliveredOf('execution.succeeded', turns[0]!.body.execution_id);
      let events: { kind: string; span_id: string; parent_span_id: string; status_code: number; failed: boolean }[] =
        [];
      await until(async () => {
        const timeline = await engine.call('GET', `/api/v1/observability/traces/${trace}`, { token });
        events = timeline.body.events ?? [];
        return events.filter((e) => e.kind === 'webhook_delivery').length === 2;
      });
      const request = events.find((e) => e.kind === 'request')!;
      const deliveries = events.filter((e) => e.kind === 'webhook_delivery');
      assert.deepEqual(
        deliveries.map((e) => e.span_id).sort(),
        attempts.map((a) => traceOf(a)!.spanId).sort(),
        'the timeline records the spans whose traceparent the receiver got',
      );
      for (const delivery of deliveries) assert.equal(delivery.parent_span_id, request.span_id);
      assert.deepEqual(deliveries.map((e) => e.status_code).sort(), [200, 503]);
      assert.deepEqual(deliveries.map((e) => e.failed).sort(), [false, true]);
      // Another realm never sees it.
      const foreign = await engine.call('GET', `/api/v1/observability/traces/${trace}`, { token: engine.b.token });
      assert.equal(foreign.status, 404);
    });

    test('retries keep the webhook-id; flow executions send their state; deletion stops deliveries', async (t) => {
      const engine = await shared.fresh();
      startWorker(t, engine);
      const receiver = await startReceiver(t, (_received, count) => (count === 1 ? 503 : 200));
      const token = engine.a.token;
      const hook = (await engine.call('POST', HOOKS, { token, body: { url: receiver.url, events: ['*'] } })).body;
      startExecutions(t, engine);
      const flow = await publishedFlow(engine, token, 'Notify', [
        { id: 'done', type: 'output', action: 'RESPOND', content: 'Done' },
      ]);
      const execution = await engine.call('POST', '/api/v1/runtime/executions', {
        token,
        body: { flow_id: flow.id, input: {} },
      });
      assert.equal(execution.status, 202, JSON.stringify(execution.body));
      await until(
        () => receiver.received.filter((r) => r.body.type === 'flow_execution.succeeded').length >= 2,
        15_000,
      );
      const attempts = receiver.received.filter((r) => r.body.type === 'flow_execution.succeeded');
      assert.equal(attempts.length, 2, 'the first attempt got a 503 and was retried');
      assert.equal(attempts[0]!.headers['webhook-id'], attempts[1]!.headers['webhook-id']);
      assert.equal(attempts[1]!.body.data.execution_id, execution.body.id);
      assert.equal(attempts[1]!.body.data.flow_id, flow.id);
      new Webhook(hook.signing_secret).verify(attempts[1]!.raw, attempts[1]!.headers as Record<string, string>);

      const deleted = await engine.call('DELETE', `${HOOKS}/${hook.id}`, { token });
      assert.equal(deleted.status, 204);
      assert.equal((await engine.call('GET', `${HOOKS}/${hook.id}`, { token })).status, 404);
      const before = receiver.received.length;
      const again = await engine.call('POST', '/api/v1/runtime/executions', {
        token,
        body: { flow_id: flow.id, input: {} },
      });
      await until(async () => {
        const state = await engine.call('GET', `/api/v1/runtime/executions/${again.body.id}`, { token });
        return state.body.state === 'succeeded';
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.received.length, before, 'a deleted webhook receives nothing');
    });

    test('roles, realm isolation, event names and the per-realm limit', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const url = 'http://127.0.0.1:9/hook';
      const viewer = await roleToken(engine, 'viewer');
      const hook = (await engine.call('POST', HOOKS, { token, body: { url, events: ['execution.failed'] } })).body;
      const denied = await engine.call('POST', HOOKS, { token: viewer, body: { url, events: ['*'] } });
      assert.equal(denied.status, 403);
      assert.equal((await engine.call('DELETE', `${HOOKS}/${hook.id}`, { token: viewer })).status, 403);
      assert.equal((await engine.call('GET', `${HOOKS}/${hook.id}`, { token: viewer })).status, 200);
      assert.equal((await engine.call('GET', HOOKS, {})).status, 401);
      for (const id of [hook.id, newId()]) {
        for (const [method, path] of [
          ['GET', `${HOOKS}/${id}`],
          ['DELETE', `${HOOKS}/${id}`],
          ['GET', `${HOOKS}/${id}/deliveries`],
        ] as const) {
          const answer = await engine.call(method, path, { token: engine.b.token });
          assert.equal(answer.status, 404, `${method} ${path}`);
          assert.equal(answer.body.error.code, 'RUNTIME_NOT_FOUND');
        }
      }
      assert.deepEqual((await engine.call('GET', HOOKS, { token: engine.b.token })).body.data, []);
      const unknown = await engine.call('POST', HOOKS, { token, body: { url, events: ['product.created'] } });
      assert.equal(unknown.status, 400);
      assert.match(unknown.body.error.message, /unknown events: product.created/);
      for (let i = 1; i < 20; i++)
        assert.equal((await engine.call('POST', HOOKS, { token, body: { url, events: ['*'] } })).status, 201);
      const over = await engine.call('POST', HOOKS, { token, body: { url, events: ['*'] } });
      assert.equal(over.status, 409);
      assert.equal(over.body.error.code, 'RUNTIME_LIMIT_REACHED');
    });
  });

  describe(`runtime webhooks without the development switch (${target.dialect})`, () => {
    test('only public HTTPS URLs are accepted; nothing is stored otherwise', async (t) => {
      const engine = await buildRuntime(t, target, { env: { KEEL_ALLOW_PRIVATE_URLS: 'false' } });
      const token = engine.a.token;
      for (const url of [
        'http://hooks.example.com/keel',
        'https://127.0.0.1/hook',
        'https://10.0.0.8/hook',
        'https://localhost/hook',
        'https://[::1]/hook',
      ]) {
        const answer = await engine.call('POST', HOOKS, { token, body: { url, events: ['*'] } });
        assert.equal(answer.status, 400, url);
        assert.equal(answer.body.error.code, 'OUTBOUND_URL_REJECTED', url);
      }
      assert.deepEqual((await engine.call('GET', HOOKS, { token })).body.data, []);
    });
  });
}
