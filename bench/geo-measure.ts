// Measurement-run processing: prompts × engines × samples against a zero-latency engine double (in this process;
// each reply is a chat-completions JSON body parsed as a real one is), through the whole run — citation parsing,
// entity matching, one commit per answer (group commit), then metrics, report and recommendations. Heap after GC is
// sampled as answers accumulate: flat memory = it does not grow with the number of answers.
//   npx node --expose-gc bench/geo-measure.ts [--prompts 1000] [--engines 3] [--samples 5] [--postgres postgres://…]
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createMemoryCache, createSecretBox, openDatabase } from '@keel/core';
import { buildGeoApp, type GeoDb, prepareGeoDatabase, readGeoConfig } from '@keel/geo';
import { mutateGraph } from '../packages/geo/src/graph/graph-service.ts';
import { type EngineClient, parseChatCompletion } from '../packages/geo/src/measure/engine-client.ts';
import { createEngine } from '../packages/geo/src/measure/engine-service.ts';
import { importPrompts } from '../packages/geo/src/measure/prompt-service.ts';
import { createRun, executeRun } from '../packages/geo/src/measure/run-service.ts';
import { bootstrapTenant } from '../packages/geo/src/tenancy/tenancy-service.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

/** Other work on the machine skews every figure: the 1-minute load average when this run began. */
const loadAtStart = os.loadavg()[0].toFixed(1);
const { values } = parseArgs({
  options: {
    prompts: { type: 'string', default: '1000' },
    engines: { type: 'string', default: '3' },
    samples: { type: 'string', default: '5' },
    postgres: { type: 'string', default: process.env.TEST_DATABASE_URL ?? '' },
  },
});
const PROMPTS = Number(values.prompts);
const ENGINES = Number(values.engines);
const SAMPLES = Number(values.samples);
const TARGET = 2000;
const MB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('run with --expose-gc');
  process.exit(2);
}

const COMPETITORS = [
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Stark Industries',
  'Wayne Enterprises',
  'Soylent',
  'Tyrell',
  'Cyberdyne',
  'Wonka',
];

/** 64 varied chat-completions bodies (~120 words, 2–4 citations in the three forms engines use). */
const BODIES = Array.from({ length: 64 }, (_, i) => {
  const a = COMPETITORS[i % 10]!;
  const b = COMPETITORS[(i * 3 + 1) % 10]!;
  const own = i % 3 !== 0;
  const sentences = [
    own
      ? `Acme${i % 5 === 0 ? "'s" : ''} platform is a strong choice for teams of every size [1].`
      : `${a} is a common choice for teams of every size [1].`,
    `${b} is popular with enterprises, though some reviewers call it expensive [2].`,
    'Pricing varies by seat count, support tier and contract length, so compare total cost over three years.',
    own && i % 2 === 0
      ? 'See https://www.acme.com/pricing for current plans.'
      : `${a} publishes a comparison at https://${a.toLowerCase().replace(/\s/g, '')}.com/compare.`,
    'Integrations with email, calendars and data warehouses matter more than feature lists.',
    `Many buyers shortlist ${a}, ${b}${own ? ' and Acme Cloud' : ''} before running a trial.`,
    'A two-week pilot with real data usually reveals the differences that demos hide.',
  ];
  const citations = [
    own ? 'https://acme.com/blog/guide' : `https://${a.toLowerCase().replace(/\s/g, '')}.com/`,
    `https://${b.toLowerCase().replace(/\s/g, '')}.com/reviews`,
    'https://news.example.org/crm-market',
  ];
  return JSON.stringify({
    id: `c${i}`,
    choices: [
      {
        message: {
          role: 'assistant',
          content: sentences.join(' '),
          annotations:
            i % 4 === 0 ? [{ type: 'url_citation', url_citation: { url: 'https://analyst.example.com/report' } }] : [],
        },
      },
    ],
    citations,
    usage: { prompt_tokens: 40 + (i % 7), completion_tokens: 160 + (i % 11) },
  });
});

function zeroLatencyDouble(): EngineClient {
  let n = 0;
  return { ask: async () => parseChatCompletion(BODIES[n++ % BODIES.length]!) };
}

