// Runs the benchmarks one after another (each writes its own section of bench/RESULTS.md).
//   npm run bench                      every benchmark
//   npm run bench -- detect-engine …   only the named ones (file names without .ts)
// Benchmarks share the machine's cores with what they measure, so they never run in parallel.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ALL = [
  'detect-engine',
  'detect-quality',
  'detect-http',
  'guard-gateway',
  'guard-gateway-profile',
  'geo-events',
  'geo-analytics',
  'geo-graph',
  'geo-exports',
  'geo-measure',
  'engine-catalog',
  'engine-runtime',
  'flow-engine',
  'flow-durable',
  'tool-routing',
  'tool-execution',
  'anonymous-ingest',
  'telemetry-overhead',
];
const ARGS: Record<string, string[]> = { 'detect-quality': ['--report'] };
const NODE_FLAGS: Record<string, string[]> = { 'geo-measure': ['--expose-gc'] };

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !ALL.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; choose from ${ALL.join(', ')}`);
  process.exit(2);
}

let failed = 0;
for (const name of wanted.length > 0 ? wanted : ALL) {
  console.log(`\n=== ${name} ===`);
  const script = path.join(import.meta.dirname, `${name}.ts`);
  const result = spawnSync(process.execPath, [...(NODE_FLAGS[name] ?? []), script, ...(ARGS[name] ?? [])], {
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    failed++;
    console.error(`${name} exited with ${result.status ?? result.signal}`);
  }
}
process.exit(failed > 0 ? 1 : 0);
