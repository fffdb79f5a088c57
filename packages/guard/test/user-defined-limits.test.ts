import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { App } from '@keel/core';
import { createUserWork } from '../src/sandbox/user-work.ts';
import { completionOf, postChat, readSse, startChatUpstream, startGateway, streamOf } from './gateway-fixtures.ts';
import { buildGuard, detect, testDatabaseTargets } from './helper.ts';

// User-defined detection (patterns, REGEX and SCHEMA validators) is bounded at creation and stopped at the
// deadline without ever holding up other requests.

/** Accepted by the creation bounds, yet quadratic over a long run of `a`s: every `a` starts a search to the end. */
const SLOW_PATTERN = 'a(.*b)?';
const SLOW_TEXT = 'a'.repeat(300_000);

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

async function createPattern(app: App, name: string, regex: string) {
  return app.inject({ method: 'POST', url: '/patterns', payload: { Name: name, Regex: regex } });
}

for (const target of testDatabaseTargets()) {
  describe(`user-defined detection limits (${target.dialect})`, () => {
    test('patterns whose compiled program or nested repetition is too costly are a 400 naming the limit', async (t) => {
      const { app } = await buildGuard(t, target);
      for (const [regex, limit] of [
        ['(.*){1,1000}', /at most 2000/],
        ['(.*a){20}', /at most 10/],
        ['((.*a){4}){3}', /at most 10/],
        ['(\\w+\\s*){1,50}', /at most 10/],
      ] as const) {
        const response = await createPattern(app, 'COSTLY', regex);
        assert.equal(response.statusCode, 400, regex);
        assert.equal(response.json().error.code, 'GUARD_INVALID_REGEX');
        assert.match(response.json().error.message, limit, regex);
      }
      assert.equal((await createPattern(app, 'FINE', '(.*a){10}')).statusCode, 201);
      const imported = await app.inject({
        method: 'POST',
        url: '/templates/import',
        payload: {
          template: {
            name: 't',
            description: '',
            patterns: [
              { Name: 'OK_ONE', Regex: 'ok[0-9]+' },
              { Name: 'COSTLY', Regex: '(.*a){20}' },
            ],
            validators: [],
          },
        },
      });
      assert.equal(imported.statusCode, 400);
      const names = (await app.inject({ method: 'GET', url: '/patterns' })).json().map((p: { Name: string }) => p.Name);
      assert.ok(!names.includes('OK_ONE'), 'nothing of a refused template is written');
      const validator = await app.inject({
        method: 'POST',
        url: '/validators',
        payload: { name: 'costly', type: 'REGEX', rule: '(.*){1,1000}', description: '', expected_response: 'MATCH' },
      });
      assert.equal(validator.statusCode, 400);
      assert.match(validator.json().error.message, /at most 2000/);
    });

    test('a slow user pattern is stopped at DETECT_TIMEOUT_MS (503) while /healthz and other /detect calls answer', async (t) => {
      const { app, ctx } = await buildGuard(t, target, { DETECT_TIMEOUT_MS: '2000' });
      assert.equal((await createPattern(app, 'SLOW', SLOW_PATTERN)).statusCode, 201);
      await ctx.userWork.warm();

      const slow = timed(detect(app, { text: SLOW_TEXT }));
      // Measured from before the pause: a blocked event loop would delay the pause's own timer.
      const health = await timed(
        new Promise((resolve) => setTimeout(resolve, 300)).then(() => app.inject({ method: 'GET', url: '/healthz' })),
      );
      assert.equal(health.value.statusCode, 200);
      assert.ok(health.ms < 800, `/healthz answered after ${health.ms.toFixed(0)} ms while a scan was running`);
      const other = await timed(detect(app, { text: 'jo@test.io or ab' }));
      assert.equal(other.value.status, 200);
      assert.ok(other.ms < 1000, `another /detect answered in ${other.ms.toFixed(0)} ms`);
      assert.deepEqual(
        other.value.body.detections.map((d: { type: string }) => d.type),
        ['EMAIL', 'SLOW'],
        'user patterns still match',
      );

      const { value, ms } = await slow;
      assert.equal(value.status, 503);
      assert.equal(value.body.error.code, 'GUARD_DETECT_TIMEOUT');
      assert.ok(ms < 4500, `the slow call ended after ${ms.toFixed(0)} ms (limit 2000)`);
      assert.equal((await detect(app, { text: 'and after it: ab' })).status, 200, 'a fresh worker took over');
    });

    test('SCHEMA patterns run on RE2: ^(a+)+$ answers at once; oversized schemas are a 400', async (t) => {
      const { app, ctx } = await buildGuard(t, target);
      await ctx.userWork.warm();
      const created = await app.inject({
        method: 'POST',
        url: '/validators',
        payload: {
          name: 'as',
          type: 'SCHEMA',
          rule: JSON.stringify({ type: 'string', pattern: '^(a+)+$' }),
          description: '',
          expected_response: '',
        },
      });
      assert.equal(created.statusCode, 201);
      const { value, ms } = await timed(
        detect(app, { text: JSON.stringify(`${'a'.repeat(31)}!`), guardrails: ['as'] }),
      );
      assert.equal(value.status, 200);
      assert.equal(value.body.validator_results[0].passed, false);
      // V8's backtracking RegExp took 9–56 s on this text.
      assert.ok(ms < 3000, `validated in ${ms.toFixed(0)} ms`);
      assert.equal(
        (await detect(app, { text: JSON.stringify('aaaa'), guardrails: ['as'] })).body.validator_results[0].passed,
        true,
      );

      let deep: Record<string, unknown> = { type: 'string' };
      for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { x: deep } };
      for (const [rule, message] of [
        [JSON.stringify(deep), /nested too deeply/],
        [JSON.stringify({ type: 'string', pattern: '(.*){1,1000}' }), /at most 2000/],
        [JSON.stringify({ type: 'string', pattern: '(?=a)b' }), /not a valid JSON Schema/],
        [JSON.stringify({ enum: Array.from({ length: 2500 }, (_, i) => i) }), /too large/],
      ] as const) {
        const response = await app.inject({
          method: 'POST',
          url: '/validators',
          payload: { name: 'bad', type: 'SCHEMA', rule, description: '', expected_response: '' },
        });
        assert.equal(response.statusCode, 400, rule.slice(0, 60));
        assert.match(response.json().error.message, message);
      }
    });

    test('a SCHEMA validation that outlives DETECT_TIMEOUT_MS is a 503', async (t) => {
      const { app, ctx } = await buildGuard(t, target, { DETECT_TIMEOUT_MS: '1500' });
      await ctx.userWork.warm();
      const created = await app.inject({
        method: 'POST',
        url: '/validators',
        payload: {
          name: 'unique',
          type: 'SCHEMA',
          rule: JSON.stringify({ type: 'array', uniqueItems: true }),
          description: '',
          expected_response: '',
        },
      });
      assert.equal(created.statusCode, 201);
      assert.equal((await detect(app, { text: '[{"a":1},{"a":2}]', guardrails: ['unique'] })).status, 200);
      // ajv compares object items pairwise: 60,000 distinct objects take far longer than the limit.
      const items = JSON.stringify(Array.from({ length: 60_000 }, (_, i) => ({ k: i })));
      const { value, ms } = await timed(detect(app, { text: items, guardrails: ['unique'] }));
      assert.equal(value.status, 503);
      assert.equal(value.body.error.code, 'GUARD_DETECT_TIMEOUT');
      assert.ok(ms < 4000, `ended after ${ms.toFixed(0)} ms`);
    });
  });
}

