// decide(): thresholds, per-pattern overrides, PII_MODE, blocklist and allowlist, overlaps, messages, redaction.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  BUILTIN_PATTERNS,
  type Candidate,
  compileDetector,
  type EngineInput,
  finalScore,
  localAiScores,
  type PatternSpec,
} from '../src/detect/index.ts';

function builtins(overrides: Record<string, Partial<PatternSpec>> = {}): PatternSpec[] {
  return BUILTIN_PATTERNS.map((p) => ({
    name: p.name,
    regex: p.regex,
    category: p.category,
    allowThreshold: null,
    blockThreshold: null,
    ...overrides[p.name],
  }));
}

function engine(input: Partial<EngineInput> = {}) {
  return compileDetector({
    patterns: input.patterns ?? builtins(),
    allowlist: input.allowlist ?? [],
    blocklist: input.blocklist ?? [],
    settings: input.settings ?? { allowThreshold: 0.3, blockThreshold: 0.85, piiMode: 'MASK' },
  });
}

function run(detector: ReturnType<typeof engine>, text: string) {
  const candidates = detector.scan(text);
  return detector.decide(text, candidates, localAiScores(candidates));
}

function candidate(partial: Partial<Candidate> & Pick<Candidate, 'type' | 'start' | 'end'>): Candidate {
  return { category: 'PII', value: '', regexScore: 0.6, localAiScore: 0.6, blocklisted: false, ...partial };
}

