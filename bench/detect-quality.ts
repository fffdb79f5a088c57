// Detection quality of guard's engine, in-process, scored by the PII benchmark harness's own scorer.
//   npx node bench/detect-quality.ts                      (dev split: ../shared/bench/pii/data/dev.jsonl)
//   npx node bench/detect-quality.ts --corpus FILE.jsonl  (any corpus in the same shape)
//   --examples N   print up to N misses and false alarms per type
// Only detections the service would report (final score at or above the allow threshold) count.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILTIN_PATTERNS, compileDetector, localAiScores } from '../packages/guard/src/detect/index.ts';

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

interface Row {
  tp: number;
  fp: number;
  fn: number;
  precision: number | null;
  recall: number | null;
  f1: number | null;
}

interface Scores {
  per_type: Record<string, Row>;
  micro_supported: Row;
  hard_negatives: {
    hit_rate: number | null;
    total: number;
    by_kind: Record<string, { total: number; hit: number; rate: number }>;
  };
  examples: {
    fn: Record<string, { value: string; context: string; overlapped_by: string[] }[]>;
    fp: Record<string, { value: string; context: string }[]>;
    negHits: Record<string, { value: string; labels: string[]; context: string }[]>;
  };
}

function parseArgs(argv: string[]): { corpus: string; examples: number } {
  const repoRoot = path.resolve(import.meta.dirname, '..');
  let corpus = path.resolve(repoRoot, '../shared/bench/pii/data/dev.jsonl');
  let examples = 0;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--corpus') corpus = path.resolve(argv[++i]);
    else if (argv[i] === '--examples') examples = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return { corpus, examples };
}

/** The engine as the service runs it with its defaults: built-in patterns, local scorer, thresholds 0.30/0.85. */
export function createEngineAdapter() {
  const detector = compileDetector({
    patterns: BUILTIN_PATTERNS.map((p) => ({
      name: p.name,
      regex: p.regex,
      category: p.category,
      allowThreshold: null,
      blockThreshold: null,
    })),
    allowlist: [],
    blocklist: [],
    settings: { allowThreshold: 0.3, blockThreshold: 0.85, piiMode: 'MASK' },
  });
  return {
    name: 'keel-guard',
    supports: STRUCTURED,
    run(text: string) {
      const candidates = detector.scan(text);
      return detector.decide(text, candidates, localAiScores(candidates)).detections;
    },
    post(detections: { type: string; start: number; end: number }[]) {
      return detections.map((d) => ({ type: d.type, start: d.start, end: d.end, label: d.type }));
    },
  };
}

const f3 = (x: number | null) => (x == null ? '  —  ' : x.toFixed(3));

async function main(): Promise<void> {
  const { corpus, examples } = parseArgs(process.argv.slice(2));
  const scorerUrl = pathToFileURL(path.resolve(import.meta.dirname, '../../shared/bench/pii/score.mjs')).href;
  const { evaluate } = await import(scorerUrl);
  const records = fs
    .readFileSync(corpus, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const result: Scores = await evaluate(createEngineAdapter(), records, { warmup: 0, repeat: 1 });
  console.log(`corpus ${corpus} (${records.length} texts)\n`);
  console.log('type               gold    TP    FP    FN      P      R     F1');
  for (const t of STRUCTURED) {
    const r = result.per_type[t];
    console.log(
      `${t.padEnd(18)} ${String(r.tp + r.fn).padStart(4)} ${String(r.tp).padStart(5)} ${String(r.fp).padStart(5)} ${String(r.fn).padStart(5)}  ${f3(r.precision)}  ${f3(r.recall)}  ${f3(r.f1)}`,
    );
  }
  const m = result.micro_supported;
  console.log(
    `\nstructured micro   P ${f3(m.precision)}  R ${f3(m.recall)}  F1 ${f3(m.f1)}  (TP ${m.tp}, FP ${m.fp}, FN ${m.fn})`,
  );
  const hn = result.hard_negatives;
  console.log(`hard-negative hits ${hn.hit_rate == null ? '—' : (100 * hn.hit_rate).toFixed(2)}% of ${hn.total}`);
  for (const [kind, b] of Object.entries(hn.by_kind)) if (b.hit > 0) console.log(`  ${kind}: ${b.hit}/${b.total}`);
  if (examples > 0) {
    for (const [t, xs] of Object.entries(result.examples.fn)) {
      for (const x of xs.slice(0, examples))
        console.log(
          `FN ${t}: ${JSON.stringify(x.value)} by ${x.overlapped_by.join(',')} — ${JSON.stringify(x.context)}`,
        );
    }
    for (const [t, xs] of Object.entries(result.examples.fp)) {
      for (const x of xs.slice(0, examples))
        console.log(`FP ${t}: ${JSON.stringify(x.value)} — ${JSON.stringify(x.context)}`);
    }
    for (const [k, xs] of Object.entries(result.examples.negHits)) {
      for (const x of xs.slice(0, examples))
        console.log(`NEG ${k}: ${JSON.stringify(x.value)} by ${x.labels.join(',')} — ${JSON.stringify(x.context)}`);
    }
  }
}

if (import.meta.main) await main();