describe('user-defined detection limits in the gateway', () => {
  test('a slow user pattern fails the call closed (503) within the detection limit', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('Noted.') }));
    const gateway = await startGateway(t, upstream.url, { DETECT_TIMEOUT_MS: '2000' });
    assert.equal((await createPattern(gateway.app, 'SLOW', SLOW_PATTERN)).statusCode, 201);
    await gateway.ctx.userWork.warm();
    const started = performance.now();
    const response = await postChat(gateway.url, { model: 'm', messages: [{ role: 'user', content: SLOW_TEXT }] });
    const ms = performance.now() - started;
    assert.equal(response.status, 503);
    assert.equal((await response.json()).error.code, 'gw_detection_failed');
    assert.ok(ms < 4500, `ended after ${ms.toFixed(0)} ms`);
    assert.equal(upstream.calls.length, 0, 'nothing was forwarded');
  });

  test('stream-sync: a slow user pattern on the output stops the stream with gw_detection_failed', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ sse: streamOf([`${'a'.repeat(6000)} `, 'done']) }));
    const gateway = await startGateway(t, upstream.url, { DETECT_TIMEOUT_MS: '300' });
    assert.equal((await createPattern(gateway.app, 'SLOW', SLOW_PATTERN)).statusCode, 201);
    await gateway.ctx.userWork.warm();
    const started = performance.now();
    const events = await readSse(
      await postChat(
        gateway.url,
        { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] },
        { 'X-GW-Guardrails-Mode': 'stream-sync' },
      ),
    );
    assert.ok(performance.now() - started < 3000);
    assert.equal(events.at(-1), '[DONE]');
    assert.equal(events.at(-2).error.code, 'gw_detection_failed');
    assert.ok(!JSON.stringify(events).includes('a'.repeat(100)), 'nothing unchecked went out');
  });
});

describe('user-defined detection whose worker dies', () => {
  test('a worker that runs out of memory is a 503 GUARD_USER_DETECTION_FAILED, and the next call works', async (t) => {
    const { app, ctx } = await buildGuard(t, testDatabaseTargets()[0]!);
    // A pool with tiny heaps, so that parsing a large JSON text in the worker runs out of memory.
    const small = createUserWork(2, 16);
    t.after(() => small.close());
    ctx.userWork = small;
    const created = await app.inject({
      method: 'POST',
      url: '/validators',
      payload: { name: 'obj', type: 'SCHEMA', rule: JSON.stringify({ type: 'array' }), expected_response: '' },
    });
    assert.equal(created.statusCode, 201);
    const huge = JSON.stringify(Array.from({ length: 600_000 }, (_, i) => ({ k: i })));
    const failed = await detect(app, { text: huge, guardrails: ['obj'] });
    assert.equal(failed.status, 503);
    assert.equal(failed.body.error.code, 'GUARD_USER_DETECTION_FAILED');
    const next = await detect(app, { text: '[1, 2]', guardrails: ['obj'] });
    assert.equal(next.status, 200);
    assert.equal(next.body.validator_results[0].passed, true);
  });
});