describe('decide', () => {
  test('final score is 0.6 × regex + 0.4 × ai, rounded to two decimals and serialized as strings', () => {
    assert.equal(finalScore(0.62, 0.55), 0.59);
    assert.equal(finalScore(0.95, 0.9), 0.93);
    const d = engine();
    const text = 'x 1234';
    const decision = d.decide(
      text,
      [candidate({ type: 'EMAIL', start: 2, end: 6, value: '1234', regexScore: 0.7, localAiScore: 0.45 })],
      [{ score: 0.45, source: 'HYBRID' }],
    );
    const det = decision.detections[0];
    assert.equal(det.confidence_score, '0.60');
    assert.deepEqual(det.confidence_explanation, {
      source: 'HYBRID',
      regex_score: '0.70',
      ai_score: '0.45',
      category: 'PII',
      pattern_active: true,
      final_score: '0.60',
    });
    assert.equal(decision.overallConfidence, 0.6);
  });

  test('below the allow threshold a detection is ignored; from allow to block it is masked; at block it blocks', () => {
    const d = engine();
    const text = 'aaaa bbbb cccc';
    const cands = [
      candidate({ type: 'A', start: 0, end: 4, value: 'aaaa', regexScore: 0.29, localAiScore: 0.29 }),
      candidate({ type: 'B', start: 5, end: 9, value: 'bbbb', regexScore: 0.3, localAiScore: 0.3 }),
      candidate({ type: 'C', start: 10, end: 14, value: 'cccc', regexScore: 0.84, localAiScore: 0.84 }),
    ];
    const masked = d.decide(text, cands, localAiScores(cands));
    assert.deepEqual(
      masked.detections.map((x) => x.type),
      ['B', 'C'],
    );
    assert.equal(masked.blocked, false);
    assert.equal(masked.message, 'Sensitive data masked: B, C');
    assert.equal(masked.redactedText, 'aaaa [B] [C]');
    const blocking = [...cands.slice(0, 2), { ...cands[2], regexScore: 0.85, localAiScore: 0.85 }];
    const blocked = d.decide(text, blocking, localAiScores(blocking));
    assert.equal(blocked.blocked, true);
    assert.equal(blocked.blockedBy, 'C');
    assert.equal(blocked.message, 'Blocked due to high confidence detection: C');
  });

  test('the first blocking type in text order names the block', () => {
    const d = engine();
    const text = 'card 4111111111111111 key AKIAZ3MHQ7RV5TXWLN2P';
    const decision = run(d, text);
    assert.equal(decision.message, 'Blocked due to high confidence detection: CREDIT_CARD');
  });

  test('per-pattern thresholds override the settings', () => {
    const text = 'mail jane@example.com';
    assert.equal(run(engine(), text).blocked, false);
    const strict = engine({ patterns: builtins({ EMAIL: { blockThreshold: 0.5 } }) });
    const decision = run(strict, text);
    assert.equal(decision.blocked, true);
    assert.equal(decision.message, 'Blocked due to high confidence detection: EMAIL');
    const lax = engine({ patterns: builtins({ EMAIL: { allowThreshold: 0.95 } }) });
    assert.deepEqual(run(lax, text).detections, []);
  });

  test('settings thresholds apply to every pattern without overrides', () => {
    const d = engine({ settings: { allowThreshold: 0.3, blockThreshold: 0.5, piiMode: 'MASK' } });
    assert.equal(run(d, 'mail jane@example.com').message, 'Blocked due to high confidence detection: EMAIL');
  });

  test('PII_MODE BLOCK blocks on any reported detection', () => {
    const d = engine({ settings: { allowThreshold: 0.3, blockThreshold: 0.85, piiMode: 'BLOCK' } });
    const decision = run(d, 'mail jane@example.com');
    assert.equal(decision.blocked, true);
    assert.equal(decision.message, 'Blocked by PII_MODE BLOCK: EMAIL detected');
    assert.equal(decision.blockedBy, 'EMAIL');
    assert.equal(run(d, 'nothing to see').blocked, false);
  });

  test('nothing reported: no redacted text, empty breakdown, confidence 0', () => {
    const decision = run(engine(), 'hello world, version 1.2.3.4');
    assert.deepEqual(decision.detections, []);
    assert.equal(decision.redactedText, undefined);
    assert.deepEqual(decision.breakdown, {});
    assert.equal(decision.containsPii, false);
    assert.equal(decision.overallConfidence, 0);
    assert.equal(decision.message, 'No sensitive data detected');
    assert.equal(decision.blocked, false);
  });

  test('redaction uses placeholderFor, defaulting to [TYPE]; breakdown counts per type', () => {
    const d = engine();
    const text = 'a@b.io and c@d.io from 10.1.2.3';
    const candidates = d.scan(text);
    const plain = d.decide(text, candidates, localAiScores(candidates));
    assert.equal(plain.redactedText, '[EMAIL] and [EMAIL] from [IP_ADDRESS]');
    assert.deepEqual(plain.breakdown, { EMAIL: 2, IP_ADDRESS: 1 });
    assert.equal(plain.containsPii, true);
    assert.equal(plain.message, 'Sensitive data masked: EMAIL, IP_ADDRESS');
    let n = 0;
    const custom = d.decide(text, candidates, localAiScores(candidates), (type) => `[R1_${type}_${++n}]`);
    assert.equal(custom.redactedText, '[R1_EMAIL_1] and [R1_EMAIL_2] from [R1_IP_ADDRESS_3]');
    assert.deepEqual(
      custom.detections.map((x) => x.placeholder),
      ['[R1_EMAIL_1]', '[R1_EMAIL_2]', '[R1_IP_ADDRESS_3]'],
    );
  });

  test('an upstream (HYBRID) AI score changes the final score and the decision', () => {
    const d = engine();
    const text = 'mail jane@example.com';
    const candidates = d.scan(text);
    const low = d.decide(text, candidates, [{ score: 0, source: 'HYBRID' }]);
    const high = d.decide(text, candidates, [{ score: 1, source: 'HYBRID' }]);
    assert.ok(Number(low.detections[0].confidence_score) < Number(high.detections[0].confidence_score));
    assert.equal(high.detections[0].confidence_explanation.source, 'HYBRID');
    assert.equal(high.detections[0].confidence_explanation.ai_score, '1.00');
  });

  test('blocklist: every case-insensitive occurrence is a BLOCKLIST hit with final 1.00 that always blocks', () => {
    const d = engine({ blocklist: ['Project Falcon', ' codeword '] });
    const text = 'about project FALCON and the CodeWord, and project falcon again';
    const candidates = d.scan(text);
    const hits = candidates.filter((c) => c.blocklisted);
    assert.deepEqual(
      hits.map((h) => h.value),
      ['project FALCON', 'CodeWord', 'project falcon'],
    );
    const decision = d.decide(text, candidates, localAiScores(candidates));
    assert.equal(decision.blocked, true);
    assert.equal(decision.message, 'Blocked due to blocklisted value: BLOCKLIST');
    assert.equal(decision.blockedBy, 'BLOCKLIST');
    const det = decision.detections[0];
    assert.equal(det.type, 'BLOCKLIST');
    assert.equal(det.confidence_score, '1.00');
    assert.deepEqual(det.confidence_explanation, {
      source: 'BLOCKLIST',
      regex_score: '1.00',
      ai_score: '1.00',
      category: 'BLOCKLIST',
      pattern_active: false,
      final_score: '1.00',
    });
    assert.equal(decision.redactedText, 'about [BLOCKLIST] and the [BLOCKLIST], and [BLOCKLIST] again');
  });

  test('blocklist stays fast and exact with hundreds of entries', () => {
    const list = Array.from({ length: 500 }, (_, i) => `forbidden-term-${i}`);
    const d = engine({ blocklist: list });
    const text = `${'lorem ipsum '.repeat(20_000)} FORBIDDEN-TERM-499 end`;
    // CPU time, not wall time: the bound holds on a machine busy with other work too.
    const t0 = process.cpuUsage();
    const hits = d.scan(text).filter((c) => c.blocklisted);
    const used = process.cpuUsage(t0);
    assert.ok((used.user + used.system) / 1000 < 1000, 'scanned within a second of CPU');
    // forbidden-term-4 and -49 match inside it too; overlap resolution keeps the longest hit.
    assert.deepEqual(
      hits.map((h) => h.value),
      ['FORBIDDEN-TERM-499'],
    );
  });

  test('a blocklist hit wins over an overlapping detection', () => {
    const d = engine({ blocklist: ['jane@example.com'] });
    const decision = run(d, 'mail jane@example.com now');
    assert.deepEqual(
      decision.detections.map((x) => x.type),
      ['BLOCKLIST'],
    );
  });

  test('allowlist: a candidate equal to an allowlisted value (trimmed, case-insensitive) is dropped', () => {
    const d = engine({ allowlist: ['  SUPPORT@Example.com '] });
    const decision = run(d, 'write to support@example.com or jane@example.com');
    assert.deepEqual(
      decision.detections.map((x) => x.value),
      ['jane@example.com'],
    );
  });

  test('overlapping candidates: the higher score wins, then the longer span; no nested placeholders', () => {
    const d = engine();
    const text = 'abcdefghij';
    const cands = [
      candidate({ type: 'SHORT', start: 0, end: 4, value: 'abcd', regexScore: 0.9, localAiScore: 0.9 }),
      candidate({ type: 'LONG', start: 0, end: 10, value: text, regexScore: 0.6, localAiScore: 0.6 }),
    ];
    const decision = d.decide(text, cands, localAiScores(cands));
    assert.deepEqual(
      decision.detections.map((x) => x.type),
      ['SHORT'],
    );
    assert.equal(decision.redactedText, '[SHORT]', 'the winner covers the union of both detections');
    assert.deepEqual(
      decision.detections.map((x) => [x.start, x.end, x.value]),
      [[0, 10, text]],
    );
    const tie = [
      candidate({ type: 'SHORT', start: 2, end: 4, value: 'cd' }),
      candidate({ type: 'LONG', start: 0, end: 10, value: text }),
    ];
    assert.deepEqual(
      d.decide(text, tie, localAiScores(tie)).detections.map((x) => x.type),
      ['LONG'],
    );
  });

  test('a blocklist hit inside a longer secret redacts the whole secret (the union of every detection)', () => {
    const key = 'sk-proj-Rk7TqW2mZp9Lx4Vb8Nc3q8w9e0r1t2y3u4i5o6pA';
    const d = engine({ blocklist: ['q8w9'] });
    const text = `use ${key} today`;
    const candidates = d.scan(text);
    assert.deepEqual(
      candidates.map((c) => [c.type, c.value]),
      [['BLOCKLIST', key]],
      'scan hands the widened span to the AI scorer and to decide',
    );
    const decision = d.decide(text, candidates, localAiScores(candidates));
    assert.equal(decision.redactedText, 'use [BLOCKLIST] today');
    assert.equal(decision.blockedBy, 'BLOCKLIST');
  });

  test('overlap chains: kept spans grow over every dropped detection; candidates below the allow threshold do not', () => {
    const d = engine();
    const text = 'aaaa-bbbb-cccc-dddd';
    const cands = [
      candidate({ type: 'LEFT', start: 0, end: 4, value: 'aaaa', regexScore: 0.9, localAiScore: 0.9 }),
      candidate({ type: 'MIDDLE', start: 2, end: 12, value: text.slice(2, 12), regexScore: 0.5, localAiScore: 0.5 }),
      candidate({ type: 'RIGHT', start: 10, end: 14, value: 'cccc', regexScore: 0.9, localAiScore: 0.9 }),
      candidate({ type: 'WEAK', start: 13, end: 19, value: text.slice(13), regexScore: 0.1, localAiScore: 0.1 }),
    ];
    const decision = d.decide(text, cands, localAiScores(cands));
    assert.deepEqual(
      decision.detections.map((x) => [x.type, x.start, x.end]),
      [
        ['LEFT', 0, 10],
        ['RIGHT', 10, 14],
      ],
    );
    assert.equal(decision.redactedText, '[LEFT][RIGHT]-dddd');
  });

  test('scan resolves overlaps before returning candidates', () => {
    const d = engine({
      patterns: [
        ...builtins(),
        { name: 'ORDER', regex: 'jane@[a-z]+', category: 'PII', allowThreshold: null, blockThreshold: null },
      ],
    });
    const candidates = d.scan('mail jane@example.com');
    for (let i = 1; i < candidates.length; i++) assert.ok(candidates[i].start >= candidates[i - 1].end);
  });

  test('a missing AI score falls back to the local one', () => {
    const d = engine();
    const text = 'mail jane@example.com';
    const candidates = d.scan(text);
    const withLocal = d.decide(text, candidates, localAiScores(candidates));
    const without = d.decide(text, candidates, []);
    assert.deepEqual(without.detections, withLocal.detections);
    assert.equal(without.detections[0].confidence_explanation.source, 'LOCAL');
  });
});
