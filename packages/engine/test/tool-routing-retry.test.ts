import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  aggregateParallel,
  backoffDelay,
  type CallOutcome,
  executeParallel,
  executeWithRetry,
  MAX_AGGREGATE_FAILURES,
  MAX_FAILURE_MESSAGE,
  mayRepeat,
  RETRY_LIMITS,
  retryPolicy,
  type ServerObservation,
  ServerStats,
  safeFailureCode,
  safeFailureMessage,
  ToolCallError,
} from '../src/toolservers/routing/index.ts';

/** A fake sleep: records waits; timeouts (the policy's timeout_ms) resolve only when `fire` is called. */
function fakeTime(policyTimeout: number) {
  const waits: number[] = [];
  const timeouts: (() => void)[] = [];
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (ms === policyTimeout) {
        timeouts.push(resolve);
        signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        return;
      }
      waits.push(ms);
      resolve();
    });
  const fireTimeouts = () => {
    for (const fire of timeouts.splice(0)) fire();
  };
  return { sleep, waits, fireTimeouts };
}

const policy = retryPolicy({ timeout_ms: 1000, max_retries: 3, backoff_base_ms: 100, backoff_max_ms: 1000 });
const transient = () => new ToolCallError('UPSTREAM_UNAVAILABLE', 'connection refused', { retryable: true });

function scripted(script: Record<string, (Error | string)[]>) {
  const calls: string[] = [];
  const call = async (serverId: string) => {
    calls.push(serverId);
    const next = script[serverId]?.shift();
    if (next === undefined) throw new Error(`unexpected call to ${serverId}`);
    if (next instanceof Error) throw next;
    return next;
  };
  return { call, calls };
}

describe('retry policy: settings', () => {
  test('defaults, clamping to the bounds, and non-finite values', () => {
    assert.deepEqual(retryPolicy(), {
      timeout_ms: RETRY_LIMITS.timeoutMs.default,
      max_retries: 2,
      backoff_base_ms: 100,
      backoff_max_ms: 5000,
    });
    const clamped = retryPolicy({
      timeout_ms: 10 ** 9,
      max_retries: 99,
      backoff_base_ms: -5,
      backoff_max_ms: Number.NaN,
    });
    assert.deepEqual(clamped, { timeout_ms: 120_000, max_retries: 5, backoff_base_ms: 0, backoff_max_ms: 5000 });
    assert.equal(retryPolicy({ timeout_ms: 1 }).timeout_ms, 100);
    assert.equal(retryPolicy({ backoff_base_ms: 3000, backoff_max_ms: 10 }).backoff_max_ms, 3000);
  });

  test('backoff doubles, is capped, and jitter stays within 50-100 % of it', () => {
    const p = retryPolicy({ backoff_base_ms: 100, backoff_max_ms: 1000 });
    assert.deepEqual(
      [0, 1, 2, 3, 4, 40].map((n) => backoffDelay(n, p, () => 0.999999)),
      [100, 200, 400, 800, 1000, 1000],
    );
    assert.deepEqual(
      [0, 1, 2].map((n) => backoffDelay(n, p, () => 0)),
      [50, 100, 200],
    );
    assert.equal(
      backoffDelay(0, p, () => 7),
      100,
    );
  });

  test('a write may be repeated only with an idempotency key', () => {
    assert.equal(mayRepeat({ readOnly: true }), true);
    assert.equal(mayRepeat({ readOnly: false }), false);
    assert.equal(mayRepeat({ readOnly: false, idempotencyKey: '' }), false);
    assert.equal(mayRepeat({ readOnly: false, idempotencyKey: 'idem_1' }), true);
  });
});

