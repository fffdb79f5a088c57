import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildGuard, detect, sharedGuard, testDatabaseTargets } from './helper.ts';

const EMAIL = 'jane.doe@example.org';
const CARD = '4539 1488 0343 6467';
const AWS_KEY = 'AKIAQ3EGRTZ7VKD4LN2X';
const SCORE = /^(0\.\d{2}|1\.00)$/;

for (const target of testDatabaseTargets()) {
  describe(`POST /detect (${target.dialect})`, () => {
    // One app for the tests that write nothing; a test that adds patterns or list entries builds its own.
    const readOnly = sharedGuard(target);

    test('an email is masked, not blocked, with the exact response shape', async () => {
      const { app } = readOnly();
      const text = `Please reply to ${EMAIL} today.`;
      const { status, body } = await detect(app, { text });
      assert.equal(status, 200);
      assert.deepEqual(
        Object.keys(body).sort(),
        [
          'blocked',
          'breakdown',
          'contains_pii',
          'detections',
          'message',
          'overall_confidence',
          'redacted_text',
          'validator_results',
        ].sort(),
      );
      assert.equal(body.redacted_text, 'Please reply to [EMAIL] today.');
      assert.equal(body.blocked, false);
      assert.equal(body.contains_pii, true);
      assert.deepEqual(body.breakdown, { EMAIL: 1 });
      assert.deepEqual(body.validator_results, []);
      assert.equal(body.message, 'Sensitive data masked: EMAIL');
      const [d] = body.detections;
      assert.equal(d.type, 'EMAIL');
      assert.equal(d.value, EMAIL);
      assert.equal(d.placeholder, '[EMAIL]');
      assert.equal(text.slice(d.start, d.end), EMAIL);
      assert.match(d.confidence_score, SCORE);
      assert.ok(
        Number(d.confidence_score) >= 0.3 && Number(d.confidence_score) < 0.85,
        'contact data lands in the mask band',
      );
      assert.deepEqual(Object.keys(d.confidence_explanation).sort(), [
        'ai_score',
        'category',
        'final_score',
        'pattern_active',
        'regex_score',
        'source',
      ]);
      assert.equal(d.confidence_explanation.source, 'LOCAL');
      assert.equal(d.confidence_explanation.category, 'PII');
      assert.equal(d.confidence_explanation.pattern_active, true);
      assert.equal(d.confidence_explanation.final_score, d.confidence_score);
      for (const key of ['regex_score', 'ai_score', 'final_score']) assert.match(d.confidence_explanation[key], SCORE);
      assert.equal(body.overall_confidence, d.confidence_score);
    });

    test('nothing to redact: redacted_text is omitted and overall_confidence is 0.00', async () => {
      const { app } = readOnly();
      const { body } = await detect(app, { text: 'Order 1042 shipped on 2026-03-01, version 1.4.2.' });
      assert.equal('redacted_text' in body, false);
      assert.deepEqual(body.detections, []);
      assert.deepEqual(body.breakdown, {});
      assert.equal(body.blocked, false);
      assert.equal(body.contains_pii, false);
      assert.equal(body.overall_confidence, '0.00');
      assert.equal(body.message, 'No sensitive data detected');
    });

    test('payment data and credentials block with the exact message', async () => {
      const { app } = readOnly();
      const card = await detect(app, { text: `my card is ${CARD}, thanks` });
      assert.equal(card.body.blocked, true);
      assert.equal(card.body.message, 'Blocked due to high confidence detection: CREDIT_CARD');
      assert.ok(Number(card.body.overall_confidence) >= 0.85);
      assert.equal(card.body.redacted_text, 'my card is [CREDIT_CARD], thanks');
      const key = await detect(app, { text: `export AWS_ACCESS_KEY_ID=${AWS_KEY}` });
      assert.equal(key.body.blocked, true);
      assert.equal(key.body.detections[0].confidence_explanation.category, 'SECRET');
      assert.match(key.body.message, /^Blocked due to high confidence detection: AWS_ACCESS_KEY$/);
    });

    test('breakdown counts the reported detections per type', async () => {
      const { app } = readOnly();
      const { body } = await detect(app, { text: `a@example.com, b@example.net and ${CARD}` });
      assert.deepEqual(body.breakdown, { EMAIL: 2, CREDIT_CARD: 1 });
      assert.equal(body.detections.length, 3);
      assert.equal(body.redacted_text, '[EMAIL], [EMAIL] and [CREDIT_CARD]');
    });

    test('a checksum failure is not reported (order numbers that look like cards)', async () => {
      const { app } = readOnly();
      const { body } = await detect(app, { text: 'Order number 4539 1488 0343 6468 was refunded.' });
      assert.deepEqual(body.detections, []);
    });

    test('start and end are UTF-16 offsets (JavaScript string indexes)', async () => {
      const { app } = readOnly();
      const text = '😀 héllo → write to jane.doe@example.org';
      const { body } = await detect(app, { text });
      const [d] = body.detections;
      assert.equal(d.start, text.indexOf('jane'));
      assert.equal(text.slice(d.start, d.end), 'jane.doe@example.org');
    });

    test('CONFIDENCE_ALLOW_THRESHOLD above a score ignores the detection; CONFIDENCE_BLOCK_THRESHOLD below it blocks', async (t) => {
      const lenient = await buildGuard(t, target, {
        CONFIDENCE_ALLOW_THRESHOLD: '0.95',
        CONFIDENCE_BLOCK_THRESHOLD: '0.99',
      });
      const ignored = await detect(lenient.app, { text: `mail ${EMAIL}` });
      assert.deepEqual(ignored.body.detections, []);
      assert.equal('redacted_text' in ignored.body, false);
      const strict = await buildGuard(t, target, {
        CONFIDENCE_ALLOW_THRESHOLD: '0.10',
        CONFIDENCE_BLOCK_THRESHOLD: '0.20',
      });
      const blocked = await detect(strict.app, { text: `mail ${EMAIL}` });
      assert.equal(blocked.body.blocked, true);
      assert.equal(blocked.body.message, 'Blocked due to high confidence detection: EMAIL');
    });

    test('PII_MODE BLOCK blocks on any reported detection and explains it', async (t) => {
      const { app } = await buildGuard(t, target, { PII_MODE: 'BLOCK' });
      const { body } = await detect(app, { text: `mail ${EMAIL}` });
      assert.equal(body.blocked, true);
      assert.equal(body.message, 'Blocked by PII_MODE BLOCK: EMAIL detected');
      const clean = await detect(app, { text: 'nothing here' });
      assert.equal(clean.body.blocked, false);
    });

    test('a per-pattern BlockThreshold override wins over the global threshold', async (t) => {
      const { app } = await buildGuard(t, target);
      const created = await app.inject({
        method: 'POST',
        url: '/patterns',
        payload: { Name: 'EMPLOYEE_ID', Regex: '\\bEMP-\\d{6}\\b', Category: 'PII', BlockThreshold: 0.4 },
      });
      assert.equal(created.statusCode, 201);
      const { body } = await detect(app, { text: 'badge EMP-123456 lost' });
      assert.equal(body.detections[0].type, 'EMPLOYEE_ID');
      assert.equal(body.detections[0].placeholder, '[EMPLOYEE_ID]');
      assert.equal(body.blocked, true, 'the pattern blocks at 0.40');
      assert.equal(body.message, 'Blocked due to high confidence detection: EMPLOYEE_ID');
    });

    test('allowlisted values are ignored; blocklisted values hard-block', async (t) => {
      const { app } = await buildGuard(t, target);
      await app.inject({
        method: 'POST',
        url: '/allowlist',
        payload: { value: 'support@example.org', description: 'our own inbox' },
      });
      const allowed = await detect(app, { text: 'write to Support@Example.org or jane.doe@example.org' });
      assert.deepEqual(
        allowed.body.detections.map((d: { value: string }) => d.value),
        ['jane.doe@example.org'],
      );
      await app.inject({
        method: 'POST',
        url: '/blacklist',
        payload: { value: 'Project Nightjar', description: 'code name' },
      });
      const blocked = await detect(app, { text: 'status of project nightjar?' });
      assert.equal(blocked.body.blocked, true);
      assert.equal(blocked.body.detections[0].type, 'BLOCKLIST');
      assert.equal(blocked.body.detections[0].confidence_score, '1.00');
      assert.equal(blocked.body.detections[0].confidence_explanation.pattern_active, false);
    });

    test('a blocklist hit inside a longer secret redacts the whole secret in redacted_text', async (t) => {
      const { app } = await buildGuard(t, target);
      const key = 'sk-proj-Rk7TqW2mZp9Lx4Vb8Nc3q8w9e0r1t2y3u4i5o6pA';
      await app.inject({ method: 'POST', url: '/blacklist', payload: { value: 'q8w9' } });
      const { body } = await detect(app, { text: `export OPENAI_API_KEY=${key}` });
      assert.equal(body.redacted_text, 'export OPENAI_API_KEY=[BLOCKLIST]');
      assert.deepEqual(
        body.detections.map((d: { type: string; value: string }) => [d.type, d.value]),
        [['BLOCKLIST', key]],
      );
    });

    test('rid is optional; a malformed one is a 400; text is required', async () => {
      const { app } = readOnly();
      assert.equal((await detect(app, { text: 'x', rid: 'req-1' })).status, 200);
      assert.equal((await detect(app, { text: 'x', rid: 'bad\nrid' })).status, 400);
      const missing = await detect(app, { rid: 'r' });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error.code, 'VALIDATION_FAILED');
      assert.equal((await detect(app, { text: 42 })).status, 400);
    });

    test('a pathological user regex cannot stall /detect', async (t) => {
      const { app } = await buildGuard(t, target);
      const created = await app.inject({
        method: 'POST',
        url: '/patterns',
        payload: { Name: 'EVIL', Regex: '(a+)+$' },
      });
      assert.equal(created.statusCode, 201);
      const started = performance.now();
      const { status } = await detect(app, { text: `${'a'.repeat(50_000)}!` });
      assert.equal(status, 200);
      assert.ok(performance.now() - started < 2000, 'linear-time matching');
    });
  });
}
