import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decayFactor, ServerStats } from '../src/toolservers/routing/index.ts';

const HALF = 60_000;

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function stats(instanceId: string, c = clock()) {
  return new ServerStats({ instanceId, halfLifeMs: HALF, now: c.now });
}

const ok = (server_id: string, latency_ms: number) => ({ server_id, kind: 'call' as const, ok: true, latency_ms });
const fail = (server_id: string, extra: { auth_failure?: boolean } = {}) => ({
  server_id,
  kind: 'probe' as const,
  ok: false,
  latency_ms: 5000,
  ...extra,
});

describe('server stats: observations', () => {
  test('no observation: unknown health, no latency', () => {
    const view = stats('a').view('srv_1');
    assert.equal(view.health, 'unknown');
    assert.equal(view.latency_ms, undefined);
    assert.equal(view.samples, 0);
    assert.equal(view.error_rate, 0);
  });

  test('successes give healthy with the mean latency; failures do not feed the latency', () => {
    const s = stats('a');
    s.record(ok('srv_1', 10));
    s.record(ok('srv_1', 30));
    s.record(ok('srv_1', 20));
    s.record(fail('srv_1'));
    const view = s.view('srv_1');
    assert.equal(view.latency_ms, 20);
    assert.equal(view.samples, 4);
    assert.equal(view.error_rate, 0.25);
    assert.equal(view.health, 'degraded');
  });

  test('three failures in a row make a server unhealthy at once; one success clears the streak', () => {
    const s = stats('a');
    for (let i = 0; i < 10; i++) s.record(ok('srv_1', 5));
    s.record(fail('srv_1'));
    s.record(fail('srv_1'));
    assert.notEqual(s.view('srv_1').health, 'unhealthy');
    s.record(fail('srv_1'));
    assert.equal(s.view('srv_1').health, 'unhealthy');
    assert.equal(s.view('srv_1').consecutive_failures, 3);
    s.record(ok('srv_1', 5));
    assert.equal(s.view('srv_1').consecutive_failures, 0);
    assert.notEqual(s.view('srv_1').health, 'unhealthy');
  });

  test('an error rate at or over one half is unhealthy once there are enough samples', () => {
    const s = stats('a');
    s.record(ok('srv_1', 5));
    s.record(fail('srv_1'));
    s.record(ok('srv_1', 5));
    s.record(fail('srv_1'));
    assert.equal(s.view('srv_1').error_rate, 0.5);
    assert.equal(s.view('srv_1').health, 'unhealthy');
  });

  test('an authentication failure as the last observation is unhealthy and reported', () => {
    const s = stats('a');
    for (let i = 0; i < 10; i++) s.record(ok('srv_1', 5));
    s.record(fail('srv_1', { auth_failure: true }));
    const view = s.view('srv_1');
    assert.equal(view.auth_failing, true);
    assert.equal(view.health, 'unhealthy');
    s.record(ok('srv_1', 5));
    assert.equal(s.view('srv_1').auth_failing, false);
  });

  test('hostile latencies are clamped and non-numbers count as 0', () => {
    const s = stats('a');
    s.record(ok('srv_1', Number.POSITIVE_INFINITY));
    s.record(ok('srv_1', Number.NaN));
    assert.equal(s.view('srv_1').latency_ms, 300_000);
  });
});

describe('server stats: decay over time', () => {
  test('the decay factor halves per half-life and never grows for a clock running backwards', () => {
    assert.equal(decayFactor(HALF, HALF), 0.5);
    assert.equal(decayFactor(2 * HALF, HALF), 0.25);
    assert.equal(decayFactor(-5000, HALF), 1);
  });

  test('old failures weigh less than new successes: the error rate recovers with time', () => {
    const c = clock();
    const s = stats('a', c);
    for (let i = 0; i < 4; i++) s.record(ok('srv_1', 5));
    for (let i = 0; i < 4; i++) s.record(fail('srv_1'));
    s.record(ok('srv_1', 5)); // streak cleared
    assert.ok(s.view('srv_1').error_rate > 0.4);
    c.advance(5 * HALF);
    for (let i = 0; i < 4; i++) s.record(ok('srv_1', 5));
    const view = s.view('srv_1');
    assert.ok(view.error_rate < 0.05, `error rate ${view.error_rate}`);
    assert.equal(view.health, 'healthy');
  });

  test('latency follows recent observations', () => {
    const c = clock();
    const s = stats('a', c);
    for (let i = 0; i < 5; i++) s.record(ok('srv_1', 1000));
    c.advance(10 * HALF);
    for (let i = 0; i < 5; i++) s.record(ok('srv_1', 10));
    const latency = s.view('srv_1').latency_ms ?? 0;
    assert.ok(latency < 12, `latency ${latency}`);
  });

  test('with no new observations the samples decay until health is unknown again, and snapshots drop them', () => {
    const c = clock();
    const s = stats('a', c);
    for (let i = 0; i < 10; i++) s.record(ok('srv_1', 5));
    assert.equal(s.view('srv_1').health, 'healthy');
    assert.ok(Math.abs(s.view('srv_1').samples - 10) < 1e-9);
    c.advance(HALF);
    assert.ok(Math.abs(s.view('srv_1').samples - 5) < 1e-9);
    c.advance(2 * HALF);
    assert.equal(s.view('srv_1').health, 'unknown');
    c.advance(20 * HALF);
    assert.equal(s.snapshot().entries.length, 0);
  });
});