describe('retry policy: execution along a route', () => {
  test('a read falls back along the order on retryable failures, without backoff when the server changes', async () => {
    const t = fakeTime(policy.timeout_ms);
    const { call, calls } = scripted({ srv_a: [transient()], srv_b: [transient()], srv_c: ['ok from c'] });
    const out = await executeWithRetry(['srv_a', 'srv_b', 'srv_c'], call, { policy, readOnly: true, sleep: t.sleep });
    assert.equal(out.ok, true);
    assert.equal(out.ok && out.value, 'ok from c');
    assert.equal(out.server_id, 'srv_c');
    assert.deepEqual(calls, ['srv_a', 'srv_b', 'srv_c']);
    assert.deepEqual(t.waits, []);
    assert.deepEqual(
      out.attempts.map((a) => [a.server_id, a.ok, a.code]),
      [
        ['srv_a', false, 'UPSTREAM_UNAVAILABLE'],
        ['srv_b', false, 'UPSTREAM_UNAVAILABLE'],
        ['srv_c', true, undefined],
      ],
    );
  });

  test('the last server is retried with jittered exponential backoff, at most max_retries times', async () => {
    const t = fakeTime(policy.timeout_ms);
    const { call, calls } = scripted({ srv_a: [transient(), transient(), transient(), transient(), 'never'] });
    const out = await executeWithRetry(['srv_a'], call, { policy, readOnly: true, sleep: t.sleep, random: () => 0.5 });
    assert.equal(out.ok, false);
    assert.equal(calls.length, 1 + policy.max_retries);
    assert.deepEqual(t.waits, [75, 150, 300]);
    assert.deepEqual(
      out.attempts.map((a) => a.backoff_ms),
      [undefined, 75, 150, 300],
    );
    assert.equal(!out.ok && out.error.code, 'UPSTREAM_UNAVAILABLE');
  });

  test('a write without an idempotency key is called once: no retry, no fallback', async () => {
    const t = fakeTime(policy.timeout_ms);
    const { call, calls } = scripted({ srv_a: [transient()], srv_b: ['ok'] });
    const out = await executeWithRetry(['srv_a', 'srv_b'], call, { policy, readOnly: false, sleep: t.sleep });
    assert.equal(out.ok, false);
    assert.deepEqual(calls, ['srv_a']);
    assert.equal(!out.ok && out.error.retryable, true);
  });

  test('a write with an idempotency key retries the same server after a backoff (never another server)', async () => {
    const t = fakeTime(policy.timeout_ms);
    const { call, calls } = scripted({ srv_a: [transient(), 'written'], srv_b: ['never'] });
    const out = await executeWithRetry(['srv_a', 'srv_b'], call, {
      policy,
      readOnly: false,
      idempotencyKey: 'idem_1',
      sleep: t.sleep,
      random: () => 0,
    });
    assert.equal(out.ok && out.value, 'written');
    assert.deepEqual(calls, ['srv_a', 'srv_a']);
    assert.deepEqual(t.waits, [50]);
  });

  test('a failure that is not retryable stops at once, even for a read', async () => {
    const t = fakeTime(policy.timeout_ms);
    const { call, calls } = scripted({
      srv_a: [new ToolCallError('TOOL_ARGUMENTS_INVALID', 'bad arguments')],
      srv_b: ['never'],
    });
    const out = await executeWithRetry(['srv_a', 'srv_b'], call, { policy, readOnly: true, sleep: t.sleep });
    assert.deepEqual(calls, ['srv_a']);
    assert.equal(!out.ok && out.error.code, 'TOOL_ARGUMENTS_INVALID');
  });

  test('an unclassified exception is not retried and its message is made safe', async () => {
    const { call, calls } = scripted({ srv_a: [new Error('boom token=abc123secret')], srv_b: ['never'] });
    const out = await executeWithRetry(['srv_a', 'srv_b'], call, { policy, readOnly: true });
    assert.deepEqual(calls, ['srv_a']);
    assert.equal(!out.ok && out.error.code, 'TOOL_ERROR');
    assert.equal(!out.ok && out.error.message, 'boom token=[redacted]');
  });

  test('the rule timeout aborts the attempt, counts as retryable and moves on', async () => {
    const t = fakeTime(policy.timeout_ms);
    const signals: AbortSignal[] = [];
    const call = (serverId: string, signal: AbortSignal) => {
      signals.push(signal);
      if (serverId === 'srv_b') return Promise.resolve('fast');
      queueMicrotask(t.fireTimeouts);
      return new Promise<string>(() => {});
    };
    const out = await executeWithRetry(['srv_a', 'srv_b'], call, { policy, readOnly: true, sleep: t.sleep });
    assert.equal(out.ok && out.value, 'fast');
    assert.equal(out.attempts[0]?.code, 'TOOL_TIMEOUT');
    assert.equal(signals[0]?.aborted, true);
    assert.equal(signals[1]?.aborted, false);
  });

  test('with real timers a hung server is abandoned after timeout_ms', async () => {
    const short = retryPolicy({ timeout_ms: 100, max_retries: 0 });
    const started = performance.now();
    const out = await executeWithRetry(['srv_a'], () => new Promise<string>(() => {}), {
      policy: short,
      readOnly: true,
    });
    const elapsed = performance.now() - started;
    assert.equal(!out.ok && out.error.code, 'TOOL_TIMEOUT');
    assert.ok(elapsed >= 95 && elapsed < 2000, `elapsed ${elapsed}`);
  });

  test("the caller's cancellation stops the call and any retry", async () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const call = (serverId: string, signal: AbortSignal) => {
      calls.push(serverId);
      return new Promise<string>((_, reject) => {
        signal.addEventListener('abort', () => reject(transient()), { once: true });
        controller.abort();
      });
    };
    const out = await executeWithRetry(['srv_a', 'srv_b'], call, {
      policy,
      readOnly: true,
      signal: controller.signal,
    });
    assert.equal(!out.ok && out.error.code, 'CANCELLED');
    assert.deepEqual(calls, ['srv_a']);
  });

  test('an empty route fails closed', async () => {
    const out = await executeWithRetry([], async () => 'x', { policy, readOnly: true });
    assert.equal(!out.ok && out.error.code, 'ROUTE_NO_ELIGIBLE_SERVER');
    assert.deepEqual(out.attempts, []);
  });

  test('each attempt is observed, so the stats learn from calls (authentication failures included)', async () => {
    const t = fakeTime(policy.timeout_ms);
    let clock = 0;
    const observed: ServerObservation[] = [];
    const stats = new ServerStats({ instanceId: 'i1', now: () => 0 });
    const { call } = scripted({
      srv_a: [new ToolCallError('UPSTREAM_AUTH_FAILED', 'unauthorized', { retryable: true, authFailure: true })],
      srv_b: ['ok'],
    });
    await executeWithRetry(
      ['srv_a', 'srv_b'],
      async (id) => {
        clock += 40;
        return call(id);
      },
      {
        policy,
        readOnly: true,
        sleep: t.sleep,
        now: () => clock,
        observe: (o) => {
          observed.push(o);
          stats.record(o);
        },
      },
    );
    assert.deepEqual(observed, [
      { server_id: 'srv_a', kind: 'call', ok: false, latency_ms: 40, auth_failure: true },
      { server_id: 'srv_b', kind: 'call', ok: true, latency_ms: 40 },
    ]);
    assert.equal(stats.view('srv_a').health, 'unhealthy');
    assert.equal(stats.view('srv_b').latency_ms, 40);
  });
});

