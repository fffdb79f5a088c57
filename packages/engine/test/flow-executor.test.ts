import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  canTransition,
  clientAction,
  EXECUTION_STATES,
  EXECUTION_TRANSITIONS,
  type ExecutionState,
  FINAL_STATES,
  FlowPortError,
  isCancellable,
  MAX_STEPS_PER_RUN,
  type NormalizedAction,
  outcomeState,
  resolveDecision,
  stepIdempotencyKey,
  transition,
} from '../src/flows/index.ts';
import { Crash, memoryPort, memoryStore, plan, runOnce, settings } from './flow-helper.ts';

const out = (id = 'out', extra: Record<string, unknown> = {}) => ({ id, type: 'output', action: 'RESPOND', ...extra });
const tool = (id: string, name: string, next: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'tool',
  tool: name,
  next,
  ...extra,
});

describe('execution states', () => {
  test('the transition table: every legal move is accepted and every other pair (64) is rejected with 409', () => {
    const legal: [ExecutionState, ExecutionState][] = [
      ['queued', 'running'],
      ['queued', 'cancelled'],
      ['running', 'succeeded'],
      ['running', 'waiting_for_approval'],
      ['running', 'queued'],
      ['running', 'retryable_failure'],
      ['running', 'terminal_failure'],
      ['running', 'cancelled'],
      ['waiting_for_approval', 'running'],
      ['waiting_for_approval', 'cancelled'],
      ['retryable_failure', 'queued'],
      ['retryable_failure', 'terminal_failure'],
      ['retryable_failure', 'cancelled'],
      ['retryable_failure', 'compensated'],
      ['terminal_failure', 'compensated'],
      ['cancelled', 'compensated'],
    ];
    const isLegal = (from: string, to: string) => legal.some(([a, b]) => a === from && b === to);
    let checked = 0;
    for (const from of EXECUTION_STATES)
      for (const to of EXECUTION_STATES) {
        checked++;
        assert.equal(canTransition(from, to), isLegal(from, to), `${from} → ${to}`);
        if (isLegal(from, to)) assert.equal(transition(from, to), to);
        else
          assert.throws(
            () => transition(from, to),
            (error: Error & { code?: string; statusCode?: number }) =>
              error.code === 'EXECUTION_ILLEGAL_TRANSITION' && error.statusCode === 409,
          );
      }
    assert.equal(checked, 64);
    assert.equal(Object.values(EXECUTION_TRANSITIONS).flat().length, legal.length);
    assert.deepEqual(FINAL_STATES, ['succeeded', 'compensated']);
    assert.equal(canTransition('bogus', 'running'), false);
    assert.equal(canTransition('queued', 'bogus'), false);
    assert.equal(canTransition('__proto__', 'running'), false);
    assert.deepEqual(EXECUTION_STATES.filter(isCancellable), [
      'queued',
      'running',
      'waiting_for_approval',
      'retryable_failure',
    ]);
    assert.ok(Object.isFrozen(EXECUTION_TRANSITIONS) && Object.isFrozen(EXECUTION_TRANSITIONS.queued));
  });
});

