// Throughput of guard's detection pipeline in-process (scan with the built-ins, local scorer, decide, redact),
// single-threaded over the dev corpus, beside the fastest peer library (@coffeeandfun/remove-pii) on the same texts.
//   npx node bench/detect-engine.ts [--corpus FILE.jsonl] [--passes 7]
// MB = 10^6 UTF-8 bytes; each figure is the median of the timed passes after a 5 s warm-up per runner; the two runners'
// passes alternate so that load from other processes hits both alike. On a shared machine wall-clock time moves
// with other processes' load, so each runner is also given the minimum CPU time of this thread over its passes
// (process.threadCpuUsage: time the thread spent running, not waiting for a core), the figure to judge changes by.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileDetector, defaultPatternSpecs, localAiScores } from '../packages/guard/src/detect/index.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

const HERE = import.meta.dirname;
const PEERS_DIR = path.join(HERE, 'peers');
const PEER = '@coffeeandfun/remove-pii';

const WARM_UP_MS = 5000;
/** Issue 16: ≥ 35 MB/s with every type on; on a shared machine its same-run equivalent, ≈ 3.0× remove-pii, is judged. */
const TARGET_MBPS = 35;
const TARGET_RATIO = 3.0;

function parseArgs(argv: string[]): { corpus: string; passes: number } {
  let corpus = path.resolve(HERE, '../../shared/bench/pii/data/dev.jsonl');
  let passes = 21;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--corpus') corpus = path.resolve(argv[++i]);
    else if (argv[i] === '--passes') passes = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return { corpus, passes };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

interface Throughput {
  /** MB/s of the median pass. */
  median: number;
  /** MB/s of the fastest pass (the least disturbed by other processes on a shared machine). */
  best: number;
  /** MB/s from the smallest CPU time (user + system) of the main thread over the passes. */
  cpu: number;
}

/** CPU time of this thread in ms (user + system). */
function threadCpuMs(): number {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Times `passes` passes of each runner over every text after warming each one up for WARM_UP_MS (V8 keeps tiering
 * hot functions up for the first few dozen passes; the figure wanted is the steady state a long-running service
 * sees). Passes alternate between the runners, so a burst of load from other processes slows both alike.
 */
function measure(texts: string[], bytes: number, passes: number, runners: ((text: string) => unknown)[]): Throughput[] {
  let sink = 0;
  for (const run of runners) {
    const until = performance.now() + WARM_UP_MS;
    while (performance.now() < until) for (const t of texts) if (run(t)) sink++;
  }
  const times: number[][] = runners.map(() => []);
  const cpuTimes: number[][] = runners.map(() => []);
  for (let p = 0; p < passes; p++) {
    runners.forEach((run, r) => {
      const c0 = threadCpuMs();
      const t0 = performance.now();
      for (const t of texts) if (run(t)) sink++;
      times[r].push(performance.now() - t0);
      cpuTimes[r].push(threadCpuMs() - c0);
    });
  }
  if (sink < 0) console.log(sink);
  return times.map((ts, r) => ({
    median: bytes / 1e6 / (median(ts) / 1000),
    best: bytes / 1e6 / (Math.min(...ts) / 1000),
    cpu: bytes / 1e6 / (Math.min(...cpuTimes[r]) / 1000),
  }));
}

async function loadPeer(): Promise<(text: string) => unknown> {
  const entry = path.join(PEERS_DIR, 'node_modules', PEER, 'index.js');
  if (!fs.existsSync(entry)) {
    console.log(`installing ${PEER} into bench/peers …`);
    execFileSync('npm', ['--prefix', PEERS_DIR, 'install', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  }
  const mod = await import(pathToFileURL(entry).href);
  return (text) => mod.detectPII(text);
}

async function main(): Promise<void> {
  const { corpus, passes } = parseArgs(process.argv.slice(2));
  const texts = fs
    .readFileSync(corpus, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line).text as string);
  const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t, 'utf8'), 0);
  const detector = compileDetector({
    patterns: defaultPatternSpecs(),
    allowlist: [],
    blocklist: [],
    settings: { allowThreshold: 0.3, blockThreshold: 0.85, piiMode: 'MASK' },
  });
  const pipeline = (text: string) => {
    const candidates = detector.scan(text);
    return detector.decide(text, candidates, localAiScores(candidates)).redactedText;
  };
  const [guard, peer] = measure(texts, bytes, passes, [pipeline, await loadPeer()]);
  console.log(`corpus ${corpus}: ${texts.length} texts, ${(bytes / 1e6).toFixed(3)} MB; median of ${passes} passes`);
  console.log(
    `keel guard engine (scan + local score + decide + redact): ${guard.median.toFixed(1)} MB/s (best pass ${guard.best.toFixed(1)}, min CPU time ${guard.cpu.toFixed(1)})`,
  );
  console.log(
    `${PEER} detectPII:                       ${peer.median.toFixed(1)} MB/s (best pass ${peer.best.toFixed(1)}, min CPU time ${peer.cpu.toFixed(1)})`,
  );
  console.log(
    `ratio: ${(guard.median / peer.median).toFixed(2)}× (best passes: ${(guard.best / peer.best).toFixed(2)}×, CPU time: ${(guard.cpu / peer.cpu).toFixed(2)}×)`,
  );
  const table = [
    '| runner | median MB/s | best pass MB/s | MB/s by min CPU time | target |',
    '|---|---|---|---|---|',
    `| keel guard engine (scan + local score + decide + redact) | ${guard.median.toFixed(1)} | ${guard.best.toFixed(1)} | ${guard.cpu.toFixed(1)} | ≥ ${TARGET_MBPS} |`,
    `| ${PEER} 3.0.1 (fastest peer) | ${peer.median.toFixed(1)} | ${peer.best.toFixed(1)} | ${peer.cpu.toFixed(1)} | |`,
    `| ratio keel / peer | ${(guard.median / peer.median).toFixed(2)}× | ${(guard.best / peer.best).toFixed(2)}× | ${(guard.cpu / peer.cpu).toFixed(2)}× | ≥ ${TARGET_RATIO.toFixed(1)}× |`,
  ].join('\n');
  writeResultsSection(
    'guard-detect-engine',
    `## guard: detection engine in-process

\`npx node bench/detect-engine.ts\` — the development corpus (${texts.length} texts, ${(bytes / 1e6).toFixed(3)} MB of UTF-8; MB = 10^6 bytes),
single thread, the default pattern library and the local scorer, every text through scan → score → decide → redact;
each runner warmed up for 5 s, then ${passes} timed passes alternating with the peer. ${machineLine()}, load average ${os.loadavg()[0]!.toFixed(2)}.

${table}

Result: ${guard.median >= TARGET_MBPS ? 'meets' : 'DOES NOT meet'} the ≥ ${TARGET_MBPS} MB/s target; ${guard.median / peer.median >= TARGET_RATIO ? 'meets' : 'DOES NOT meet'} its same-run equivalent of ≥ ${TARGET_RATIO.toFixed(1)}× the peer (the measure that holds on a loaded machine).`,
  );
}

await main();
