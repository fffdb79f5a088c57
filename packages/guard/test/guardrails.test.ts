import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildGuard, completion, detect, sharedGuard, startFakeUpstream, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`guardrails and expected_format (${target.dialect})`, () => {
    // One app for the tests that store no validator; a test that stores one builds its own.
    const readOnly = sharedGuard(target);

    test('built-in validators run by name, one result each, and a failure hard-blocks', async () => {
      const { app } = readOnly();
      const pass = await detect(app, { text: '{"ok": true}', guardrails: ['json', 'no_secrets'] });
      assert.deepEqual(pass.body.validator_results, [
        { name: 'json', type: 'VALIDATOR', passed: true, confidence_score: '1.00', decision_rule: 'DETERMINISTIC' },
        {
          name: 'no_secrets',
          type: 'VALIDATOR',
          passed: true,
          confidence_score: '1.00',
          decision_rule: 'DETERMINISTIC',
        },
      ]);
      assert.equal(pass.body.blocked, false);
      const fail = await detect(app, { text: 'not json', guardrails: ['json'] });
      assert.equal(fail.body.validator_results[0].passed, false);
      assert.equal(fail.body.blocked, true);
      assert.equal(fail.body.message, 'Blocked due to failed guardrail: json');
    });

    test('an unknown guardrail or format is a 400, not a silent pass', async () => {
      const { app } = readOnly();
      const guardrail = await detect(app, { text: 'x', guardrails: ['nope'] });
      assert.equal(guardrail.status, 400);
      assert.equal(guardrail.body.error.code, 'GUARD_UNKNOWN_GUARDRAIL');
      assert.equal(guardrail.body.error.message, 'Unknown guardrail: nope');
      const format = await detect(app, { text: 'x', expected_format: 'yaml-ish' });
      assert.equal(format.status, 400);
      assert.equal(format.body.error.code, 'GUARD_UNKNOWN_FORMAT');
    });

    test('expected_format triggers the format validator it names', async () => {
      const { app } = readOnly();
      const ok = await detect(app, { text: '  550e8400-e29b-41d4-a716-446655440000 ', expected_format: 'uuid' });
      assert.deepEqual(ok.body.validator_results, [
        { name: 'uuid', type: 'VALIDATOR', passed: true, confidence_score: '1.00', decision_rule: 'DETERMINISTIC' },
      ]);
      const bad = await detect(app, { text: 'hello', expected_format: 'json' });
      assert.equal(bad.body.validator_results[0].passed, false);
      assert.equal(bad.body.blocked, true);
    });

    test("REGEX validators take the spec's expected_response values: YES/TRUE/1/MATCH pass on a match, NO/FALSE/0/NO_MATCH on none", async (t) => {
      const { app } = await buildGuard(t, target);
      const cases = [
        ['YES', true],
        ['true', true],
        ['1', true],
        ['MATCH', true],
        [' no ', false],
        ['FALSE', false],
        ['0', false],
        ['no_match', false],
      ] as const;
      for (const [i, [expected]] of cases.entries()) {
        const created = await app.inject({
          method: 'POST',
          url: '/validators',
          payload: { name: `order_${i}`, type: 'REGEX', rule: 'ORD-\\d+', expected_response: expected },
        });
        assert.equal(created.statusCode, 201, expected);
      }
      for (const [i, [expected, passOnMatch]] of cases.entries()) {
        const matching = await detect(app, { text: 'see ORD-42', guardrails: [`order_${i}`] });
        assert.equal(matching.body.validator_results[0].passed, passOnMatch, `${expected} on a match`);
        const other = await detect(app, { text: 'nothing here', guardrails: [`order_${i}`] });
        assert.equal(other.body.validator_results[0].passed, !passOnMatch, `${expected} without a match`);
      }
      const refused = await app.inject({
        method: 'POST',
        url: '/validators',
        payload: { name: 'maybe', type: 'REGEX', rule: 'x', expected_response: 'SAFE' },
      });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.json().error.message, /MATCH, YES, TRUE, 1/);
      const imported = await app.inject({
        method: 'POST',
        url: '/templates/import',
        payload: {
          template: {
            name: 'spec-example',
            description: '',
            patterns: [],
            validators: [
              { name: 'has_order', type: 'REGEX', rule: 'ORD-\\d+', description: '', expected_response: 'YES' },
            ],
          },
        },
      });
      assert.equal(imported.statusCode, 200);
      const run = await detect(app, { text: 'ORD-7', guardrails: ['has_order'] });
      assert.equal(run.body.validator_results[0].passed, true);
    });

    test('stored REGEX, SCHEMA and BUILTIN validators run by name', async (t) => {
      const { app } = await buildGuard(t, target);
      const post = (payload: object) => app.inject({ method: 'POST', url: '/validators', payload });
      assert.equal(
        (await post({ name: 'no_competitors', type: 'REGEX', rule: '(?i)acme corp', expected_response: 'NO_MATCH' }))
          .statusCode,
        201,
      );
      assert.equal((await post({ name: 'zip_only', type: 'REGEX', rule: '^\\d{5}$' })).statusCode, 201);
      assert.equal(
        (
          await post({
            name: 'order_json',
            type: 'SCHEMA',
            rule: JSON.stringify({
              type: 'object',
              required: ['orderId'],
              properties: { orderId: { type: 'string' } },
            }),
          })
        ).statusCode,
        201,
      );
      assert.equal((await post({ name: 'strict_json', type: 'BUILTIN', rule: 'json_object' })).statusCode, 201);

      const competitor = await detect(app, { text: 'Try ACME Corp instead', guardrails: ['no_competitors'] });
      assert.equal(competitor.body.validator_results[0].passed, false);
      assert.equal(competitor.body.blocked, true);
      const zip = await detect(app, { text: '94107', guardrails: ['zip_only'] });
      assert.equal(zip.body.validator_results[0].passed, true);
      const order = await detect(app, {
        text: '{"orderId":"A-1"}',
        expected_format: 'order_json',
        guardrails: ['strict_json'],
      });
      assert.deepEqual(
        order.body.validator_results.map((r: { name: string; passed: boolean }) => [r.name, r.passed]),
        [
          ['strict_json', true],
          ['order_json', true],
        ],
      );
      const wrong = await detect(app, { text: '{"orderId": 5}', expected_format: 'order_json' });
      assert.equal(wrong.body.validator_results[0].passed, false);
    });

    test('AI_PROMPT validators ask the upstream with the redacted text and compare expected_response', async (t) => {
      const upstream = await startFakeUpstream(t, (request) => {
        const userText: string = request.body.messages.at(-1).content;
        return {
          body: completion(
            JSON.stringify({ answer: userText.includes('refund') ? 'UNSAFE' : 'SAFE', confidence: 0.95 }),
          ),
        };
      });
      const { app } = await buildGuard(t, target, { AI_MODEL_URL: upstream.url, AI_MODEL: 'judge-1' });
      const created = await app.inject({
        method: 'POST',
        url: '/validators',
        payload: {
          name: 'tone',
          type: 'AI_PROMPT',
          rule: 'Is this message safe to send? Answer SAFE or UNSAFE.',
          expected_response: 'SAFE',
        },
      });
      assert.equal(created.statusCode, 201);
      const safe = await detect(app, { text: 'hello jane.doe@example.org', guardrails: ['tone'] });
      assert.deepEqual(safe.body.validator_results, [
        { name: 'tone', type: 'AI_PROMPT', passed: true, confidence_score: '0.95', decision_rule: 'MODEL_CONFIDENCE' },
      ]);
      const judged = upstream.requests.filter((r) => r.body.messages[0].content.includes('Is this message safe'));
      assert.equal(judged.length, 1);
      assert.equal(judged[0]!.body.model, 'judge-1');
      assert.doesNotMatch(
        JSON.stringify(judged[0]!.body),
        /jane\.doe@example\.org/,
        'the model sees the redacted text',
      );
      const unsafe = await detect(app, { text: 'I want a refund now', guardrails: ['tone'] });
      assert.equal(unsafe.body.validator_results[0].passed, false);
      assert.equal(unsafe.body.blocked, true, 'a failed high-confidence AI validator blocks');
      assert.equal(unsafe.body.message, 'Blocked due to failed guardrail: tone');
    });

    test('a low-confidence AI failure is reported but does not block', async (t) => {
      const upstream = await startFakeUpstream(t, () => ({ body: completion('{"answer": "NO", "confidence": 0.4}') }));
      const { app } = await buildGuard(t, target, { AI_MODEL_URL: upstream.url });
      await app.inject({
        method: 'POST',
        url: '/validators',
        payload: { name: 'polite', type: 'AI_PROMPT', rule: 'Is it polite? YES or NO' },
      });
      const { body } = await detect(app, { text: 'whatever', guardrails: ['polite'] });
      assert.equal(body.validator_results[0].passed, false);
      assert.equal(body.validator_results[0].confidence_score, '0.40');
      assert.equal(body.validator_results[0].decision_rule, 'MODEL_CONFIDENCE');
      assert.equal(body.blocked, false);
    });

    test('an AI verdict without a confidence is not given one: confidence null, VERDICT_ONLY, a failure blocks', async (t) => {
      let reply = 'NO';
      const upstream = await startFakeUpstream(t, () => ({ body: completion(reply) }));
      const { app } = await buildGuard(t, target, { AI_MODEL_URL: upstream.url, CONFIDENCE_BLOCK_THRESHOLD: '0.95' });
      await app.inject({
        method: 'POST',
        url: '/validators',
        payload: { name: 'polite', type: 'AI_PROMPT', rule: 'Is it polite? YES or NO', expected_response: 'YES' },
      });
      for (const [answer, passed] of [
        ['NO', false],
        ['{"answer": "NO"}', false],
        ['{"answer": "NO", "confidence": 7}', false],
        ['{"answer": "YES", "confidence": "high"}', true],
      ] as const) {
        reply = answer;
        const { body } = await detect(app, { text: 'whatever', guardrails: ['polite'] });
        assert.deepEqual(
          { ...body.validator_results[0], reason: undefined },
          {
            name: 'polite',
            type: 'AI_PROMPT',
            passed,
            confidence_score: null,
            decision_rule: 'VERDICT_ONLY',
            reason: undefined,
          },
          answer,
        );
        assert.equal(body.blocked, !passed, `${answer}: the verdict alone decides, whatever the block threshold`);
        assert.equal(body.overall_confidence, '0.00', 'no invented confidence reaches overall_confidence');
      }
    });

    test('an AI validator without a reachable upstream fails closed', async (t) => {
      const { app } = await buildGuard(t, target);
      await app.inject({
        method: 'POST',
        url: '/validators',
        payload: { name: 'judge', type: 'AI_PROMPT', rule: 'Safe? YES or NO' },
      });
      const { body } = await detect(app, { text: 'hello', guardrails: ['judge'] });
      assert.equal(body.validator_results[0].passed, false);
      assert.equal(body.validator_results[0].confidence_score, null);
      assert.equal(body.validator_results[0].decision_rule, 'FAIL_CLOSED');
      assert.equal(body.blocked, true);
    });
  });
}