describe('retry policy: failure metadata', () => {
  test('secrets, credentials in URLs, e-mail addresses and long opaque strings are removed', () => {
    const message = safeFailureMessage(
      'POST https://user:pa55@api.example.com/v1?api_key=XYZ failed: Authorization: Bearer eyJhbGciOi.x.y ' +
        'password="hunter2" for jane.doe@example.com key sk_live_0123456789abcdefghijklmnopqrstuv',
    );
    for (const leaked of ['pa55', 'XYZ', 'eyJhbGciOi', 'hunter2', 'jane.doe', 'sk_live_0123456789']) {
      assert.ok(!message.includes(leaked), `${leaked} leaked in ${message}`);
    }
    assert.match(message, /api\.example\.com/);
  });

  test('messages are bounded, control characters dropped, and empty or odd values replaced', () => {
    const long = safeFailureMessage(`${'word '.repeat(500)}`);
    assert.ok(long.length <= MAX_FAILURE_MESSAGE);
    assert.ok(long.endsWith('…'));
    assert.equal(safeFailureMessage('a\u0000\nb'), 'a b');
    assert.equal(safeFailureMessage(''), 'tool call failed');
    assert.equal(safeFailureMessage({ secret: 'x' }), 'tool call failed');
    assert.equal(safeFailureCode('UPSTREAM_TIMEOUT'), 'UPSTREAM_TIMEOUT');
    assert.equal(safeFailureCode('<script>'), 'TOOL_ERROR');
    assert.equal(safeFailureCode(`A${'B'.repeat(64)}`), 'TOOL_ERROR');
  });
});

