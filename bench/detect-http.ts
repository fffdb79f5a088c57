// /detect over HTTP: 1 KB texts from the development corpus, autocannon with 50 connections, auth on.
// The service runs in its own processes (`keel start guard`, GUARD_WORKERS=2 by default: both cores), the load
// generator in this one. Two measurements: the most it serves (closed loop: every connection sends its next
// request as soon as the last is answered) and the latency while it is offered 5,000 requests/s. In a closed loop
// with 50 connections the mean latency is 50 / throughput by Little's law, so "5,000 req/s with p99 ≤ 10 ms"
// is a statement about the second measurement.
//   npx node bench/detect-http.ts [--duration 15] [--workers 2]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { kilobytePrompts } from './lib/gateway-prompts.ts';
import { pacedLoad } from './lib/paced-load.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '50' },
    workers: { type: 'string', default: '2' },
    rate: { type: 'string', default: '5000' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const workers = values.workers!;
const offeredRate = Number(values.rate);
const ROOT = path.join(import.meta.dirname, '..');

async function startGuard(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-bench-'));
  const child = spawn(process.execPath, [path.join(ROOT, 'packages/cli/src/keel.ts'), 'start', 'guard'], {
    env: {
      ...process.env,
      GUARD_PORT: '0',
      KEEL_DATA_DIR: dataDir,
      AUTH_ENABLED: 'true',
      AUTH_TOKEN_PERMISSIONS: 'bench=detect:read',
      GUARD_WORKERS: workers,
      RATE_LIMIT_MAX: '100000000',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(/guard[^\n]* listening on (\S+)/);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`guard exited with ${code}: ${seen}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('exit', resolve));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const guard = await startGuard();
try {
  const headers = { 'content-type': 'application/json', authorization: 'Bearer bench' };
  const requests = kilobytePrompts(500).map((text) => ({
    method: 'POST' as const,
    path: '/detect',
    headers,
    body: JSON.stringify({ text }),
  }));
  // Warm up the JIT and the connection pool before measuring.
  await autocannon({ url: guard.url, connections, duration: 3, requests });
  const max = await autocannon({ url: guard.url, connections, duration, requests });
  const paced = await pacedLoad({
    url: guard.url,
    connections,
    ratePerSecond: offeredRate,
    durationSeconds: duration,
    requests,
  });
  const errorsOf = (r: autocannon.Result) => r.errors + r.timeouts + r.non2xx;
  const pacedErrors = paced.errors + paced.non2xx;
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const pass =
    max.requests.average >= 5000 &&
    paced.requestsPerSecond >= offeredRate * 0.98 &&
    paced.latencyMs.p99 <= 10 &&
    errorsOf(max) + pacedErrors === 0;
  const table = [
    '| measurement | requests/s | p50 | p99 | errors / non-2xx | target |',
    '|---|---|---|---|---|---|',
    `| most it serves (closed loop, ${connections} connections) | ${Math.round(max.requests.average)} | ${max.latency.p50} ms | ${max.latency.p99} ms | ${errorsOf(max)} | ≥ 5,000 req/s |`,
    `| offered ${offeredRate.toLocaleString('en')} req/s, evenly paced (up to ${connections} connections) | ${Math.round(paced.requestsPerSecond)} | ${ms(paced.latencyMs.p50)} | ${ms(paced.latencyMs.p99)} (max ${ms(paced.latencyMs.max)}; generator lag p99 ${ms(paced.sendLagP99Ms)}) | ${pacedErrors} | p99 ≤ 10 ms |`,
  ].join('\n');
  console.log(table);
  writeResultsSection(
    'guard-detect-http',
    `## guard: /detect over HTTP

\`npx node bench/detect-http.ts --duration ${duration} --workers ${workers}\` — 1 KB texts from the development corpus (about
6.6 detections each, so every answer carries detections and a redacted text), ${duration} s per measurement after a 3 s warm-up: the most it serves with autocannon
(${connections} connections, closed loop), then an open-loop generator (bench/lib/paced-load.ts; autocannon's own \`overallRate\`
releases each second's quota in bursts, which measured p99 168 ms for the same service at the same rate) offering ${offeredRate.toLocaleString('en')} req/s
evenly over up to ${connections} keep-alive connections, latency counted from the moment each request is handed to the
connection pool (a wait for a free connection counts; the generator's own lag behind its schedule is shown apart), \`AUTH_ENABLED=true\` (bearer token), guard in its own processes
(\`GUARD_WORKERS=${workers} keel start guard\`, SQLite, in-process cache, \`LOG_LEVEL=${process.env.LOG_LEVEL ?? 'warn'}\`); the load
generator shares the same 2 cores. ${machineLine()}, load average before the run ${os.loadavg()[0]!.toFixed(2)}.

${table}

Result: ${pass ? 'meets' : 'DOES NOT meet'} the target.`,
  );
} finally {
  await guard.stop();
}
