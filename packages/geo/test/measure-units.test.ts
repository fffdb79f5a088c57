import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeAnswer } from '../src/measure/analyze.ts';
import { extractCitations } from '../src/measure/citations.ts';
import { RateLimiter } from '../src/measure/engine-client.ts';
import { EntityMatcher, foldText, words } from '../src/measure/entity-match.ts';
import { parsePromptCsv } from '../src/measure/prompt-service.ts';
import { PoissonBootstrap, seededRandom, twoProportionTest, wilsonInterval } from '../src/measure/stats.ts';

const matcher = new EntityMatcher([
  { key: 'acme', name: 'Acme', role: 'own', names: ['Acme', 'Acme Cloud'], domains: ['acme.com'] },
  { key: 'nestle', name: 'Nestlé', role: 'competitor', names: ['Nestlé'], domains: ['nestle.com'] },
  { key: 'at', name: 'A.T. Kearney', role: 'competitor', names: ['A.T. Kearney'], domains: [] },
]);
const keys = (text: string) => matcher.match(words(foldText(text))).map((m) => m.key);

test('entity matching folds case and diacritics and accepts possessives', () => {
  assert.deepEqual(keys('ACME and acme and Acme'), ['acme']);
  assert.equal(matcher.match(words(foldText('ACME and acme and Acme')))[0]!.count, 3);
  assert.deepEqual(keys('Nestle, NESTLÉ or nestlé'), ['nestle']);
  assert.deepEqual(keys("Acme's plan beats Nestlé’s"), ['acme', 'nestle']);
  assert.deepEqual(keys('Ａｃｍｅ (full width)'), ['acme']);
  assert.deepEqual(keys('a.t. kearney consults'), ['at']);
});

test('a brand name inside another word is not a mention', () => {
  assert.deepEqual(keys('Acmeology, subacme, acmes, acme2 and nestles'), []);
  assert.deepEqual(keys('Acme-Cloud is great'), ['acme']);
});

test('mentions are ordered by first appearance; the longest name wins at a position', () => {
  const mentions = matcher.match(words(foldText('Nestlé first, then Acme Cloud, then Acme')));
  assert.deepEqual(
    mentions.map((m) => [m.key, m.count]),
    [
      ['nestle', 1],
      ['acme', 2],
    ],
  );
});

test('citations come from the citations array, search_results, url annotations and the text, deduplicated', () => {
  const body = {
    citations: ['https://a.example/1', { url: 'https://b.example/2', title: 'B' }, 'not a url', 'javascript:alert(1)'],
    search_results: [{ url: 'https://a.example/1' }, { url: 'https://c.example/3', title: 'C' }],
    choices: [
      {
        message: {
          content: 'x',
          annotations: [{ type: 'url_citation', url_citation: { url: 'https://d.example/4', title: 'D' } }],
        },
      },
    ],
  };
  const text = 'See https://e.example/5. And [a link](https://f.example/6), or https://a.example/1!';
  assert.deepEqual(
    extractCitations(body, text).map((c) => [c.url, c.source]),
    [
      ['https://a.example/1', 'citations'],
      ['https://b.example/2', 'citations'],
      ['https://c.example/3', 'search_results'],
      ['https://d.example/4', 'annotation'],
      ['https://e.example/5', 'text'],
      ['https://f.example/6', 'text'],
    ],
  );
});

test('position-adjusted word count follows the GEO paper (words of citing sentences, e^(−pos/|S|), split among sources)', () => {
  const citations = extractCitations({ citations: ['https://acme.com/a', 'https://other.org/b'] }, '');
  // Sentence 0 (4 words) cites nothing; sentence 1 (4 words) cites acme and other: half its words count.
  const f = analyzeAnswer('One two three four. Five six seven eight [1][2].', citations, matcher);
  assert.equal(f.wordCount, 2 / 8);
  assert.equal(f.positionAdjustedWordCount, (2 * Math.exp(-1 / 2)) / 8);
});

