import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { waitUntil } from '@keel/core/testing';
import { claimExecutions } from '../src/executions/execution-store.ts';
import { createExecutionWorker, type ExecutionWorker } from '../src/executions/execution-worker.ts';
import { stepIdempotencyKey } from '../src/flows/index.ts';
import { inTransaction } from '../src/write.ts';
import { BASE_CONFIG, chainNodes, httpToolInvoker, publishedFlow, startToolDouble } from './execution-helper.ts';
import {
  type RuntimeUnderTest,
  setupAgent,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

const EXECUTIONS = '/api/v1/runtime/executions';

for (const target of testDatabaseTargets()) {
  describe(`durable executions (${target.dialect})`, () => {
    const shared = sharedRuntime(target);
    let double: Awaited<ReturnType<typeof startToolDouble>> | undefined;
    let worker: ExecutionWorker | undefined;
    after(async () => {
      await worker?.stop();
      await double?.close();
    });

    async function setup(): Promise<RuntimeUnderTest> {
      const engine = await shared.fresh();
      if (!double) {
        double = await startToolDouble({ slowMs: 2000 });
        engine.runtime.extensions.flowTools = httpToolInvoker(double.url);
        worker = createExecutionWorker(engine.runtime, { concurrency: 8, leaseMs: 3000, pollMs: 50 });
        engine.runtime.extensions.executions = worker;
        worker.start();
      }
      return engine;
    }

    async function run(engine: RuntimeUnderTest, body: Record<string, unknown>, token = engine.a.token) {
      const created = await engine.call('POST', EXECUTIONS, { token, body });
      assert.equal(created.status, 202, JSON.stringify(created.body));
      return created.body as { id: string; state: string };
    }

    async function settle(engine: RuntimeUnderTest, id: string, states: string[], token = engine.a.token) {
      let last: any;
      await waitUntil(async () => {
        last = (await engine.call('GET', `${EXECUTIONS}/${id}`, { token })).body;
        return states.includes(last.state) && !last.compensation_pending;
      }, 10_000).catch(() => {
        throw new Error(`execution stayed ${JSON.stringify(last)}`);
      });
      return last;
    }

    const events = async (engine: RuntimeUnderTest, id: string) =>
      (await engine.call('GET', `${EXECUTIONS}/${id}/events?limit=500`, { token: engine.a.token })).body.data as {
        id: number;
        type: string;
        data: any;
      }[];

    test('queued → running → succeeded: every step stored before the next, writes keyed by execution and step', async () => {
      const engine = await setup();
      const flow = await publishedFlow(engine, engine.a.token, 'Chain', chainNodes(4));
      const queued = await run(engine, { flow_id: flow.id, input: { order: 'A-1' } });
      assert.equal(queued.state, 'queued');
      const done = await settle(engine, queued.id, ['succeeded']);
      assert.equal(done.action.type, 'DATA_RESULT');
      assert.equal(done.flow_version, 1);
      assert.equal(done.pinned.flow.version, 1);
      assert.match(done.pinned.flow.plan_hash, /^[0-9a-f]{64}$/);
      assert.equal(done.usage.tool_calls, 3);
      assert.ok(done.finished_at);
      const keys = double!.hits.filter((hit) => (hit.arguments as any)?.step !== undefined).slice(-3);
      assert.deepEqual(
        keys.map((hit) => hit.idempotencyKey),
        ['step1#1', 'step2#1', 'step3#1'].map((step) => stepIdempotencyKey(queued.id, step)),
      );
      const log = await events(engine, queued.id);
      assert.deepEqual(
        log.filter((event) => event.type === 'step.done').map((event) => event.data.key),
        ['step1#1', 'step2#1', 'step3#1', 'done#1'],
      );
      const types = log.map((event) => event.type);
      assert.deepEqual(types, [
        'execution.queued',
        'step.done',
        'step.done',
        'step.done',
        'step.done',
        'execution.succeeded',
      ]);
      const actions = await engine.call('GET', `${EXECUTIONS}/${queued.id}/actions`, { token: engine.a.token });
      assert.equal(actions.status, 200);
      assert.equal(actions.body.data.length, 1);
      assert.equal(actions.body.data[0].action.type, 'DATA_RESULT');
      const list = await engine.call('GET', `${EXECUTIONS}?state=succeeded`, { token: engine.a.token });
      assert.ok(list.body.data.some((e: { id: string }) => e.id === queued.id));
    });

    test('POST /flows/{id}/execute runs synchronously: the answer is the settled state; a replay answers the same run', async () => {
      const engine = await setup();
      const flow = await publishedFlow(engine, engine.a.token, 'Sync', chainNodes(3));
      const headers = { 'idempotency-key': 'sync-1' };
      const url = `/api/v1/runtime/flows/${flow.id}/execute`;
      const done = await engine.call('POST', url, { token: engine.a.token, body: { input: {} }, headers });
      assert.equal(done.status, 200, JSON.stringify(done.body));
      assert.equal(done.body.state, 'succeeded');
      assert.equal(done.body.action.type, 'DATA_RESULT');
      const replay = await engine.call('POST', url, { token: engine.a.token, body: { input: {} }, headers });
      assert.equal(replay.status, 200);
      assert.equal(replay.body.id, done.body.id);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      const approval = await publishedFlow(engine, engine.a.token, 'Sync approval', [
        { id: 'check', type: 'approval', message: 'Go?', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'went' },
      ]);
      const waiting = await engine.call('POST', `/api/v1/runtime/flows/${approval.id}/execute`, {
        token: engine.a.token,
        body: {},
      });
      assert.equal(waiting.status, 200);
      assert.equal(waiting.body.state, 'waiting_for_approval');
      const foreign = await engine.call('POST', url, { token: engine.b.token, body: {} });
      assert.equal(foreign.status, 404);
    });

    test('a synchronous all-pure run commits once; a tool node finds its execution stored before it is called', async () => {
      const engine = await setup();
      const pure = await publishedFlow(
        engine,
        engine.a.token,
        'Pure',
        [
          { id: 'in', type: 'input', assign: 'state', next: 'add' },
          {
            id: 'add',
            type: 'transform',
            expression: { object: { n: { '+': [{ var: 'vars.state.n' }, 2] } } },
            assign: 'state',
            next: 'out',
          },
          { id: 'out', type: 'output', action: 'DATA_RESULT', data: { var: 'vars.state' } },
        ],
        { input: { n: 1 } },
      );
      // The background worker's polls are writes too: it is stopped meanwhile (the sync run does not need it).
      await worker!.stop();
      const writes = engine.runtime.engine.writes;
      const run = writes.run;
      let commits = 0;
      writes.run = ((work: Parameters<typeof run>[0]) => {
        commits++;
        return run.call(writes, work);
      }) as typeof run;
      let done: Awaited<ReturnType<typeof engine.call>>;
      try {
        done = await engine.call('POST', `/api/v1/runtime/flows/${pure.id}/execute`, {
          token: engine.a.token,
          body: { input: { n: 1 } },
        });
      } finally {
        writes.run = run;
        worker!.start();
      }
      assert.equal(done.status, 200, JSON.stringify(done.body));
      assert.equal(done.body.state, 'succeeded');
      assert.deepEqual(done.body.action.data, { n: 3 });
      assert.equal(commits, 1, 'the row, its steps, events and final state in one transaction');
      const stored = await engine.call('GET', `${EXECUTIONS}/${done.body.id}`, { token: engine.a.token });
      assert.equal(stored.status, 200);
      assert.deepEqual(stored.body, done.body, 'the answer is the stored execution');
      assert.deepEqual(
        (await events(engine, done.body.id)).map((event) => event.type),
        ['execution.queued', 'step.done', 'step.done', 'step.done', 'execution.succeeded'],
      );

      // A tool node: while the tool server handles the call, the execution is already readable (stored, running).
      const tool = await publishedFlow(engine, engine.a.token, 'Calls out', chainNodes(2, 'slow'));
      const seen: Promise<Awaited<ReturnType<typeof engine.call>>>[] = [];
      double!.onHit((hit) => {
        if (hit.tool === 'slow')
          seen.push(engine.call('GET', `${EXECUTIONS}?flow_id=${tool.id}`, { token: engine.a.token }));
      });
      let called: Awaited<ReturnType<typeof engine.call>>;
      try {
        called = await engine.call('POST', `/api/v1/runtime/flows/${tool.id}/execute`, {
          token: engine.a.token,
          body: { input: {} },
        });
      } finally {
        double!.onHit(undefined);
      }
      assert.equal(called.status, 200, JSON.stringify(called.body));
      assert.equal(called.body.state, 'succeeded');
      assert.equal(seen.length, 1);
      const during = await seen[0]!;
      assert.equal(during.status, 200);
      assert.deepEqual(
        during.body.data.map((execution: { id: string; state: string }) => [execution.id, execution.state]),
        [[called.body.id, 'running']],
        'stored before the tool was called',
      );
    });

    test('the input contract, an inactive flow and an unknown agent are refused before anything is queued', async () => {
      const engine = await setup();
      const flow = await publishedFlow(engine, engine.a.token, 'Contract', chainNodes(2), {
        config: {
          contract: { input: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] } },
        },
      });
      const missing = await engine.call('POST', EXECUTIONS, { token: engine.a.token, body: { flow_id: flow.id } });
      assert.equal(missing.status, 400);
      assert.match(missing.body.error.message, /input\.order is required/);
      const typed = await engine.call('POST', EXECUTIONS, {
        token: engine.a.token,
        body: { flow_id: flow.id, input: { order: 5 } },
      });
      assert.equal(typed.status, 400);
      const agent = await engine.call('POST', EXECUTIONS, {
        token: engine.a.token,
        body: { flow_id: flow.id, input: { order: 'x' }, agent_id: '01900000-0000-7000-8000-000000000000' },
      });
      assert.equal(agent.status, 404);
      await engine.call('PUT', `/api/v1/runtime/flows/${flow.id}`, {
        token: engine.a.token,
        body: {
          name: 'Contract',
          config: (await engine.call('GET', `/api/v1/runtime/flows/${flow.id}`, { token: engine.a.token })).body.config,
          is_active: false,
        },
      });
      const inactive = await engine.call('POST', EXECUTIONS, {
        token: engine.a.token,
        body: { flow_id: flow.id, input: { order: 'x' } },
      });
      assert.equal(inactive.status, 409);
      assert.equal(inactive.body.error.code, 'FLOW_NOT_ACTIVE');
      const pinned = await engine.call('POST', EXECUTIONS, {
        token: engine.a.token,
        body: { flow_id: flow.id, version: 1, input: { order: 'x' } },
      });
      assert.equal(pinned.status, 202, 'a published version can be pinned explicitly');
      const list = await engine.call('GET', `${EXECUTIONS}?flow_id=${flow.id}`, { token: engine.a.token });
      assert.equal(list.body.data.length, 1, 'refused requests queued nothing');
    });

    test('Idempotency-Key on POST /executions queues once', async () => {
      const engine = await setup();
      const flow = await publishedFlow(engine, engine.a.token, 'Idem exec', chainNodes(2));
      const headers = { 'idempotency-key': 'exec-once-1' };
      const first = await engine.call('POST', EXECUTIONS, {
        token: engine.a.token,
        body: { flow_id: flow.id },
        headers,
      });
      const again = await engine.call('POST', EXECUTIONS, {
        token: engine.a.token,
        body: { flow_id: flow.id },
        headers,
      });
      assert.equal(first.status, 202);
      assert.equal(again.status, 202);
      assert.equal(again.body.id, first.body.id);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      const list = await engine.call('GET', `${EXECUTIONS}?flow_id=${flow.id}`, { token: engine.a.token });
      assert.equal(list.body.data.length, 1);
    });

    test('approval: waiting_for_approval → approve → running → succeeded; deny takes on_deny; decided twice is a 409', async () => {
      const engine = await setup();
      const nodes = [
        { id: 'reserve', type: 'tool', tool: 'record', next: 'check' },
        { id: 'check', type: 'approval', message: 'Approve the order', next: 'pay', on_deny: 'denied' },
        { id: 'pay', type: 'tool', tool: 'record', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'Paid' },
        { id: 'denied', type: 'output', action: 'RESPOND', content: 'Not approved' },
      ];
      const flow = await publishedFlow(engine, engine.a.token, 'Approve', nodes);
      for (const approve of [true, false]) {
        const queued = await run(engine, { flow_id: flow.id });
        const waiting = await settle(engine, queued.id, ['waiting_for_approval']);
        assert.equal(waiting.action.type, 'APPROVAL_REQUIRED');
        const approvalId = waiting.wait.approval_id;
        assert.match(approvalId, /^apr_[0-9a-f]{24}$/);
        assert.equal(waiting.action.data.approval_id, approvalId);
        const wrong = await engine.call('POST', `${EXECUTIONS}/${queued.id}/approvals/apr_${'0'.repeat(24)}/approve`, {
          token: engine.a.token,
          body: {},
        });
        assert.equal(wrong.status, 404);
        const verb = approve ? 'approve' : 'deny';
        const decided = await engine.call('POST', `${EXECUTIONS}/${queued.id}/approvals/${approvalId}/${verb}`, {
          token: engine.a.token,
          body: { reason: 'checked' },
        });
        assert.equal(decided.status, 200, JSON.stringify(decided.body));
        assert.equal(decided.body.state, 'running');
        const done = await settle(engine, queued.id, ['succeeded']);
        assert.equal(done.action.content, approve ? 'Paid' : 'Not approved');
        const twice = await engine.call('POST', `${EXECUTIONS}/${queued.id}/approvals/${approvalId}/${verb}`, {
          token: engine.a.token,
          body: {},
        });
        assert.equal(twice.status, 404, 'the approval is no longer awaited');
        const types = (await events(engine, queued.id)).map((event) => event.type);
        assert.ok(types.includes('execution.waiting_for_approval'));
        assert.ok(types.includes(approve ? 'approval.approved' : 'approval.denied'));
        const actions = await engine.call('GET', `${EXECUTIONS}/${queued.id}/actions`, { token: engine.a.token });
        assert.deepEqual(
          actions.body.data.map((a: { action: { type: string } }) => a.action.type),
          ['APPROVAL_REQUIRED', 'RESPOND'],
        );
      }
    });

    test('event wait: queued with its wait; resume with the wrong event is a 409, with the event it continues', async () => {
      const engine = await setup();
      const nodes = [
        { id: 'wait', type: 'event_wait', event: 'payment.confirmed', assign: 'payment', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: { var: 'vars.payment.reference' } },
      ];
      const flow = await publishedFlow(engine, engine.a.token, 'Waits', nodes, { fixtureState: 'queued' });
      const queued = await run(engine, { flow_id: flow.id });
      let waiting: any;
      await waitUntil(async () => {
        waiting = (await engine.call('GET', `${EXECUTIONS}/${queued.id}`, { token: engine.a.token })).body;
        return waiting.wait !== null;
      });
      assert.equal(waiting.state, 'queued');
      assert.equal(waiting.wait.kind, 'event');
      const wrong = await engine.call('POST', `${EXECUTIONS}/${queued.id}/resume`, {
        token: engine.a.token,
        body: { event: 'other.event', payload: {} },
      });
      assert.equal(wrong.status, 409);
      const resumed = await engine.call('POST', `${EXECUTIONS}/${queued.id}/resume`, {
        token: engine.a.token,
        body: { event: 'payment.confirmed', payload: { reference: 'pay_123' } },
      });
      assert.equal(resumed.status, 200);
      const done = await settle(engine, queued.id, ['succeeded']);
      assert.equal(done.action.content, 'pay_123');
      const again = await engine.call('POST', `${EXECUTIONS}/${queued.id}/resume`, { token: engine.a.token, body: {} });
      assert.equal(again.status, 409);
    });

    test('retryable failure → retry (queued) → retryable again → terminal once max_retries are used', async () => {
      const engine = await setup();
      const nodes = [
        { id: 'call', type: 'tool', tool: 'flaky', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'ok' },
      ];
      const flow = await publishedFlow(engine, engine.a.token, 'Flaky', nodes);
      const queued = await run(engine, { flow_id: flow.id, max_retries: 1, compensate_on_failure: false });
      const failed = await settle(engine, queued.id, ['retryable_failure']);
      assert.equal(failed.error.code, 'TOOL_FAILED');
      assert.equal(failed.action.type, 'ERROR');
      assert.equal(failed.action.data.retryable, true);
      const retried = await engine.call('POST', `${EXECUTIONS}/${queued.id}/retry`, { token: engine.a.token });
      assert.equal(retried.status, 200);
      assert.equal(retried.body.state, 'queued');
      assert.equal(retried.body.attempts, 1);
      const terminal = await settle(engine, queued.id, ['terminal_failure']);
      assert.equal(terminal.attempts, 1);
      const noMore = await engine.call('POST', `${EXECUTIONS}/${queued.id}/retry`, { token: engine.a.token });
      assert.equal(noMore.status, 409);
      assert.equal(noMore.body.error.code, 'EXECUTION_ILLEGAL_TRANSITION');
      const cancel = await engine.call('POST', `${EXECUTIONS}/${queued.id}/cancel`, { token: engine.a.token });
      assert.equal(cancel.status, 409, 'terminal_failure only moves to compensated');
    });

    test('compensation: a terminal failure undoes the completed steps newest first, each once', async () => {
      const engine = await setup();
      const nodes = [
        {
          id: 'reserve',
          type: 'tool',
          tool: 'reserve',
          compensation: 'release',
          arguments: { object: { sku: 'MUG' } },
          next: 'charge',
        },
        {
          id: 'release',
          type: 'compensation',
          tool: 'release',
          arguments: { object: { what: { var: 'result.tool' } } },
        },
        { id: 'charge', type: 'tool', tool: 'charge', compensation: 'refund', next: 'ship' },
        { id: 'refund', type: 'compensation', tool: 'refund' },
        { id: 'ship', type: 'tool', tool: 'fail', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'shipped' },
      ];
      const flow = await publishedFlow(engine, engine.a.token, 'Saga', nodes);
      const before = double!.hits.length;
      const queued = await run(engine, { flow_id: flow.id });
      const done = await settle(engine, queued.id, ['compensated']);
      assert.equal(done.error.code, 'TOOL_REJECTED');
      const calls = double!.hits.slice(before).map((hit) => hit.tool);
      assert.deepEqual(calls, ['reserve', 'charge', 'fail', 'refund', 'release']);
      const types = (await events(engine, queued.id)).map((event) => event.type);
      assert.deepEqual(types.slice(-4), [
        'execution.terminal_failure',
        'step.undo',
        'step.undo',
        'execution.compensated',
      ]);
      const cancel = await engine.call('POST', `${EXECUTIONS}/${queued.id}/cancel`, { token: engine.a.token });
      assert.equal(cancel.status, 409);
    });

    test('cancel: a delayed (queued) execution at once; a running one before its next step, then compensated', async () => {
      const engine = await setup();
      const delayed = await publishedFlow(
        engine,
        engine.a.token,
        'Delayed',
        [
          { id: 'pause', type: 'delay', duration_ms: 3_600_000, next: 'done' },
          { id: 'done', type: 'output', action: 'RESPOND', content: 'late' },
        ],
        { fixtureState: 'succeeded' },
      );
      const queued = await run(engine, { flow_id: delayed.id });
      await waitUntil(
        async () =>
          (await engine.call('GET', `${EXECUTIONS}/${queued.id}`, { token: engine.a.token })).body.wait !== null,
      );
      const cancelled = await engine.call('POST', `${EXECUTIONS}/${queued.id}/cancel`, { token: engine.a.token });
      assert.equal(cancelled.status, 200);
      assert.equal(cancelled.body.state, 'cancelled');
      const noRetry = await engine.call('POST', `${EXECUTIONS}/${queued.id}/retry`, { token: engine.a.token });
      assert.equal(noRetry.status, 409);

      const slow = await publishedFlow(engine, engine.a.token, 'Slow', [
        { id: 'book', type: 'tool', tool: 'book', compensation: 'unbook', next: 'wait' },
        { id: 'unbook', type: 'compensation', tool: 'unbook' },
        { id: 'wait', type: 'tool', tool: 'slow', next: 'after' },
        { id: 'after', type: 'tool', tool: 'after_cancel', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'done' },
      ]);
      const before = double!.hits.length;
      const running = await run(engine, { flow_id: slow.id });
      await waitUntil(() => double!.hits.slice(before).some((hit) => hit.tool === 'slow'));
      const asked = await engine.call('POST', `${EXECUTIONS}/${running.id}/cancel`, { token: engine.a.token });
      assert.equal(asked.status, 200);
      assert.equal(asked.body.cancel_requested, true);
      const done = await settle(engine, running.id, ['compensated']);
      assert.equal(done.state, 'compensated');
      const calls = double!.hits.slice(before).map((hit) => hit.tool);
      assert.ok(!calls.includes('after_cancel'), 'no step after the cancel');
      assert.deepEqual(
        calls.filter((tool) => tool === 'unbook'),
        ['unbook'],
      );
      const types = (await events(engine, running.id)).map((event) => event.type);
      assert.ok(types.includes('execution.cancel_requested'));
      assert.ok(types.includes('execution.cancelled'));
      assert.equal(types.at(-1), 'execution.compensated');
    });

    test('cancel from waiting_for_approval and from retryable_failure; an approval of a cancelled execution is gone', async () => {
      const engine = await setup();
      const approval = await publishedFlow(engine, engine.a.token, 'Cancel waiting', [
        { id: 'check', type: 'approval', message: 'Go?', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'went' },
      ]);
      const waiting = await run(engine, { flow_id: approval.id });
      const view = await settle(engine, waiting.id, ['waiting_for_approval']);
      const cancelled = await engine.call('POST', `${EXECUTIONS}/${waiting.id}/cancel`, { token: engine.a.token });
      assert.equal(cancelled.status, 200);
      assert.equal(cancelled.body.state, 'cancelled');
      const late = await engine.call('POST', `${EXECUTIONS}/${waiting.id}/approvals/${view.wait.approval_id}/approve`, {
        token: engine.a.token,
        body: {},
      });
      assert.equal(late.status, 404);
      const flaky = await publishedFlow(engine, engine.a.token, 'Cancel retryable', [
        { id: 'call', type: 'tool', tool: 'flaky', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'ok' },
      ]);
      const failing = await run(engine, { flow_id: flaky.id });
      await settle(engine, failing.id, ['retryable_failure']);
      const stopped = await engine.call('POST', `${EXECUTIONS}/${failing.id}/cancel`, { token: engine.a.token });
      assert.equal(stopped.status, 200);
      assert.equal(stopped.body.state, 'cancelled');
      assert.equal(stopped.body.compensation_pending, false, 'nothing to undo');
      const again = await engine.call('POST', `${EXECUTIONS}/${failing.id}/cancel`, { token: engine.a.token });
      assert.equal(again.status, 409);
    });

    test('a dead worker’s lease expires and another worker finishes the execution without repeating a step', async () => {
      const engine = await setup();
      const flow = await publishedFlow(engine, engine.a.token, 'Lease', chainNodes(3));
      // Stop the shared worker for this test: a "dead" worker claims the execution and never renews.
      await worker!.stop();
      try {
        const queued = await run(engine, { flow_id: flow.id });
        const now = Date.now();
        const claimed = await inTransaction(engine.runtime.engine, (trx) =>
          claimExecutions(trx, {
            owner: 'dead-worker',
            now: new Date(now).toISOString(),
            leaseUntil: new Date(now + 400).toISOString(),
            limit: 10,
          }),
        );
        assert.ok(claimed.some((row) => row.id === queued.id));
        const two = [
          createExecutionWorker(engine.runtime, { concurrency: 2, leaseMs: 1000, pollMs: 50, workerId: 'w-one' }),
          createExecutionWorker(engine.runtime, { concurrency: 2, leaseMs: 1000, pollMs: 50, workerId: 'w-two' }),
        ];
        const before = double!.hits.length;
        for (const w of two) w.start();
        const stillLeased = (await engine.call('GET', `${EXECUTIONS}/${queued.id}`, { token: engine.a.token })).body;
        assert.equal(stillLeased.state, 'running', 'nobody takes a live lease');
        const done = await settle(engine, queued.id, ['succeeded']);
        assert.ok(done.started_at);
        // Many executions across the two workers: each step runs once.
        const many = await Promise.all(Array.from({ length: 8 }, () => run(engine, { flow_id: flow.id })));
        for (const e of many)
          await settle(engine, e.id, ['succeeded']).catch((error) => {
            throw new Error(
              `${error.message}\n${engine
                .logs()
                .split('\n')
                .filter((l) => /worker|flow execution/.test(l))
                .slice(-5)
                .join('\n')}`,
            );
          });
        const keys = double!.hits.slice(before).map((hit) => hit.idempotencyKey);
        assert.equal(keys.length, 9 * 2);
        assert.equal(new Set(keys).size, keys.length, 'no step called twice');
        await Promise.all(two.map((w) => w.stop()));
      } finally {
        worker = createExecutionWorker(engine.runtime, { concurrency: 8, leaseMs: 3000, pollMs: 50 });
        engine.runtime.extensions.executions = worker;
        worker.start();
      }
    });

    test('GET …/events streams SSE from after Last-Event-ID until the execution settles', async () => {
      const engine = await setup();
      const flow = await publishedFlow(engine, engine.a.token, 'Streamed', [
        { id: 'check', type: 'approval', message: 'Go?', next: 'done' },
        { id: 'done', type: 'output', action: 'RESPOND', content: 'went' },
      ]);
      const queued = await run(engine, { flow_id: flow.id });
      const waiting = await settle(engine, queued.id, ['waiting_for_approval']);
      const all = await events(engine, queued.id);
      const address = await engine.rest.listen({ port: 0, host: '127.0.0.1' }).catch(() => undefined);
      const base = address ?? `http://127.0.0.1:${(engine.rest.server.address() as { port: number }).port}`;
      const controller = new AbortController();
      const response = await fetch(`${base}${EXECUTIONS}/${queued.id}/events`, {
        headers: {
          authorization: `Bearer ${engine.a.token}`,
          accept: 'text/event-stream',
          'last-event-id': String(all[0]!.id),
        },
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const received: { id: number; type: string }[] = [];
      let approved = false;
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
        let end = text.indexOf('\n\n');
        while (end >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const id = /^id: (\d+)$/m.exec(block)?.[1];
          const type = /^event: (.+)$/m.exec(block)?.[1];
          if (id && type) received.push({ id: Number(id), type });
          end = text.indexOf('\n\n');
        }
        if (!approved && received.some((e) => e.type === 'execution.waiting_for_approval')) {
          approved = true;
          const decided = await engine.call(
            'POST',
            `${EXECUTIONS}/${queued.id}/approvals/${waiting.wait.approval_id}/approve`,
            { token: engine.a.token, body: {} },
          );
          assert.equal(decided.status, 200);
        }
      }
      assert.ok(received.length > 0);
      assert.ok(received[0]!.id > all[0]!.id, 'nothing at or before Last-Event-ID is sent again');
      assert.ok(
        received.every((e, i) => i === 0 || e.id > received[i - 1]!.id),
        'ids increase',
      );
      assert.equal(received.at(-1)!.type, 'execution.succeeded', 'the stream ends once the execution settles');
      assert.ok(received.some((e) => e.type === 'approval.approved'));
      const json = await engine.call('GET', `${EXECUTIONS}/${queued.id}/events?after=${received.at(-2)!.id}`, {
        token: engine.a.token,
      });
      assert.deepEqual(
        json.body.data.map((e: { id: number }) => e.id),
        [received.at(-1)!.id],
      );
    });

    test("model nodes run on the execution agent's provider: ai_decision picks a branch, ai answers; settings are pinned", async (t) => {
      const engine = await setup();
      const upstream = await startUpstream(t, (call) => {
        const system = call.body?.messages?.[0]?.content ?? '';
        if (system.includes('Choose exactly one')) return { content: '{"choice": "order_status", "confidence": 0.92}' };
        return { content: 'Your order ships tomorrow.' };
      });
      const { agentId, promptId } = await setupAgent(engine, engine.a, upstream.url, {
        settings: { max_node_retries: 0 },
      });
      const nodes = [
        {
          id: 'route',
          type: 'ai_decision',
          instructions: 'What does the shopper want?',
          input: { var: 'input.message' },
          choices: [
            { key: 'order_status', description: 'Where is my order' },
            { key: 'other', description: 'Anything else' },
          ],
          minimum_confidence: 0.5,
          fallback_choice: 'other',
          branches: { order_status: 'answer', other: 'fallback' },
        },
        {
          id: 'answer',
          type: 'ai',
          instructions: 'Answer about the order',
          input: { var: 'input.message' },
          next: 'done',
        },
        { id: 'done', type: 'output', action: 'RESPOND', content: { var: 'vars.answer' } },
        { id: 'fallback', type: 'output', action: 'RESPOND', content: 'Sorry' },
      ];
      const created = await engine.call('POST', '/api/v1/runtime/flows', {
        token: engine.a.token,
        body: { name: 'Model nodes', config: { ...BASE_CONFIG, nodes } },
      });
      const flowId = created.body.id;
      await engine.call('POST', `/api/v1/runtime/flows/${flowId}/fixtures`, {
        token: engine.a.token,
        body: {
          name: 'order',
          input: { message: 'where is my order?' },
          mocks: { decisions: { route: { choice: 'order_status', confidence: 0.9 } }, generate: { answer: 'Soon' } },
          expect: { action: { type: 'RESPOND', content: 'Soon' } },
        },
      });
      assert.equal(
        (await engine.call('POST', `/api/v1/runtime/flows/${flowId}/test`, { token: engine.a.token, body: {} })).body
          .passed,
        true,
      );
      assert.equal(
        (await engine.call('POST', `/api/v1/runtime/flows/${flowId}/activate`, { token: engine.a.token, body: {} }))
          .status,
        200,
      );
      const calls = upstream.calls.length;
      const queued = await run(engine, {
        flow_id: flowId,
        agent_id: agentId,
        input: { message: 'where is my order?' },
      });
      const done = await settle(engine, queued.id, ['succeeded']);
      assert.equal(done.action.content, 'Your order ships tomorrow.');
      assert.equal(upstream.calls.length - calls, 2, 'one decision, one answer');
      assert.equal(done.pinned.prompt.id, promptId);
      assert.equal(done.pinned.prompt.version, 1);
      assert.ok(BigInt(done.usage.cost_picos) > 0n, 'model costs are counted');
      const noAgent = await run(engine, { flow_id: flowId, input: { message: 'where is my order?' } });
      const failed = await settle(engine, noAgent.id, ['terminal_failure', 'compensated']);
      assert.equal(failed.error.code, 'AGENT_REQUIRED');
    });

    test("another realm's execution is a 404 like an unknown one on every operation; viewers cannot run", async () => {
      const engine = await setup();
      const flow = await publishedFlow(engine, engine.a.token, 'Mine', chainNodes(2));
      const mine = await run(engine, { flow_id: flow.id });
      await settle(engine, mine.id, ['succeeded']);
      const unknown = '01900000-0000-7000-8000-000000000000';
      for (const [method, suffix, body] of [
        ['GET', '', undefined],
        ['POST', '/cancel', undefined],
        ['POST', '/retry', undefined],
        ['POST', '/resume', {}],
        ['GET', '/events', undefined],
        ['GET', '/actions', undefined],
        ['POST', `/approvals/apr_${'1'.repeat(24)}/approve`, {}],
        ['POST', `/approvals/apr_${'1'.repeat(24)}/deny`, {}],
      ] as const) {
        const foreign = await engine.call(method, `${EXECUTIONS}/${mine.id}${suffix}`, { token: engine.b.token, body });
        const missing = await engine.call(method, `${EXECUTIONS}/${unknown}${suffix}`, { token: engine.b.token, body });
        assert.equal(foreign.status, 404, `${method} ${suffix}`);
        assert.equal(missing.status, 404);
        assert.equal(
          foreign.body.error.message.replace(mine.id, 'ID'),
          missing.body.error.message.replace(unknown, 'ID'),
        );
      }
      const foreignFlow = await engine.call('POST', EXECUTIONS, { token: engine.b.token, body: { flow_id: flow.id } });
      assert.equal(foreignFlow.status, 404);
      assert.equal((await engine.call('GET', EXECUTIONS, { token: engine.b.token })).body.data.length, 0);
      const viewer = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/identities/services`, {
        token: engine.a.token,
        body: { username: 'exec-viewer', role: 'viewer' },
      });
      const viewerToken = (
        await engine.exchange(viewer.body.credentials.access_key, viewer.body.credentials.secret_key)
      ).body.access_token;
      const denied = await engine.call('POST', EXECUTIONS, { token: viewerToken, body: { flow_id: flow.id } });
      assert.equal(denied.status, 403);
      assert.equal((await engine.call('GET', `${EXECUTIONS}/${mine.id}`, { token: viewerToken })).status, 200);
    });
  });
}