async function measure(label: string, url: string, schema?: string) {
  const database = await openDatabase<GeoDb>({ url, schema });
  await prepareGeoDatabase(database.db);
  const secrets = createSecretBox(randomBytes(32).toString('hex'));
  const boot = await bootstrapTenant(database.db, secrets);
  const { app, ctx } = await buildGeoApp({
    config: readGeoConfig({ LOG_LEVEL: 'silent', KEEL_ALLOW_PRIVATE_URLS: 'true' }),
    db: database.db,
    cache: createMemoryCache(),
    secrets,
  });
  const ws = boot.workspaceId;
  await mutateGraph(
    ctx,
    { tenantId: boot.tenantId } as never,
    {
      operation: 'import',
      workspaceId: ws,
      targets: [
        { key: 'acme', name: 'Acme', kind: 'brand', url: 'https://acme.com', attributes: { names: ['Acme Cloud'] } },
        ...COMPETITORS.map((name) => ({
          key: name.toLowerCase().replace(/\s/g, '-'),
          name,
          kind: 'competitor',
          url: `https://${name.toLowerCase().replace(/\s/g, '')}.com`,
        })),
      ],
      relations: [],
    } as never,
    `bench-${label}`,
    {},
  );
  for (let e = 0; e < ENGINES; e++)
    await createEngine(ctx, ws, {
      name: `engine-${e + 1}`,
      provider: 'chat_completions',
      baseUrl: 'https://engine.example.com/v1',
      model: 'double',
      concurrency: 16,
      requestsPerMinute: 10_000_000,
      inputPricePerMillionTokens: '2.50',
      outputPricePerMillionTokens: '10',
    });
  for (let offset = 0; offset < PROMPTS; offset += 1000)
    await importPrompts(
      ctx,
      ws,
      '',
      Array.from({ length: Math.min(1000, PROMPTS - offset) }, (_, i) => ({
        text: `Which CRM should a ${['startup', 'agency', 'retailer', 'bank'][i % 4]} pick? (#${offset + i})`,
        topic: 'crm',
      })),
    );
  const run = await createRun(ctx, ws, { projectId: '', samples: SAMPLES, seed: 1 });
  const heap: { answers: number; heapMb: number }[] = [];
  const marks = new Set([0.1, 0.25, 0.5, 0.75, 1].map((f) => Math.round(run.totalTasks * f)));
  gc!();
  const heapBefore = process.memoryUsage().heapUsed / MB;
  let asking = 0;
  let sampling = 0; // time spent in the forced GCs of the heap samples, left out of the figures
  let samplingCpu = 0;
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  await executeRun(ctx, run.id, {
    clientFor: () => zeroLatencyDouble(),
    onProgress: (p) => {
      if (marks.has(p.done)) {
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        gc!();
        heap.push({ answers: p.done, heapMb: process.memoryUsage().heapUsed / MB });
        sampling += performance.now() - t0;
        const c1 = process.cpuUsage(c0);
        samplingCpu += (c1.user + c1.system) / 1e6;
      }
      if (p.done === p.total) asking = performance.now() - started - sampling;
    },
  });
  const total = performance.now() - started - sampling;
  const cpu = process.cpuUsage(cpuStart);
  const cpuS = (cpu.user + cpu.system) / 1e6 - samplingCpu;
  const done = await ctx.db
    .selectFrom('measure_run')
    .select('summary')
    .where('id', '=', run.id)
    .executeTakeFirstOrThrow();
  await app.close();
  await database.close();
  return {
    label,
    answers: run.totalTasks,
    totalS: total / 1000,
    askS: asking / 1000,
    finalizeS: (total - asking) / 1000,
    rate: run.totalTasks / (total / 1000),
    cpuS,
    cpuRate: run.totalTasks / cpuS,
    heapBefore,
    heap,
    summary: JSON.parse(String(done.summary)),
  };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-geo-measure-'));
const results = [await measure('SQLite', path.join(dir, 'geo.sqlite'))];
if (values.postgres) {
  try {
    results.push(await measure('PostgreSQL', values.postgres, `geo_bench_${randomBytes(4).toString('hex')}`));
  } catch (error) {
    console.error(`PostgreSQL skipped: ${(error as Error).message}`);
  }
}
fs.rmSync(dir, { recursive: true, force: true });

const lines = [
  '## geo — measurement-run processing',
  '',
  `\`npx node --expose-gc bench/geo-measure.ts --prompts ${PROMPTS} --engines ${ENGINES} --samples ${SAMPLES}${values.postgres ? ' --postgres postgres://…' : ''}\` — ${machineLine()}, load average ${loadAtStart} at start`,
  '',
  `${PROMPTS} tracked prompts × ${ENGINES} engines × ${SAMPLES} samples = ${PROMPTS * ENGINES * SAMPLES} answers from a zero-latency engine double (each reply a chat-completions JSON body with 3–4 citations in the citations-array, annotation and in-text forms, parsed like a real one), through a whole run: citation extraction, entity matching against an 11-target graph, one commit per answer (SQLite group commit), then the metrics with their intervals (1,000-replicate Poisson bootstrap per scope), report and recommendations. Target: ≥ ${TARGET} answers/s on SQLite.`,
  '',
  '| database | answers | total (wall) | asking + storing | metrics + records | answers/s (wall) | CPU time | answers per CPU-second | vs target (wall) | heap after GC before → at 10 / 25 / 50 / 75 / 100 % of answers |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.label} | ${r.answers} | ${r.totalS.toFixed(2)} s | ${r.askS.toFixed(2)} s | ${r.finalizeS.toFixed(2)} s | ${Math.round(r.rate)} | ${r.cpuS.toFixed(2)} s | ${Math.round(r.cpuRate)} | ${(r.rate / TARGET).toFixed(2)}× | ${r.heapBefore.toFixed(1)} MB → ${r.heap.map((h) => h.heapMb.toFixed(1)).join(' / ')} MB |`,
  ),
  '',
  `Run summary (SQLite): ${results[0]!.summary.answered} answered, ${results[0]!.summary.failed} failed, ${results[0]!.summary.inputTokens} input / ${results[0]!.summary.outputTokens} output tokens, cost ${results[0]!.summary.cost}; mention rate ${results[0]!.summary.metrics.mention_rate.value.toFixed(4)} [${results[0]!.summary.metrics.mention_rate.interval.map((x: number) => x.toFixed(4)).join(', ')}].`,
  `Reading: wall-clock rates measure any contention as much as the code (load average ${loadAtStart} on ${os.cpus().length} cores at start); the CPU time the process used (all its threads, the forced GCs of the heap samples left out) gives the rate on an unshared core: ${results.map((r) => `${r.label} ${Math.round(r.cpuRate)} answers per CPU-second (${(r.cpuRate / TARGET).toFixed(2)}× the target)`).join(', ')}.`,
  'Memory: answers are streamed (prompt slices of 200 while asking, pages of 1,000 while computing metrics) and the bootstrap keeps B replicate sums per statistic, so the heap stays flat as answers accumulate.',
];
console.log(lines.join('\n'));
writeResultsSection('geo-measure', lines.join('\n'));