test('Wilson intervals match published values', () => {
  // Newcombe (1998), method 3: 81/263 → 0.2553–0.3662; 15/148 → 0.0624–0.1605; 0/20 → 0–0.1611.
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  const check = (k: number, n: number, low: number, high: number) => {
    const i = wilsonInterval(k, n);
    assert.deepEqual([round(i.low), round(i.high)], [low, high]);
  };
  check(81, 263, 0.2553, 0.3662);
  check(15, 148, 0.0624, 0.1605);
  check(0, 20, 0, 0.1611);
});

test('simulation: 95% Wilson intervals cover the true rate in 93–97% of 2,000 simulated runs', () => {
  const random = seededRandom(20261126);
  for (const [p, n] of [
    [0.3, 200],
    [0.12, 150],
    [0.5, 60],
  ] as const) {
    let covered = 0;
    for (let run = 0; run < 2000; run++) {
      let k = 0;
      for (let i = 0; i < n; i++) if (random() < p) k++;
      const interval = wilsonInterval(k, n);
      if (interval.low <= p && p <= interval.high) covered++;
    }
    const coverage = covered / 2000;
    assert.ok(coverage >= 0.93 && coverage <= 0.97, `p=${p} n=${n}: coverage ${coverage}`);
  }
});

test('simulation: the seeded bootstrap interval of a mean covers the true mean at about its nominal level', () => {
  const random = seededRandom(7);
  let covered = 0;
  const runs = 400;
  for (let run = 0; run < runs; run++) {
    const bootstrap = new PoissonBootstrap(1, run + 1, 300);
    for (let i = 0; i < 200; i++) {
      bootstrap.next();
      bootstrap.add(0, random() < 0.4 ? 1 : 0, 1);
    }
    const interval = bootstrap.interval(0)!;
    if (interval.low <= 0.4 && 0.4 <= interval.high) covered++;
  }
  // 400 runs: the standard error of the coverage is ~1.1 points.
  assert.ok(covered / runs >= 0.91 && covered / runs <= 0.98, `coverage ${covered / runs}`);
});

test('the bootstrap is reproducible: the same seed and observations give the same interval', () => {
  const make = () => {
    const b = new PoissonBootstrap(1, 99, 500);
    for (let i = 0; i < 50; i++) {
      b.next();
      b.add(0, i % 3, 1);
    }
    return b.interval(0);
  };
  assert.deepEqual(make(), make());
});

test('two-proportion test: a large difference is significant, equal rates are not', () => {
  assert.ok(twoProportionTest(20, 100, 45, 100).pValue < 0.001);
  assert.ok(twoProportionTest(30, 100, 30, 100).pValue > 0.999);
});

test('prompt CSV: header columns, quoting, embedded commas and line breaks', () => {
  const csv = '\uFEFFtext,topic,locale\r\n"best crm, for startups",crm,en\r\n"a ""quoted""\nprompt",,de-DE\n\n';
  assert.deepEqual(parsePromptCsv(csv), [
    { text: 'best crm, for startups', topic: 'crm', locale: 'en', intent: undefined, persona: undefined },
    { text: 'a "quoted"\nprompt', topic: '', locale: 'de-DE', intent: undefined, persona: undefined },
  ]);
  assert.throws(() => parsePromptCsv('topic\nx'), /text/);
});

test('the per-engine rate limit spaces asks out: 120 per minute lets 2 start at once, then one per 500 ms', async () => {
  const limiter = new RateLimiter(120);
  const started = Date.now();
  const times: number[] = [];
  await Promise.all(Array.from({ length: 5 }, () => limiter.take().then(() => times.push(Date.now() - started))));
  times.sort((a, b) => a - b);
  assert.ok(times[1]! < 200, `the burst: ${times}`);
  assert.ok(times[4]! >= 1400, `the fifth waited for three refills: ${times}`);
});
