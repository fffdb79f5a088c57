// Quality gate: the engine over the benchmark's dev corpus (scored by the harness's own scorer when ../shared is
// beside the repo) and over the two corpora kept in this repo. A regression in any detector fails CI here.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { localAiScores } from '../src/detect/index.ts';
import { seededDetector } from './fixtures/builtin-detector.ts';
import { type EntityType, loadCorpus, scoreCorpus } from './fixtures/corpus-score.ts';

const STRUCTURED = [
  'EMAIL',
  'PHONE_NUMBER',
  'CREDIT_CARD',
  'US_SSN',
  'IBAN',
  'IP_ADDRESS',
  'AWS_ACCESS_KEY',
  'GITHUB_TOKEN',
  'OPENAI_API_KEY',
  'STRIPE_KEY',
  'SLACK_TOKEN',
  'JWT',
  'PRIVATE_KEY',
  'GENERIC_PASSWORD',
];

const HERE = import.meta.dirname;
const SCORER = path.resolve(HERE, '../../../../shared/bench/pii/score.mjs');
const DEV = path.resolve(HERE, '../../../../shared/bench/pii/data/dev.jsonl');
const VARIED = path.resolve(HERE, 'fixtures/varied-corpus.jsonl');
const HOLDOUT = path.resolve(HERE, 'fixtures/holdout/holdout.jsonl');

interface Gold {
  text: string;
}

// The library as a fresh install runs it (detectors seeded inactive are an operator's choice).
const detector = seededDetector;

async function score(file: string) {
  const { scorePredictions } = await import(pathToFileURL(SCORER).href);
  const records: Gold[] = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const preds = records.map(({ text }) => {
    const candidates = detector.scan(text);
    return detector
      .decide(text, candidates, localAiScores(candidates))
      .detections.map((d) => ({ type: d.type, start: d.start, end: d.end }));
  });
  const result = scorePredictions(records, preds, { supports: STRUCTURED });
  return { f1: result.micro_supported.f1 as number, hardNegatives: result.hard_negatives.hit_rate as number, result };
}

function failures(result: { per_type: Record<string, { f1: number | null }> }): string {
  return STRUCTURED.map((t) => `${t} ${result.per_type[t].f1?.toFixed(3)}`).join(', ');
}

test('dev corpus: structured micro F1 ≥ 0.98 and hard-negative hits ≤ 1%', {
  skip: !existsSync(DEV) && 'shared/bench/pii not beside the repo',
}, async () => {
  const { f1, hardNegatives, result } = await score(DEV);
  assert.ok(f1 >= 0.98, `structured F1 ${f1.toFixed(4)}: ${failures(result)}`);
  assert.ok(hardNegatives <= 0.01, `hard-negative hits ${(100 * hardNegatives).toFixed(2)}%`);
});

/** The in-repo corpora are scored with our own scorer (test/fixtures/corpus-score.ts), so they run anywhere. */
function scoreInRepo(file: string) {
  const report = scoreCorpus(loadCorpus(file), (text) => {
    const candidates = detector.scan(text);
    return detector.decide(text, candidates, localAiScores(candidates)).detections;
  });
  const perType = STRUCTURED.map((t) => `${t} ${report.perType[t as EntityType].f1?.toFixed(3)}`).join(', ');
  return { f1: report.micro.f1 ?? 0, hardNegatives: report.hardNegatives.rate ?? 0, perType };
}

for (const [name, file] of [
  ['varied corpus (config, SQL, XML/HTML, HTTP dumps, diffs, transcripts, CRM notes, five languages)', VARIED],
  ['held-out corpus (chat exports, OCR, dumps, dotfiles, event logs, forms, CJK and other languages)', HOLDOUT],
] as const) {
  test(`${name}: structured micro F1 ≥ 0.98 and hard-negative hits ≤ 1%`, () => {
    const { f1, hardNegatives, perType } = scoreInRepo(file);
    assert.ok(f1 >= 0.98, `structured F1 ${f1.toFixed(4)}: ${perType}`);
    assert.ok(hardNegatives <= 0.01, `hard-negative hits ${(100 * hardNegatives).toFixed(2)}%`);
  });
}