describe('retry policy: parallel aggregation', () => {
  test('successful per-server results plus bounded failure metadata for the failing server', async () => {
    const t = fakeTime(policy.timeout_ms);
    const { call } = scripted({
      srv_a: [{ rows: 2 } as unknown as string],
      srv_b: [new ToolCallError('UPSTREAM_ERROR', 'failed with Bearer abc.def', { retryable: false })],
      srv_c: [transient(), 'c recovered'],
    });
    const aggregate = await executeParallel(['srv_a', 'srv_b', 'srv_c'], call, {
      policy,
      readOnly: true,
      sleep: t.sleep,
      random: () => 0,
    });
    assert.deepEqual(aggregate.results, [
      { server_id: 'srv_a', result: { rows: 2 } },
      { server_id: 'srv_c', result: 'c recovered' },
    ]);
    assert.deepEqual(aggregate.failures, [
      { server_id: 'srv_b', code: 'UPSTREAM_ERROR', message: 'failed with Bearer [redacted]', retryable: false },
    ]);
    assert.equal(aggregate.succeeded, 2);
    assert.equal(aggregate.failed, 1);
    assert.equal(aggregate.failures_omitted, 0);
  });

  test('parallel writes without an idempotency key are not retried', async () => {
    const { call, calls } = scripted({ srv_a: [transient(), 'never'], srv_b: ['ok'] });
    const aggregate = await executeParallel(['srv_a', 'srv_b'], call, { policy, readOnly: false });
    assert.deepEqual(calls.sort(), ['srv_a', 'srv_b']);
    assert.equal(aggregate.failed, 1);
  });

  test('concurrency is bounded', async () => {
    let inFlight = 0;
    let peak = 0;
    const call = async () => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight -= 1;
      return 'ok';
    };
    const servers = Array.from({ length: 10 }, (_, i) => `srv_${i}`);
    const aggregate = await executeParallel(servers, call, { policy, readOnly: true, maxConcurrency: 3 });
    assert.equal(peak, 3);
    assert.equal(aggregate.succeeded, 10);
  });

  test('the failure list is bounded; the rest are counted', () => {
    const outcomes: CallOutcome<string>[] = Array.from({ length: MAX_AGGREGATE_FAILURES + 5 }, (_, i) => ({
      ok: false,
      server_id: `srv_${i}`,
      error: { code: 'X', message: 'm'.repeat(5000), retryable: false },
      attempts: [],
    }));
    const aggregate = aggregateParallel(
      outcomes,
      outcomes.map((o) => o.server_id as string),
    );
    assert.equal(aggregate.failures.length, MAX_AGGREGATE_FAILURES);
    assert.equal(aggregate.failures_omitted, 5);
    assert.equal(aggregate.failed, MAX_AGGREGATE_FAILURES + 5);
    assert.ok(aggregate.failures.every((f) => f.message.length <= MAX_FAILURE_MESSAGE));
  });
});
