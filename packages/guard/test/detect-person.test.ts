// PERSON: people's names from the compromise tagger, opt-in (seeded inactive), in the mask band only.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  BUILTIN_PATTERNS,
  compileDetector,
  DetectionTimeout,
  defaultPatternSpecs,
  localAiScores,
} from '../src/detect/index.ts';
import { seededDetector } from './fixtures/builtin-detector.ts';

const person = BUILTIN_PATTERNS.find((p) => p.name === 'PERSON')!;
const settings = { allowThreshold: 0.3, blockThreshold: 0.85, piiMode: 'MASK' } as const;
/** A fresh install with PERSON switched on (the operator's one change). */
const withPerson = compileDetector({
  patterns: [
    ...defaultPatternSpecs(),
    { name: 'PERSON', regex: person.regex, category: 'PII', allowThreshold: null, blockThreshold: null },
  ],
  allowlist: [],
  blocklist: [],
  settings,
});

function people(text: string): { value: string; score: number; start: number }[] {
  const c = withPerson.scan(text);
  return withPerson
    .decide(text, c, localAiScores(c))
    .detections.filter((d) => d.type === 'PERSON')
    .map((d) => ({ value: d.value, score: Number(d.confidence_score), start: d.start }));
}

describe('PERSON (opt-in tagger)', () => {
  test('seeded inactive: a fresh install reports no names', () => {
    assert.equal(person.defaultActive, false);
    assert.ok(!defaultPatternSpecs().some((p) => p.name === 'PERSON'));
    const text = 'My name is David Johnson and I work with Maria Garcia.';
    const c = seededDetector.scan(text);
    assert.deepEqual(
      seededDetector.decide(text, c, localAiScores(c)).detections.filter((d) => d.type === 'PERSON'),
      [],
    );
  });

  test('full names in prose and in a JSON value, a title kept, a final dot left out', () => {
    assert.deepEqual(
      people('My name is David Johnson and I live in Paris.').map((p) => p.value),
      ['David Johnson'],
    );
    assert.deepEqual(
      people('{"customer": "Emily Clarke", "city": "Leeds"}').map((p) => p.value),
      ['Emily Clarke'],
    );
    assert.deepEqual(
      people('The report was filed by Ms. Smith with Ahmed Khan.').map((p) => p.value),
      ['Ms. Smith', 'Ahmed Khan'],
    );
  });

  test('mask band only: a full name scores above a lone given name, a naming word raises a lone one', () => {
    const [full] = people('Please call David Johnson tomorrow.');
    const [lone] = people('Please call David tomorrow.');
    const [named] = people('patient: Johnson');
    assert.ok(full && lone && named);
    assert.ok(full.score > lone.score, `${full.score} vs ${lone.score}`);
    assert.ok(named.score > lone.score, `${named.score} vs ${lone.score}`);
    for (const p of [full, lone, named]) assert.ok(p.score >= 0.3 && p.score < 0.85, `${p.value} ${p.score}`);
  });

  test('not names: places, products, lower-case text, secrets and code', () => {
    for (const text of [
      'We flew from Paris to New York on Monday.',
      'the quick brown fox jumps over the lazy dog',
      'password = "Summer2024!"',
      'const userName = getUser(id);',
    ]) {
      assert.deepEqual(people(text), [], text);
    }
  });

  test('long texts are read in chunks of whole lines: a name far into the text keeps its exact span', () => {
    const filler = 'The shipment left the warehouse on time and arrived without damage.\n'.repeat(60);
    const text = `${filler}Signed by Robert Miller\n${filler}`;
    const found = people(text);
    assert.deepEqual(
      found.map((p) => p.value),
      ['Robert Miller'],
    );
    assert.equal(found[0]!.start, text.indexOf('Robert Miller'));
  });

  test("the tagger stops at the scan's deadline, between chunks, long before the end of a large text", () => {
    // About 250 KB: the tagger alone needs seconds for it; the walk before it a few milliseconds.
    const text = 'Alice Walker met Bob Stone at the station and they talked for an hour.\n'.repeat(3500);
    const started = Date.now();
    assert.throws(() => withPerson.scan(text, { deadline: started + 150 }), DetectionTimeout);
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 1500, `${elapsed} ms`);
  });
});
