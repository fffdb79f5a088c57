// Adversarial inputs stay linear: no text shape makes a built-in detector look back or ahead over and over.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localAiScores } from '../src/detect/index.ts';
import { builtinDetector } from './fixtures/builtin-detector.ts';

const detector = builtinDetector;

const N = 500_000;
const SHAPES: Record<string, string> = {
  'a run of @': '@'.repeat(N),
  'one long CSV row of numbers': `id,ssn,phone\n${'123456789,'.repeat(N / 10)}`,
  'BEGIN lines without END': '-----BEGIN RSA PRIVATE KEY-----\n'.repeat(N / 32),
  'repeated sk- prefixes': 'sk-'.repeat(N / 3),
  'repeated password=': 'password='.repeat(N / 9),
  'password mentions on one line': 'x password y '.repeat(N / 13),
  'a long markdown table': `| phone | name |\n|---|---|\n${'| 2125551234 | a |\n'.repeat(N / 18)}`,
  'colon runs': 'a:'.repeat(N / 2),
  'dotted digits': '1.'.repeat(N / 2),
  'eyJ runs': 'eyJ'.repeat(N / 3),
  'dense e-mails': 'a@b.co '.repeat(N / 7),
  'dense mixed PII': 'call 555-0100 mail a@b.io ip 10.0.0.1 card 4111111111111111 pw: Xk9#mPq2Lw\n'.repeat(N / 75),
  'URL escapes': '%41'.repeat(N / 3),
  'a form value of pluses': `q=${'a+'.repeat(N / 2)}`,
  'pluses outside forms': 'a+'.repeat(N / 2),
  'password questions': 'the password?\nB: Xk9#mPq2Lw\n'.repeat(N / 27),
  'secret words without values': 'the key and the token '.repeat(N / 22),
  'login pairs on one line': 'login ab / Xk9#mPq2 '.repeat(N / 20),
  '.pgpass-like fields on one line': 'h:5432:db:u:p '.repeat(N / 14),
  'echo pipes on one line': 'echo x | cat '.repeat(N / 13),
  'markdown password tables': '| password |\n|---|\n| Xk9#mPq2Lw |\n'.repeat(N / 34),
  'a CSV header of password columns': `${'password,'.repeat(220)}\n${`${'Xk9#mPq2Lw,'.repeat(220)}\n`.repeat(200)}`,
  'CJK keyword runs': 'パスワードは'.repeat(N / 6),
  'ASCII runs inside CJK words': 'カード4111'.repeat(N / 7),
};

for (const [name, text] of Object.entries(SHAPES)) {
  test(`${name} (${(text.length / 1000).toFixed(0)} K characters) is scanned and decided in linear time`, () => {
    // CPU time, not wall time: the bound holds on a machine busy with other work too.
    const t0 = process.cpuUsage();
    const candidates = detector.scan(text);
    const decision = detector.decide(text, candidates, localAiScores(candidates));
    const used = process.cpuUsage(t0);
    const ms = (used.user + used.system) / 1000;
    assert.ok(ms < 3000, `${ms.toFixed(0)} ms of CPU`);
    for (let i = 1; i < decision.detections.length; i++) {
      assert.ok(decision.detections[i].start >= decision.detections[i - 1].end, 'detections never overlap');
    }
  });
}
