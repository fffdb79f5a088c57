// Runs the test suite (`npm test`, after the type check): the test files are split into shards, two per CPU
// core by default (at most 8), and each shard runs all its files in ONE node:test process (`--test-isolation=none`), so the
// services' modules, compiled route schemas and test databases are loaded once per shard instead of once per
// file. Shards are balanced by each file's duration in the previous run (kept in
// node_modules/.cache/keel-test-times.json; a file without one is estimated from its size).
//   node scripts/run-tests.ts                      every packages/*/test/**/*.test.ts
//   node scripts/run-tests.ts packages/guard/test/gateway.test.ts …   only these files
//   KEEL_TEST_SHARDS=1 node scripts/run-tests.ts   one process for everything
// Every process of the run uses Node's compile cache in node_modules/.cache/keel-compile (or NODE_COMPILE_CACHE).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const cacheDir = path.join(root, 'node_modules', '.cache');
const timesFile = path.join(cacheDir, 'keel-test-times.json');
// Node's compile cache (type-stripped and compiled modules) for the shards and every process a test starts (`keel`,
// workers, the SDK's examples): they inherit the variable, so a module is compiled once per change, not per process.
const compileCache = process.env.NODE_COMPILE_CACHE || path.join(cacheDir, 'keel-compile');

function testFiles(args: string[]): string[] {
  const patterns = args.length > 0 ? args : ['packages/*/test/**/*.test.ts'];
  const files = new Set<string>();
  for (const pattern of patterns) for (const file of fs.globSync(pattern, { cwd: root })) files.add(file);
  return [...files].sort();
}

function readTimes(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(timesFile, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** Longest-first greedy split into `count` shards of about equal expected duration. */
function shard(files: string[], count: number, times: Record<string, number>): string[][] {
  const known = files.filter((f) => times[f] !== undefined);
  const bytes = (f: string) => fs.statSync(path.join(root, f)).size;
  const perByte =
    known.reduce((sum, f) => sum + (times[f] ?? 0), 0) /
      Math.max(
        1,
        known.reduce((sum, f) => sum + bytes(f), 0),
      ) || 1e-4;
  const cost = new Map(files.map((f) => [f, times[f] ?? bytes(f) * perByte]));
  const shards = Array.from({ length: count }, () => ({ files: [] as string[], total: 0 }));
  for (const file of [...files].sort((a, b) => (cost.get(b) ?? 0) - (cost.get(a) ?? 0))) {
    const lightest = shards.reduce((min, s) => (s.total < min.total ? s : min));
    lightest.files.push(file);
    lightest.total += cost.get(file) ?? 0;
  }
  return shards.filter((s) => s.files.length > 0).map((s) => s.files.sort());
}

interface ShardResult {
  code: number | null;
  spec: string;
  times: Record<string, number>;
}

function runShard(files: string[], index: number, tmp: string, children: Set<ReturnType<typeof spawn>>) {
  const specFile = path.join(tmp, `shard-${index}.spec.txt`);
  const timesOut = path.join(tmp, `shard-${index}.times.json`);
  const child = spawn(
    process.execPath,
    [
      '--test',
      '--test-isolation=none',
      '--test-reporter=spec',
      `--test-reporter-destination=${specFile}`,
      `--test-reporter=${path.join(root, 'scripts', 'test-times-reporter.ts')}`,
      `--test-reporter-destination=${timesOut}`,
      ...files,
    ],
    { cwd: root, env: { ...process.env, NODE_COMPILE_CACHE: compileCache }, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  children.add(child);
  return new Promise<ShardResult>((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
      let times: Record<string, number> = {};
      try {
        times = JSON.parse(read(timesOut) || '{}') as Record<string, number>;
      } catch {}
      resolve({ code: signal ? 1 : code, spec: read(specFile), times });
    });
  });
}

const COUNTERS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'] as const;

function counters(spec: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const name of COUNTERS) {
    const match = spec.match(new RegExp(`^ℹ ${name} (\\d+)$`, 'm'));
    found[name] = match ? Number(match[1]) : 0;
  }
  return found;
}

async function main(): Promise<number> {
  const files = testFiles(process.argv.slice(2));
  if (files.length === 0) {
    console.error('run-tests: no test files match');
    return 1;
  }
  // Two shards per core (at most 8): many tests wait on timers, sockets and child processes, and another shard
  // uses the core meanwhile (on 2 cores, 4 shards finish the suite in about 85% of the time 2 take).
  const wanted = Number(process.env.KEEL_TEST_SHARDS) || Math.min(2 * os.availableParallelism(), 8);
  const previous = readTimes();
  const shards = shard(files, Math.max(1, Math.min(wanted, files.length)), previous);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-tests-'));
  const children = new Set<ReturnType<typeof spawn>>();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      for (const child of children) child.kill(signal);
      process.exit(130);
    });
  }
  const started = Date.now();
  console.log(`run-tests: ${files.length} files in ${shards.length} shard(s), one process each`);
  const results = await Promise.all(
    shards.map(async (shardFiles, i) => {
      const result = await runShard(shardFiles, i + 1, tmp, children);
      console.log(`\n── shard ${i + 1}/${shards.length}: ${shardFiles.length} files, exit ${result.code}\n`);
      console.log(result.spec);
      return result;
    }),
  );
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(cacheDir, { recursive: true });
  const times = { ...previous };
  for (const result of results) Object.assign(times, result.times);
  fs.writeFileSync(timesFile, JSON.stringify(times, null, 1));

  const total = Object.fromEntries(COUNTERS.map((name) => [name, 0]));
  for (const result of results) for (const [name, n] of Object.entries(counters(result.spec))) total[name] += n;
  const failed = results.some((r) => r.code !== 0);
  console.log(
    `run-tests: ${COUNTERS.map((name) => `${name} ${total[name]}`).join(', ')}; ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s${failed ? ' — FAILED' : ''}`,
  );
  return failed ? 1 : 0;
}

process.exitCode = await main();