describe('server stats: snapshots shared between instances', () => {
  test('a snapshot is plain JSON and round-trips', () => {
    const s = stats('a');
    s.record(ok('srv_1', 10));
    s.record(fail('srv_2'));
    const snap = s.snapshot();
    assert.deepEqual(JSON.parse(JSON.stringify(snap)), snap);
    assert.deepEqual(
      snap.entries.map((e) => e.server_id),
      ['srv_1', 'srv_2'],
    );
  });

  test('merged observations of other instances count in the view', () => {
    const c = clock();
    const a = stats('a', c);
    const b = stats('b', c);
    for (let i = 0; i < 3; i++) a.record(ok('srv_1', 10));
    for (let i = 0; i < 3; i++) b.record(fail('srv_1'));
    assert.equal(a.view('srv_1').health, 'healthy');
    assert.deepEqual(a.merge(b.snapshot()), { accepted: 1, rejected: 0 });
    const view = a.view('srv_1');
    assert.equal(view.samples, 6);
    assert.equal(view.error_rate, 0.5);
    assert.equal(view.health, 'unhealthy');
    assert.equal(view.latency_ms, 10);
  });

  test('merge is idempotent: merging the same snapshot twice, or a snapshot back, counts nothing twice', () => {
    const c = clock();
    const a = stats('a', c);
    const b = stats('b', c);
    for (let i = 0; i < 4; i++) b.record(ok('srv_1', 10));
    a.merge(b.snapshot());
    a.merge(b.snapshot());
    assert.equal(a.view('srv_1').samples, 4);
    b.merge(a.snapshot()); // b's own entry comes back: ignored
    assert.equal(b.view('srv_1').samples, 4);
  });

  test('merge is order independent and keeps the newest entry per instance and server', () => {
    const c = clock();
    const b = stats('b', c);
    b.record(ok('srv_1', 10));
    const older = b.snapshot();
    c.advance(1000);
    b.record(fail('srv_1'));
    const newer = b.snapshot();
    const x = stats('x', c);
    const y = stats('y', c);
    x.merge(older);
    x.merge(newer);
    y.merge(newer);
    y.merge(older);
    assert.deepEqual(x.snapshot(), y.snapshot());
    assert.equal(x.view('srv_1').consecutive_failures, 1);
  });

  test('relayed entries converge: c learns a through b', () => {
    const c0 = clock();
    const a = stats('a', c0);
    const b = stats('b', c0);
    const c = stats('c', c0);
    for (let i = 0; i < 3; i++) a.record(ok('srv_1', 7));
    b.merge(a.snapshot());
    c.merge(b.snapshot());
    assert.equal(c.view('srv_1').samples, 3);
    assert.equal(c.view('srv_1').latency_ms, 7);
  });

  test('a merged entry decays by its own time', () => {
    const c0 = clock();
    const a = stats('a', c0);
    const b = stats('b', c0);
    for (let i = 0; i < 8; i++) b.record(ok('srv_1', 7));
    const snap = b.snapshot();
    c0.advance(HALF);
    a.merge(snap);
    assert.ok(Math.abs(a.view('srv_1').samples - 4) < 1e-9);
  });

  test('malformed snapshots and entries are refused without touching the stats', () => {
    const a = stats('a');
    a.record(ok('srv_1', 5));
    const before = a.snapshot();
    assert.deepEqual(a.merge(null), { accepted: 0, rejected: 1 });
    assert.deepEqual(a.merge({ version: 2, entries: [] }), { accepted: 0, rejected: 1 });
    const good = { instance_id: 'z', server_id: 'srv_1', at: 1, samples: 1, failures: 0 };
    const bad: unknown[] = [
      { ...good, latency_weight: 1, latency_sum: -1, consecutive_failures: 0, auth_failing: false },
      { ...good, latency_weight: 1, latency_sum: 1, consecutive_failures: 0.5, auth_failing: false },
      { ...good, failures: 5, latency_weight: 1, latency_sum: 1, consecutive_failures: 0, auth_failing: false },
      { ...good, samples: Number.NaN, latency_weight: 1, latency_sum: 1, consecutive_failures: 0, auth_failing: false },
      {
        ...good,
        server_id: 'x'.repeat(201),
        latency_weight: 1,
        latency_sum: 1,
        consecutive_failures: 0,
        auth_failing: false,
      },
      'not an entry',
    ];
    assert.deepEqual(a.merge({ version: 1, half_life_ms: HALF, entries: bad }), {
      accepted: 0,
      rejected: bad.length,
    });
    assert.deepEqual(a.snapshot(), before);
  });

  test('an oversized snapshot is refused whole', () => {
    const a = stats('a');
    const entries = Array.from({ length: 20_001 }, () => ({}));
    assert.deepEqual(a.merge({ version: 1, entries }), { accepted: 0, rejected: 20_001 });
  });

  test('forget removes a server from every instance entry', () => {
    const c = clock();
    const a = stats('a', c);
    const b = stats('b', c);
    b.record(ok('srv_1', 5));
    a.record(ok('srv_1', 5));
    a.merge(b.snapshot());
    a.forget('srv_1');
    assert.equal(a.view('srv_1').samples, 0);
    assert.deepEqual(a.views(), []);
  });
});