describe('flow executor', () => {
  test('runs input → transform → condition → tool → output and returns the normalized action', async () => {
    const flow = plan([
      { id: 'in', type: 'input', next: 'shape' },
      {
        id: 'shape',
        type: 'transform',
        expression: { upper: { var: 'vars.input.message' } },
        assign: 'loud',
        next: 'check',
      },
      {
        id: 'check',
        type: 'condition',
        when: { '==': [{ var: 'vars.loud' }, 'HELLO'] },
        on_true: 'search',
        on_false: 'nothing',
      },
      tool('search', 'catalog_search', 'out', { effect: 'read', arguments: { object: { q: { var: 'vars.loud' } } } }),
      out('out', {
        content: { cat: ['found ', { var: 'vars.search.count' }] },
        data: { object: { q: { var: 'vars.loud' } } },
      }),
      out('nothing'),
    ]);
    const port = memoryPort({
      tools: { catalog_search: (call) => ({ count: 2, q: (call.arguments as { q: string }).q }) },
    });
    const outcome = await runOnce(port, flow);
    assert.equal(outcome.status, 'succeeded');
    assert.equal(outcome.state, 'succeeded');
    if (outcome.status !== 'succeeded') return;
    assert.deepEqual(outcome.action, {
      type: 'RESPOND',
      content: 'found 2',
      data: { q: 'HELLO' },
      metadata: { node_id: 'out', flow_id: null, flow_version: null },
    });
    assert.deepEqual(
      port.store.logs.get('exec-1')!.map((record) => record.key),
      ['in#1', 'shape#1', 'check#1', 'search#1', 'out#1'],
    );
    assert.deepEqual(outcome.usage, { tool_calls: 1, cost_picos: '0', steps_executed: 5, steps_replayed: 0 });
    const call = port.store.toolCalls[0]!;
    assert.equal(call.idempotencyKey, stepIdempotencyKey('exec-1', 'search#1'));
    assert.match(call.idempotencyKey, /^flow_[0-9a-f]{64}$/);
    assert.notEqual(stepIdempotencyKey('exec-2', 'search#1'), call.idempotencyKey);
  });

  test("each step's result is saved before the next step starts", async () => {
    const flow = plan([tool('a', 'write_a', 'b'), tool('b', 'write_b', 'c'), tool('c', 'write_c', 'out'), out()]);
    const port = memoryPort({ tools: { write_a: () => 1, write_b: () => 2, write_c: () => 3 } });
    await runOnce(port, flow);
    assert.deepEqual(port.events, [
      'tool write_a a#1',
      'save a#1',
      'tool write_b b#1',
      'save b#1',
      'tool write_c c#1',
      'save c#1',
      'save out#1',
    ]);
  });

  test('a run crashed at any save resumes from the last saved step: completed steps never run again, each write happens once', async () => {
    const flow = plan([
      { id: 'in', type: 'input', next: 'reserve' },
      tool('reserve', 'reserve', 'think', { compensation: 'release' }),
      { id: 'release', type: 'compensation', tool: 'release' },
      { id: 'think', type: 'ai', instructions: 'Summarize', next: 'each' },
      { id: 'each', type: 'loop', max_iterations: 3, over: { literal: ['x', 'y'] }, body: 'add', next: 'charge' },
      tool('add', 'cart_add', 'each', { arguments: { object: { item: { var: 'loop.each.item' } } } }),
      tool('charge', 'charge', 'out'),
      out(),
    ]);
    const tools = { reserve: () => 'r', cart_add: () => 'added', charge: () => 'charged', release: () => 'released' };
    const reference = memoryPort({ tools });
    const expected = await runOnce(reference, flow);
    const totalSaves = reference.store.logs.get('exec-1')!.length;
    assert.equal(totalSaves, 10);
    for (let crashAt = 1; crashAt <= totalSaves; crashAt++) {
      const store = memoryStore();
      const first = memoryPort({ tools }, store);
      first.crashOnSave(crashAt);
      await assert.rejects(runOnce(first, flow), Crash);
      const savedBefore = (store.logs.get('exec-1') ?? []).map((record) => record.key);
      assert.equal(savedBefore.length, crashAt - 1);
      const callsBefore = store.toolCalls.length;
      const modelCallsBefore = store.modelCalls;
      const second = memoryPort({ tools }, store);
      const outcome = await runOnce(second, flow);
      assert.deepEqual(outcome, {
        ...expected,
        usage: {
          ...expected.usage,
          steps_executed: outcome.usage.steps_executed,
          steps_replayed: outcome.usage.steps_replayed,
        },
      });
      assert.equal(outcome.usage.steps_replayed, crashAt - 1);
      // Nothing saved before the crash was called again.
      const resumedKeys = store.toolCalls.slice(callsBefore).map((call) => call.stepKey);
      for (const key of resumedKeys) assert.ok(!savedBefore.includes(key), `${key} ran again after crash ${crashAt}`);
      if (savedBefore.includes('think#1')) assert.equal(store.modelCalls, modelCallsBefore);
      // Each write's effect exists once per step, even for the call in flight at the crash.
      assert.deepEqual(
        [...store.effects.keys()].sort(),
        ['reserve#1', 'add#1', 'add#2', 'charge#1'].map((key) => stepIdempotencyKey('exec-1', key)).sort(),
      );
      const perKey = new Map<string, number>();
      for (const call of store.toolCalls) perKey.set(call.stepKey, (perKey.get(call.stepKey) ?? 0) + 1);
      for (const [key, count] of perKey) assert.ok(count <= 2, `${key} called ${count} times`);
      assert.deepEqual(
        store.logs.get('exec-1')!.map((record) => record.key),
        reference.store.logs.get('exec-1')!.map((record) => record.key),
      );
    }
  });

  test('a richer flow (decision, parallel, subflow, supervisor, approval) crashed at any save resumes without repeating a completed step', async () => {
    const child = plan(
      [
        tool('charge', 'charge', 'done'),
        { id: 'done', type: 'output', action: 'DATA_RESULT', data: { object: { ok: true } } },
      ],
      {},
      { flowId: 'pay', version: 1 },
    );
    const flow = plan(
      [
        { id: 'in', type: 'input', next: 'route' },
        {
          id: 'route',
          type: 'ai_decision',
          instructions: 'Route',
          minimum_confidence: 0.5,
          fallback_choice: 'buy',
          choices: [
            { key: 'buy', description: 'Buy' },
            { key: 'browse', description: 'Browse' },
          ],
          branches: { buy: 'fan', browse: 'out' },
        },
        { id: 'fan', type: 'parallel', branches: ['stock', 'price'], next: 'team' },
        { id: 'stock', type: 'tool', tool: 'stock' },
        { id: 'price', type: 'tool', tool: 'price' },
        {
          id: 'team',
          type: 'supervisor',
          mode: 'adaptive',
          instructions: 'Plan',
          specialists: ['advisor'],
          max_rounds: 2,
          next: 'ok',
        },
        { id: 'advisor', type: 'specialist', agent_id: 'agent-adv', instructions: 'Advise' },
        { id: 'ok', type: 'approval', message: 'Buy?', next: 'pay' },
        { id: 'pay', type: 'subflow', flow_id: 'pay', version: 1, next: 'out' },
        out(),
      ],
      {},
      { resolveSubflow: () => child },
    );
    const tools = { stock: () => 3, price: () => 10, charge: () => 'charged' };
    const decide = (call: { stepKey: string }) =>
      call.stepKey.startsWith('team')
        ? { choice: call.stepKey.endsWith('round1') ? 'advisor' : 'finish', confidence: 1 }
        : { choice: 'buy', confidence: 0.9 };
    const options = { tools, decide, plans: { 'pay@1': child } };
    const signals = { 'ok#1': { kind: 'approval' as const, approved: true } };
    const reference = memoryPort(options);
    const expected = await runOnce(reference, flow, { signals });
    assert.equal(expected.status, 'succeeded');
    const total = reference.store.logs.get('exec-1')!.length;
    assert.equal(total, 15);
    for (let crashAt = 1; crashAt <= total; crashAt++) {
      const store = memoryStore();
      const first = memoryPort(options, store);
      first.crashOnSave(crashAt);
      await assert.rejects(runOnce(first, flow, { signals }), Crash);
      const saved = store.logs.get('exec-1') ?? [];
      const savedKeys = saved.map((record) => record.key);
      const second = memoryPort(options, store);
      const outcome = await runOnce(second, flow, { signals });
      assert.deepEqual(
        outcome.status === 'succeeded' && outcome.action,
        expected.status === 'succeeded' && expected.action,
      );
      for (const event of second.events.filter((line) => !line.startsWith('save'))) {
        const key = event.split(' ').at(-1)!;
        assert.ok(!savedKeys.includes(key), `${event} repeated after crash ${crashAt}`);
      }
      assert.deepEqual(
        store.logs.get('exec-1')!.map((record) => record.key),
        reference.store.logs.get('exec-1')!.map((record) => record.key),
      );
      assert.equal(outcome.usage.tool_calls, 3);
    }
  });

  test('ai_decision takes the chosen branch, and the fallback below minimum_confidence or for an unknown answer', async () => {
    const flow = plan([
      {
        id: 'route',
        type: 'ai_decision',
        instructions: 'Route',
        minimum_confidence: 0.7,
        fallback_choice: 'help',
        choices: [
          { key: 'search', description: 'Find products' },
          { key: 'help', description: 'Anything else' },
        ],
        branches: { search: 'searching', help: 'helping' },
      },
      out('searching', { content: { cat: ['search ', { var: 'vars.route.reason' }] } }),
      out('helping', { content: { cat: ['help ', { var: 'vars.route.reason' }] } }),
    ]);
    const answer = async (choice: unknown, confidence: unknown) => {
      const port = memoryPort({ decide: () => ({ choice, confidence }) as never });
      const outcome = await runOnce(port, flow);
      assert.equal(outcome.status, 'succeeded');
      return outcome.status === 'succeeded' ? outcome.action.content : null;
    };
    assert.equal(await answer('search', 0.9), 'search chosen');
    assert.equal(await answer('search', 0.7), 'search chosen');
    assert.equal(await answer('search', 0.69), 'help low_confidence');
    assert.equal(await answer('refund', 0.99), 'help unknown_choice');
    assert.equal(await answer('search', Number.NaN), 'help low_confidence');
    assert.equal(await answer('search', 7), 'help low_confidence');
    assert.equal(await answer('__proto__', 1), 'help unknown_choice');
    const node = {
      choices: [
        { key: 'a', description: '' },
        { key: 'b', description: '' },
      ],
      minimum_confidence: 0.5,
      fallback_choice: 'b',
    };
    assert.deepEqual(resolveDecision(node, { choice: 'a', confidence: 0.5 }), {
      choice: 'a',
      confidence: 0.5,
      fallback: false,
      reason: 'chosen',
    });
    assert.deepEqual(resolveDecision(node, { choice: 'a', confidence: '0.9' }), {
      choice: 'b',
      confidence: 0,
      fallback: true,
      reason: 'low_confidence',
    });
    assert.deepEqual(resolveDecision(node, { choice: 1, confidence: 1 }), {
      choice: 'b',
      confidence: 1,
      fallback: true,
      reason: 'unknown_choice',
    });
  });

  test('approval: waits (waiting_for_approval, APPROVAL_REQUIRED), then approve continues and deny takes on_deny or fails', async () => {
    const flow = (onDeny?: string) =>
      plan(
        [
          tool('reserve', 'reserve', 'ok'),
          {
            id: 'ok',
            type: 'approval',
            message: 'Approve 250 EUR?',
            details: { object: { total: 250 } },
            next: 'pay',
            ...(onDeny ? { on_deny: onDeny } : {}),
          },
          tool('pay', 'pay', 'out'),
          out(),
          out('denied'),
        ].filter((node) => onDeny || node.id !== 'denied'),
      );
    const tools = { reserve: () => 'r', pay: () => 'p' };
    const port = memoryPort({ tools });
    const waiting = await runOnce(port, flow('denied'));
    assert.equal(waiting.status, 'waiting');
    if (waiting.status !== 'waiting') return;
    assert.equal(waiting.state, 'waiting_for_approval');
    assert.deepEqual(waiting.wait, {
      kind: 'approval',
      wait_id: 'ok#1',
      node_id: 'ok',
      message: 'Approve 250 EUR?',
      details: { total: 250 },
    });
    assert.deepEqual(waiting.action, {
      type: 'APPROVAL_REQUIRED',
      content: 'Approve 250 EUR?',
      data: { approval_id: 'ok#1', details: { total: 250 } },
      metadata: { node_id: 'ok' },
    });
    // Resuming without a decision still waits, on the same approval, without a second marker or tool call.
    const again = await runOnce(port, flow('denied'));
    assert.equal(again.status, 'waiting');
    assert.equal(port.store.toolCalls.length, 1);
    assert.equal(port.store.logs.get('exec-1')!.filter((record) => record.phase === 'wait').length, 1);
    const approved = await runOnce(port, flow('denied'), { signals: { 'ok#1': { kind: 'approval', approved: true } } });
    assert.equal(approved.status, 'succeeded');
    assert.deepEqual(
      port.store.toolCalls.map((call) => call.tool),
      ['reserve', 'pay'],
    );

    const denyPort = memoryPort({ tools });
    await runOnce(denyPort, flow('denied'));
    const denied = await runOnce(denyPort, flow('denied'), {
      signals: { 'ok#1': { kind: 'approval', approved: false } },
    });
    assert.equal(denied.status === 'succeeded' && denied.action.metadata.node_id, 'denied');

    const strictPort = memoryPort({ tools });
    await runOnce(strictPort, flow());
    const refused = await runOnce(strictPort, flow(), { signals: { 'ok#1': { kind: 'approval', approved: false } } });
    assert.equal(refused.status, 'terminal_failure');
    assert.equal(refused.status === 'terminal_failure' && refused.error.code, 'APPROVAL_DENIED');
    // A signal for another wait id does not resolve this one.
    const otherPort = memoryPort({ tools });
    await runOnce(otherPort, flow());
    assert.equal(
      (await runOnce(otherPort, flow(), { signals: { 'ok#2': { kind: 'approval', approved: true } } })).status,
      'waiting',
    );
  });

  test('delay: queued with a fixed resume time, continues once the time has come', async () => {
    const flow = plan([{ id: 'pause', type: 'delay', duration_ms: 60_000, next: 'out' }, out()]);
    const port = memoryPort();
    const first = await runOnce(port, flow);
    assert.equal(first.status, 'waiting');
    if (first.status !== 'waiting') return;
    assert.equal(first.state, 'queued');
    assert.deepEqual(first.wait, {
      kind: 'delay',
      wait_id: 'pause#1',
      node_id: 'pause',
      resume_at: '2026-11-26T10:01:00.000Z',
    });
    assert.deepEqual(first.action, {
      type: 'DATA_RESULT',
      content: null,
      data: { waiting: first.wait },
      metadata: { node_id: 'pause' },
    });
    assert.equal(outcomeState(first), 'queued');
    port.store.clock += 30_000;
    const early = await runOnce(port, flow);
    assert.equal(
      early.status === 'waiting' && early.wait.kind === 'delay' && early.wait.resume_at,
      '2026-11-26T10:01:00.000Z',
    );
    port.store.clock += 30_000;
    assert.equal((await runOnce(port, flow)).status, 'succeeded');
  });

  test('event wait: the payload continues the flow; a timeout takes on_timeout or fails', async () => {
    const flow = (onTimeout: boolean) =>
      plan(
        [
          {
            id: 'hear',
            type: 'event_wait',
            event: 'payment.confirmed',
            timeout_ms: 1000,
            assign: 'paid',
            next: 'out',
            ...(onTimeout ? { on_timeout: 'late' } : {}),
          },
          out('out', { content: { var: 'vars.paid.ref' } }),
          out('late'),
        ].filter((node) => onTimeout || node.id !== 'late'),
      );
    const port = memoryPort();
    const waiting = await runOnce(port, flow(true));
    assert.equal(waiting.status === 'waiting' && waiting.state, 'queued');
    assert.deepEqual(waiting.status === 'waiting' && waiting.wait, {
      kind: 'event',
      wait_id: 'hear#1',
      node_id: 'hear',
      event: 'payment.confirmed',
      expires_at: '2026-11-26T10:00:01.000Z',
    });
    const done = await runOnce(port, flow(true), {
      signals: { 'hear#1': { kind: 'event', payload: { ref: 'pay-1' } } },
    });
    assert.equal(done.status === 'succeeded' && done.action.content, 'pay-1');

    const late = memoryPort();
    await runOnce(late, flow(true));
    late.store.clock += 1000;
    const timedOut = await runOnce(late, flow(true));
    assert.equal(timedOut.status === 'succeeded' && timedOut.action.metadata.node_id, 'late');

    const strict = memoryPort();
    await runOnce(strict, flow(false));
    strict.store.clock += 5000;
    const failed = await runOnce(strict, flow(false));
    assert.equal(failed.status === 'terminal_failure' && failed.error.code, 'EVENT_TIMEOUT');
  });

  test('loop: iterates over items within max_iterations; more items than the bound fail; while stops at the bound', async () => {
    const flow = (max = 3) =>
      plan([
        { id: 'each', type: 'loop', max_iterations: max, over: { var: 'input.items' }, body: 'add', next: 'out' },
        tool('add', 'cart_add', 'each', {
          arguments: { object: { sku: { var: 'loop.each.item' }, at: { var: 'loop.each.index' } } },
        }),
        out(),
      ]);
    const port = memoryPort({ tools: { cart_add: (call) => call.arguments } });
    const done = await runOnce(port, flow(), { input: { items: ['a', 'b'] } });
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(
      port.store.toolCalls.map((call) => call.arguments),
      [
        { sku: 'a', at: 0 },
        { sku: 'b', at: 1 },
      ],
    );
    assert.deepEqual(
      port.store.toolCalls.map((call) => call.stepKey),
      ['add#1', 'add#2'],
    );
    const tooMany = await runOnce(memoryPort({ tools: { cart_add: () => 1 } }), flow(), {
      input: { items: [1, 2, 3, 4] },
    });
    assert.equal(tooMany.status === 'terminal_failure' && tooMany.error.code, 'LOOP_BOUND_EXCEEDED');
    const none = memoryPort({ tools: { cart_add: () => 1 } });
    assert.equal((await runOnce(none, flow(), { input: { items: null } })).status, 'succeeded');
    assert.equal(none.store.toolCalls.length, 0);

    const whileFlow = plan([
      {
        id: 'again',
        type: 'loop',
        max_iterations: 4,
        while: { '<': [{ var: 'loop.again.index' }, 100] },
        body: 'tick',
        next: 'out',
      },
      { id: 'tick', type: 'transform', expression: { var: 'loop.again.index' }, assign: 'last', next: 'again' },
      out('out', { content: { string: { var: 'vars.last' } } }),
    ]);
    const ticked = await runOnce(memoryPort(), whileFlow);
    assert.equal(ticked.status === 'succeeded' && ticked.action.content, '3');
  });

  test('nested loops re-enter the inner loop fresh on every outer iteration; step keys stay distinct', async () => {
    const flow = plan([
      { id: 'outer', type: 'loop', max_iterations: 2, over: { literal: [1, 2] }, body: 'inner', next: 'out' },
      {
        id: 'inner',
        type: 'loop',
        max_iterations: 3,
        over: { literal: ['a', 'b', 'c'] },
        body: 'touch',
        next: 'outer',
      },
      tool('touch', 'touch', 'inner', { arguments: { cat: [{ var: 'loop.outer.item' }, { var: 'loop.inner.item' }] } }),
      out(),
    ]);
    const port = memoryPort({ tools: { touch: (call) => call.arguments } });
    assert.equal((await runOnce(port, flow)).status, 'succeeded');
    assert.deepEqual(
      port.store.toolCalls.map((call) => call.arguments),
      ['1a', '1b', '1c', '2a', '2b', '2c'],
    );
    assert.equal(new Set(port.store.toolCalls.map((call) => call.idempotencyKey)).size, 6);
  });

  test('a run stops at MAX_STEPS_PER_RUN even when every loop is within its own bound', async () => {
    const flow = plan([
      { id: 'outer', type: 'loop', max_iterations: 1000, body: 'inner', next: 'out' },
      { id: 'inner', type: 'loop', max_iterations: 1000, body: 'tick', next: 'outer' },
      { id: 'tick', type: 'transform', expression: 1, assign: 'x', next: 'inner' },
      out(),
    ]);
    const outcome = await runOnce(memoryPort(), flow);
    assert.equal(outcome.status === 'terminal_failure' && outcome.error.code, 'STEP_LIMIT');
    assert.equal(outcome.usage.steps_executed, MAX_STEPS_PER_RUN);
  });

  test('parallel: branches run concurrently within max_dependency_concurrency, results land in vars', async () => {
    const branches = ['b1', 'b2', 'b3', 'b4', 'b5'];
    const flow = plan([
      { id: 'fan', type: 'parallel', branches, next: 'out' },
      ...branches.map((id) => ({ id, type: 'tool', tool: 'slow', effect: 'read', arguments: id })),
      out('out', { data: { object: { first: { var: 'vars.b1' }, last: { var: 'vars.b5' } } } }),
    ]);
    let inFlight = 0;
    let peak = 0;
    const port = memoryPort({
      tools: {
        slow: async (call) => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          await new Promise((resolve) => setTimeout(resolve, 5));
          inFlight--;
          return `r-${call.arguments}`;
        },
      },
    });
    const outcome = await runOnce(port, flow, { settings: settings({ max_dependency_concurrency: 2 }) });
    assert.equal(outcome.status, 'succeeded');
    assert.equal(peak, 2);
    assert.deepEqual(outcome.status === 'succeeded' && outcome.action.data, { first: 'r-b1', last: 'r-b5' });
  });

  test('parallel: a failed branch fails the node; completed branches are not repeated on retry', async () => {
    const flow = plan([
      { id: 'fan', type: 'parallel', branches: ['ok', 'flaky'], next: 'out' },
      { id: 'ok', type: 'tool', tool: 'ok' },
      { id: 'flaky', type: 'tool', tool: 'flaky' },
      out(),
    ]);
    let healthy = false;
    const port = memoryPort({
      tools: {
        ok: () => 'fine',
        flaky: () => {
          if (!healthy) throw new FlowPortError('UPSTREAM_DOWN', 'down', false);
          return 'back';
        },
      },
    });
    const failed = await runOnce(port, flow);
    assert.equal(failed.status === 'terminal_failure' && failed.error.code, 'UPSTREAM_DOWN');
    assert.equal(failed.status === 'terminal_failure' && failed.error.node_id, 'flaky');
    healthy = true;
    assert.equal((await runOnce(port, flow)).status, 'succeeded');
    assert.deepEqual(
      port.store.toolCalls.map((call) => call.tool),
      ['ok', 'flaky', 'flaky'],
    );
  });

  test('subflow: a pinned plan runs inline with its own keys, its action becomes the result; waits inside resume', async () => {
    const child = plan(
      [
        tool('charge', 'charge', 'confirm'),
        { id: 'confirm', type: 'approval', message: 'Confirm?', next: 'done' },
        {
          id: 'done',
          type: 'output',
          action: 'DATA_RESULT',
          data: { object: { charged: { var: 'vars.charge' }, for: { var: 'input.who' } } },
        },
      ],
      {},
      { flowId: 'pay', version: 3 },
    );
    const parent = plan(
      [
        {
          id: 'sub',
          type: 'subflow',
          flow_id: 'pay',
          version: 3,
          input: { object: { who: 'ann' } },
          assign: 'payment',
          next: 'out',
        },
        out('out', { content: { get: [{ var: 'vars.payment.data' }, 'charged'] } }),
      ],
      {},
      { resolveSubflow: () => child },
    );
    const port = memoryPort({ tools: { charge: () => 'ok-1' }, plans: { 'pay@3': child } });
    const waiting = await runOnce(port, parent);
    assert.equal(waiting.status === 'waiting' && waiting.wait.wait_id, 'sub#1/confirm#1');
    const done = await runOnce(port, parent, { signals: { 'sub#1/confirm#1': { kind: 'approval', approved: true } } });
    assert.equal(done.status === 'succeeded' && done.action.content, 'ok-1');
    assert.deepEqual(
      port.store.toolCalls.map((call) => call.stepKey),
      ['sub#1/charge#1'],
    );
    assert.deepEqual(
      port.store.logs.get('exec-1')!.map((record) => record.key),
      ['sub#1/charge#1', 'sub#1/confirm#1~wait', 'sub#1/confirm#1', 'sub#1/done#1', 'sub#1', 'out#1'],
    );
    // A replay skips the finished subflow as one step but still counts its tool call.
    const replay = await runOnce(port, parent);
    assert.equal(replay.usage.tool_calls, 1);
    assert.equal(replay.usage.steps_executed, 0);

    const missing = await runOnce(memoryPort(), parent, { executionId: 'exec-2' });
    assert.equal(missing.status === 'terminal_failure' && missing.error.code, 'SUBFLOW_UNAVAILABLE');
    const shallow = await runOnce(memoryPort({ tools: { charge: () => 'x' }, plans: { 'pay@3': child } }), parent, {
      settings: settings({ max_orchestration_depth: 1 }),
    });
    assert.equal(shallow.status, 'waiting', 'depth 1 allows one subflow level');
    const grand = plan(
      [{ id: 'sub', type: 'subflow', flow_id: 'mid', version: 1, next: 'out' }, out()],
      {},
      {
        resolveSubflow: () => parent,
      },
    );
    const midPort = memoryPort({
      tools: { charge: () => 'x' },
      plans: { 'mid@1': { ...parent, flowId: null } as never, 'pay@3': child },
    });
    const tooDeep = await runOnce(midPort, grand, { settings: settings({ max_orchestration_depth: 1 }) });
    assert.equal(tooDeep.status === 'terminal_failure' && tooDeep.error.code, 'ORCHESTRATION_DEPTH_LIMIT');
  });

  test('supervisor: deterministic runs each specialist once in order; adaptive follows the model until finish or max_rounds', async () => {
    const flow = (mode: string, rounds = 3) =>
      plan([
        {
          id: 'boss',
          type: 'supervisor',
          mode,
          instructions: 'Coordinate',
          specialists: ['stylist', 'pricer'],
          max_rounds: rounds,
          next: 'out',
        },
        {
          id: 'stylist',
          type: 'specialist',
          agent_id: 'agent-style',
          instructions: 'Style',
          description: 'Picks a style',
        },
        { id: 'pricer', type: 'specialist', agent_id: 'agent-price', instructions: 'Price' },
        out('out', { data: { var: 'vars.boss' } }),
      ]);
    const fixed = memoryPort();
    const deterministic = await runOnce(fixed, flow('deterministic'));
    assert.deepEqual(deterministic.status === 'succeeded' && deterministic.action.data, {
      stylist: 'agent-style done',
      pricer: 'agent-price done',
    });
    assert.deepEqual(
      fixed.events.filter((event) => event.startsWith('specialist')),
      ['specialist agent-style stylist#1', 'specialist agent-price pricer#1'],
    );
    const picks = ['pricer', 'finish'];
    const adaptive = memoryPort({
      decide: (call) => ({ choice: picks.shift()!, confidence: 1, seen: call.choices }) as never,
    });
    const chosen = await runOnce(adaptive, flow('adaptive'));
    assert.deepEqual(chosen.status === 'succeeded' && chosen.action.data, { pricer: 'agent-price done' });
    const looping = memoryPort({ decide: () => ({ choice: 'stylist', confidence: 1 }) });
    await runOnce(looping, flow('adaptive', 2));
    assert.deepEqual(
      looping.events.filter((event) => event.startsWith('specialist')),
      ['specialist agent-style stylist#1', 'specialist agent-style stylist#2'],
    );
    const rogue = memoryPort({ decide: () => ({ choice: 'rm -rf', confidence: 1 }) });
    const stopped = await runOnce(rogue, flow('adaptive'));
    assert.deepEqual(stopped.status === 'succeeded' && stopped.action.data, {});
    const depth = await runOnce(memoryPort(), flow('deterministic'), {
      settings: settings({ max_orchestration_depth: 1 }),
    });
    assert.equal(depth.status, 'succeeded', 'a specialist is one level of handoff');
  });

  test('specialist: a handoff with its own idempotency key and one level of depth', async () => {
    const flow = plan(
      [
        {
          id: 'constructor',
          type: 'specialist',
          agent_id: 'agent-x',
          instructions: 'Help',
          input: { var: 'input.message' },
          next: 'out',
        },
        out('out', { content: { cat: [{ var: 'vars.answer' }, '!'] } }),
      ].map((node) => (node.id === 'constructor' ? { ...node, assign: 'answer' } : node)),
    );
    const calls: { key: string; depth: number; input: unknown }[] = [];
    const port = memoryPort({
      specialist: (call) => {
        calls.push({ key: call.idempotencyKey, depth: call.depth, input: call.input });
        return `ok ${call.input}`;
      },
    });
    const outcome = await runOnce(port, flow);
    assert.equal(outcome.status === 'succeeded' && outcome.action.content, 'ok hello!');
    assert.deepEqual(calls, [{ key: stepIdempotencyKey('exec-1', 'constructor#1'), depth: 1, input: 'hello' }]);
    // A specialist inside a subflow is a second level.
    const child = plan(
      [{ id: 'ask', type: 'specialist', agent_id: 'a', instructions: 'x', next: 'out' }, out()],
      {},
      { flowId: 'c', version: 1 },
    );
    const parent = plan(
      [{ id: 'sub', type: 'subflow', flow_id: 'c', version: 1, next: 'out' }, out()],
      {},
      { resolveSubflow: () => child },
    );
    const nested = memoryPort({ plans: { 'c@1': child } });
    const tooDeep = await runOnce(nested, parent, { settings: settings({ max_orchestration_depth: 1 }) });
    assert.deepEqual(tooDeep.status === 'terminal_failure' && tooDeep.error.code, 'ORCHESTRATION_DEPTH_LIMIT');
    assert.equal(
      (
        await runOnce(memoryPort({ plans: { 'c@1': child } }), parent, {
          settings: settings({ max_orchestration_depth: 2 }),
        })
      ).status,
      'succeeded',
    );
  });

  test('resource and ai nodes pass their inputs and land in vars', async () => {
    const flow = plan([
      { id: 'faq', type: 'resource', resource: 'kb://faq', arguments: { object: { topic: 'returns' } }, next: 'say' },
      { id: 'say', type: 'ai', instructions: 'Answer', input: { var: 'vars.faq' }, next: 'out' },
      out('out', { content: { var: 'vars.say' } }),
    ]);
    const port = memoryPort({
      resources: { 'kb://faq': (call) => ({ text: `about ${(call.arguments as { topic: string }).topic}` }) },
      generate: (call) => `AI: ${(call.input as { text: string }).text}`,
    });
    const outcome = await runOnce(port, flow);
    assert.equal(outcome.status === 'succeeded' && outcome.action.content, 'AI: about returns');
  });

  test('max_tool_calls: the lower of the agent setting and the flow runtime bound stops the run', async () => {
    const nodes = [tool('a', 't', 'b'), tool('b', 't', 'c'), tool('c', 't', 'out'), out()];
    const port = () => memoryPort({ tools: { t: () => 1 } });
    const bySettings = await runOnce(port(), plan(nodes), { settings: settings({ max_tool_calls: 2 }) });
    assert.equal(bySettings.status === 'terminal_failure' && bySettings.error.code, 'TOOL_CALL_LIMIT');
    assert.equal(bySettings.usage.tool_calls, 2);
    const byFlow = await runOnce(port(), plan(nodes, { runtime: { max_tool_calls: 1 } }));
    assert.equal(byFlow.status === 'terminal_failure' && byFlow.error.node_id, 'b');
    assert.equal(
      (await runOnce(port(), plan(nodes), { settings: settings({ max_tool_calls: 3 }) })).status,
      'succeeded',
    );
    // Parallel branches reserve their calls: four concurrent tool branches under a cap of 2 make 2 calls.
    const fan = plan([
      { id: 'fan', type: 'parallel', branches: ['p1', 'p2', 'p3', 'p4'], next: 'out' },
      ...['p1', 'p2', 'p3', 'p4'].map((id) => ({ id, type: 'tool', tool: 't' })),
      out(),
    ]);
    const slow = memoryPort({ tools: { t: () => new Promise((resolve) => setTimeout(() => resolve(1), 5)) } });
    const capped = await runOnce(slow, fan, {
      settings: settings({ max_tool_calls: 2, max_dependency_concurrency: 4 }),
    });
    assert.equal(capped.status === 'terminal_failure' && capped.error.code, 'TOOL_CALL_LIMIT');
    assert.equal(slow.store.toolCalls.length, 2);
    // on_error does not swallow a budget failure.
    const guarded = plan([tool('a', 't', 'b'), tool('b', 't', 'out', { on_error: 'out' }), out()]);
    const stopped = await runOnce(port(), guarded, { settings: settings({ max_tool_calls: 1 }) });
    assert.equal(stopped.status === 'terminal_failure' && stopped.error.code, 'TOOL_CALL_LIMIT');
  });

  test('max_node_retries with retry_base_ms backoff for transient failures; none for permanent ones', async () => {
    let failures = 2;
    const flaky = memoryPort({
      tools: {
        t: () => {
          if (failures-- > 0) throw new FlowPortError('UPSTREAM_503', 'busy', true);
          return 'ok';
        },
      },
    });
    const flow = plan([tool('a', 't', 'out'), out()]);
    const recovered = await runOnce(flaky, flow, { settings: settings({ max_node_retries: 2, retry_base_ms: 50 }) });
    assert.equal(recovered.status, 'succeeded');
    assert.deepEqual(flaky.sleeps, [50, 100]);
    assert.equal(flaky.store.logs.get('exec-1')![0]!.attempts, 3);
    assert.equal(new Set(flaky.store.toolCalls.map((call) => call.idempotencyKey)).size, 1, 'retries reuse the key');

    failures = 5;
    const exhausted = memoryPort({
      tools: {
        t: () => {
          if (failures-- > 0) throw new FlowPortError('UPSTREAM_503', 'busy', true);
          return 1;
        },
      },
    });
    const outcome = await runOnce(exhausted, flow, { settings: settings({ max_node_retries: 1, retry_base_ms: 10 }) });
    assert.equal(outcome.status, 'retryable_failure');
    assert.equal(outcome.status === 'retryable_failure' && outcome.action.type, 'ERROR');
    assert.deepEqual(outcome.status === 'retryable_failure' && outcome.action.data, {
      code: 'UPSTREAM_503',
      retryable: true,
    });
    assert.equal(exhausted.store.toolCalls.length, 2);

    const permanent = memoryPort({
      tools: {
        t: () => {
          throw new FlowPortError('BAD_ARGS', 'no', false);
        },
      },
    });
    const refused = await runOnce(permanent, flow, { settings: settings({ max_node_retries: 5 }) });
    assert.equal(refused.status, 'terminal_failure');
    assert.equal(permanent.store.toolCalls.length, 1);
    assert.deepEqual(permanent.sleeps, []);
    // An unexpected error from a capability is a permanent node failure with a generic message.
    const broken = memoryPort({
      tools: {
        t: () => {
          throw new TypeError('secret internals');
        },
      },
    });
    const crashed = await runOnce(broken, flow);
    assert.deepEqual(crashed.status === 'terminal_failure' && crashed.error, {
      code: 'NODE_FAILED',
      message: 'the node failed',
      node_id: 'a',
    });
  });

  test('node_timeout_ms: a slow call times out (retryable) and is retried', async () => {
    let calls = 0;
    const port = memoryPort({
      tools: {
        t: async (call) => {
          calls++;
          if (calls === 1) await new Promise((resolve) => setTimeout(resolve, 500));
          assert.ok(call.signal instanceof AbortSignal);
          return 'ok';
        },
      },
    });
    const flow = plan([tool('a', 't', 'out'), out()]);
    const outcome = await runOnce(port, flow, { settings: settings({ node_timeout_ms: 100, max_node_retries: 1 }) });
    assert.equal(outcome.status, 'succeeded');
    assert.equal(calls, 2);
    const slow = memoryPort({ tools: { t: () => new Promise((resolve) => setTimeout(() => resolve(1), 500)) } });
    const timedOut = await runOnce(slow, flow, { settings: settings({ node_timeout_ms: 100, max_node_retries: 0 }) });
    assert.equal(timedOut.status === 'retryable_failure' && timedOut.error.code, 'NODE_TIMEOUT');
  });

  test('max_latency_ms: a run past its deadline stops as a retryable failure', async () => {
    const store = memoryStore();
    const port = memoryPort(
      {
        tools: {
          t: () => {
            store.clock += 400;
            return 1;
          },
        },
      },
      store,
    );
    const flow = plan([tool('a', 't', 'b'), tool('b', 't', 'c'), tool('c', 't', 'out'), out()]);
    const outcome = await runOnce(port, flow, { settings: settings({ max_latency_ms: 700 }) });
    assert.equal(outcome.status === 'retryable_failure' && outcome.error.code, 'LATENCY_LIMIT');
    assert.equal(store.toolCalls.length, 2);
    assert.equal((await runOnce(port, flow, { settings: settings({ max_latency_ms: 700 }) })).status, 'succeeded');
    assert.equal(store.toolCalls.length, 3, 'the retry continued where the run stopped');
  });

  test('max_execution_cost: no call starts once the cap is reached, and passing it stops the run', async () => {
    const flow = plan([
      { id: 'a', type: 'ai', instructions: 'x', next: 'b' },
      { id: 'b', type: 'ai', instructions: 'y', next: 'c' },
      { id: 'c', type: 'ai', instructions: 'z', next: 'out' },
      out(),
    ]);
    // Each call costs 0.4 (in picos: 0.4 × 10^12); the cap is 1.0.
    const port = memoryPort({ costPicos: 400_000_000_000n });
    const outcome = await runOnce(port, flow, { settings: settings({ max_execution_cost: 1 }) });
    assert.equal(outcome.status === 'terminal_failure' && outcome.error.code, 'COST_LIMIT');
    assert.equal(port.store.modelCalls, 3);
    assert.equal(outcome.usage.cost_picos, '1200000000000');
    const capped = memoryPort({ costPicos: 500_000_000_000n });
    const exact = await runOnce(capped, flow, { settings: settings({ max_execution_cost: 1 }) });
    assert.equal(exact.status === 'terminal_failure' && exact.error.code, 'COST_LIMIT');
    assert.equal(capped.store.modelCalls, 2, 'at the cap, the third call never starts');
    assert.equal(
      (await runOnce(memoryPort({ costPicos: 1n }), flow, { settings: settings({ max_execution_cost: 1 }) })).status,
      'succeeded',
    );
  });

  test('a failing supervisor decision or a non-JSON tool result fails the run instead of escaping it', async () => {
    const supervised = plan([
      {
        id: 'boss',
        type: 'supervisor',
        mode: 'adaptive',
        instructions: 'x',
        specialists: ['s'],
        max_rounds: 1,
        next: 'out',
      },
      { id: 's', type: 'specialist', agent_id: 'a', instructions: 'y' },
      out(),
    ]);
    const down = memoryPort({
      decide: () => {
        throw new FlowPortError('MODEL_DOWN', 'down', true);
      },
    });
    const outcome = await runOnce(down, supervised, { settings: settings({ max_node_retries: 0 }) });
    assert.deepEqual(outcome.status === 'retryable_failure' && outcome.error, {
      code: 'MODEL_DOWN',
      message: 'down',
      node_id: 'boss',
    });
    const weird = memoryPort({ tools: { t: () => ({ big: 1n }) } });
    const bad = await runOnce(weird, plan([tool('a', 't', 'out', { effect: 'read' }), out()]));
    assert.equal(bad.status === 'terminal_failure' && bad.error.code, 'STEP_OUTPUT_INVALID');
    const huge = memoryPort({ tools: { t: () => 'x'.repeat(300_000) } });
    const large = await runOnce(huge, plan([tool('a', 't', 'out', { effect: 'read' }), out()]));
    assert.equal(large.status === 'terminal_failure' && large.error.code, 'STEP_OUTPUT_TOO_LARGE');
  });

  test('on_error takes a failed call to its handler with the error in vars', async () => {
    const flow = plan([
      tool('a', 'broken', 'out', { on_error: 'sorry' }),
      out(),
      out('sorry', { content: { var: 'vars.a.error.code' } }),
    ]);
    const port = memoryPort({
      tools: {
        broken: () => {
          throw new FlowPortError('OUT_OF_STOCK', 'none', false);
        },
      },
    });
    const outcome = await runOnce(port, flow);
    assert.equal(outcome.status === 'succeeded' && outcome.action.content, 'OUT_OF_STOCK');
  });

  test('compensation: on failure, completed steps are compensated in reverse order, once each, even across a crash', async () => {
    const flow = plan([
      tool('reserve', 'reserve', 'hold', { compensation: 'unreserve', arguments: { object: { sku: 'A' } } }),
      {
        id: 'unreserve',
        type: 'compensation',
        tool: 'release',
        arguments: { object: { reservation: { var: 'result.id' }, sku: { var: 'arguments.sku' } } },
      },
      tool('hold', 'hold', 'charge', { compensation: 'unhold' }),
      { id: 'unhold', type: 'compensation', tool: 'unhold' },
      tool('charge', 'charge', 'out'),
      out(),
    ]);
    const tools = {
      reserve: () => ({ id: 'res-1' }),
      hold: () => 'h',
      charge: () => {
        throw new FlowPortError('CARD_DECLINED', 'declined', false);
      },
      release: () => 'released',
      unhold: () => 'unheld',
    };
    const plain = await runOnce(memoryPort({ tools }), flow);
    assert.equal(plain.status, 'terminal_failure', 'without compensate, nothing is undone');

    const store = memoryStore();
    const first = memoryPort({ tools }, store);
    first.crashOnSave(3); // reserve and hold saved, charge fails, then a crash saving the first compensation
    await assert.rejects(runOnce(first, flow, { compensate: true }), Crash);
    const second = memoryPort({ tools }, store);
    const outcome = await runOnce(second, flow, { compensate: true });
    assert.equal(outcome.status, 'compensated');
    if (outcome.status !== 'compensated') return;
    assert.deepEqual(outcome.error, { code: 'CARD_DECLINED', message: 'declined', node_id: 'charge' });
    assert.deepEqual(outcome.compensated, ['hold#1', 'reserve#1']);
    const undo = store.toolCalls.filter((call) => call.compensating);
    assert.deepEqual(
      undo.map((call) => call.tool),
      ['unhold', 'unhold', 'release'],
    );
    assert.deepEqual(undo.at(-1)!.arguments, { reservation: 'res-1', sku: 'A' });
    assert.equal(
      undo[0]!.idempotencyKey,
      undo[1]!.idempotencyKey,
      'the compensation in flight at the crash reuses its key',
    );
    assert.equal(store.effects.get(stepIdempotencyKey('exec-1', 'hold#1~undo')), 'unheld');
    // Compensating again finds everything undone.
    const third = await runOnce(memoryPort({ tools }, store), flow, { compensate: true });
    assert.equal(third.status === 'compensated' && third.compensated.length, 2);
    assert.equal(store.toolCalls.filter((call) => call.compensating).length, 3);

    const failing = memoryPort({
      tools: {
        ...tools,
        release: () => {
          throw new FlowPortError('DOWN', 'down', false);
        },
      },
    });
    const stuck = await runOnce(failing, flow, { compensate: true });
    assert.equal(stuck.status === 'terminal_failure' && stuck.error.code, 'COMPENSATION_FAILED');
  });

  test('cancellation stops before the next step; with compensate, completed steps are undone', async () => {
    const controller = new AbortController();
    const flow = plan([
      tool('reserve', 'reserve', 'next', { compensation: 'undo' }),
      { id: 'undo', type: 'compensation', tool: 'release' },
      tool('next', 'next', 'out'),
      out(),
    ]);
    const tools = {
      reserve: () => {
        controller.abort();
        return 'r';
      },
      next: () => 'n',
      release: () => 'x',
    };
    const cancelled = await runOnce(memoryPort({ tools }), flow, { signal: controller.signal });
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.state, 'cancelled');
    const again = new AbortController();
    const port = memoryPort({
      tools: {
        ...tools,
        reserve: () => {
          again.abort();
          return 'r';
        },
      },
    });
    const undone = await runOnce(port, flow, { signal: again.signal, compensate: true });
    assert.equal(undone.status, 'compensated');
    assert.deepEqual(
      port.store.toolCalls.map((call) => call.tool),
      ['reserve', 'release'],
    );
  });

  test('output: the content and data shapes are enforced and handoff actions carry no personal fields', async () => {
    const bad = plan([out('out', { content: { literal: { a: 1 } } })]);
    const outcome = await runOnce(memoryPort(), bad);
    assert.equal(outcome.status === 'terminal_failure' && outcome.error.code, 'OUTPUT_INVALID');
    const list = plan([out('out', { data: { literal: [1] } })]);
    assert.equal((await runOnce(memoryPort(), list)).status, 'terminal_failure');
    const handoff = plan([
      {
        id: 'out',
        type: 'output',
        action: 'CHECKOUT_HANDOFF',
        data: {
          object: { checkout_id: 'chk_1', email: 'ann@example.com', shipping_address: { literal: { line1: 'x' } } },
        },
      },
    ]);
    const handed = await runOnce(memoryPort(), handoff);
    assert.deepEqual(handed.status === 'succeeded' && handed.action.data, { checkout_id: 'chk_1' });
  });

  test('client downgrade rules: OFFER → RESPOND; RENDER_PRODUCT_ALTERNATIVES / DETAILS → DATA_RESULT with metadata.original_type', () => {
    const action = (type: NormalizedAction['type']): NormalizedAction => ({
      type,
      content: 'c',
      data: { a: 1 },
      metadata: { k: 'v' },
    });
    const basic = { actions: ['RESPOND', 'DATA_RESULT'] };
    assert.equal(clientAction(action('OFFER_PRODUCT_ALTERNATIVES'), basic).type, 'RESPOND');
    for (const type of ['RENDER_PRODUCT_ALTERNATIVES', 'RENDER_PRODUCT_DETAILS'] as const) {
      const downgraded = clientAction(action(type), basic);
      assert.equal(downgraded.type, 'DATA_RESULT');
      assert.deepEqual(downgraded.metadata, { k: 'v', original_type: type });
      assert.deepEqual(downgraded.data, { a: 1 });
    }
    for (const type of [
      'OFFER_PRODUCT_ALTERNATIVES',
      'RENDER_PRODUCT_ALTERNATIVES',
      'RENDER_PRODUCT_DETAILS',
    ] as const) {
      assert.deepEqual(clientAction(action(type), { actions: [type] }), action(type), 'a supported action is kept');
      assert.deepEqual(clientAction(action(type), undefined), action(type), 'no declared capabilities: kept');
    }
    assert.equal(
      clientAction(action('RENDER_PRODUCTS'), basic).type,
      'RENDER_PRODUCTS',
      'other actions are not downgraded',
    );
    const handoff = clientAction(
      { type: 'OPEN_WIDGET', content: null, data: { surface: 's', phone: '1' }, metadata: { email: 'x' } },
      basic,
    );
    assert.deepEqual([handoff.data, handoff.metadata], [{ surface: 's' }, {}]);
  });

  test('the plan is never modified by a run, and each run starts from the log alone', async () => {
    const flow = plan([
      { id: 'in', type: 'input', next: 'shape' },
      { id: 'shape', type: 'transform', expression: { var: 'vars.input' }, assign: 'copy', next: 'out' },
      out(),
    ]);
    const snapshot = JSON.stringify(flow);
    await runOnce(memoryPort(), flow);
    await runOnce(memoryPort(), flow, { input: { other: true } });
    assert.equal(JSON.stringify(flow), snapshot);
  });
});
