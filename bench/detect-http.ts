// /detect over HTTP: 1 KB texts from the development corpus, autocannon with 50 connections, auth on.
// The service runs in its own process (`keel start guard`), the load generator in this one.
//   npm run bench -- detect-http            (or: npx node bench/detect-http.ts [--duration 15])
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { machineLine, writeResultsSection } from './lib/results.ts';

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '15' }, connections: { type: 'string', default: '50' } },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const ROOT = path.join(import.meta.dirname, '..');
const CORPUS = path.join(ROOT, '..', 'shared', 'bench', 'pii', 'data', 'dev.jsonl');

/** Texts of about 1 KB: corpus records joined until each reaches 1,024 bytes. */
function kilobyteTexts(count: number): string[] {
  const records = fs
    .readFileSync(CORPUS, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).text as string);
  const texts: string[] = [];
  let current = '';
  for (let i = 0; texts.length < count; i = (i + 1) % records.length) {
    current += `${records[i]}\n`;
    if (Buffer.byteLength(current) >= 1024) {
      texts.push(current.slice(0, 1024));
      current = '';
    }
  }
  return texts;
}

async function startGuard(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-bench-'));
  const child = spawn(process.execPath, [path.join(ROOT, 'packages/cli/src/keel.ts'), 'start', 'guard'], {
    env: {
      ...process.env,
      GUARD_PORT: '0',
      KEEL_DATA_DIR: dataDir,
      AUTH_ENABLED: 'true',
      AUTH_TOKEN_PERMISSIONS: 'bench=detect:read',
      RATE_LIMIT_MAX: '100000000',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(/guard listening on (\S+)/);
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
  const requests = kilobyteTexts(500).map((text) => ({
    method: 'POST' as const,
    path: '/detect',
    headers,
    body: JSON.stringify({ text }),
  }));
  // Warm up the JIT and the connection pool before measuring.
  await autocannon({ url: guard.url, connections, duration: 3, requests });
  const result = await autocannon({ url: guard.url, connections, duration, requests });
  const rps = result.requests.average;
  const p50 = result.latency.p50;
  const p99 = result.latency.p99;
  const errors = result.errors + result.timeouts + result.non2xx;
  const pass = rps >= 5000 && p99 <= 10 && errors === 0;
  const table = [
    '| metric | value | target |',
    '|---|---|---|',
    `| requests/s (mean) | ${Math.round(rps)} | ≥ 5,000 |`,
    `| latency p50 | ${p50} ms | |`,
    `| latency p99 | ${p99} ms | ≤ 10 ms |`,
    `| errors / non-2xx | ${errors} | 0 |`,
  ].join('\n');
  console.log(table);
  writeResultsSection(
    'guard-detect-http',
    `## guard: /detect over HTTP

\`npx node bench/detect-http.ts --duration ${duration}\` — 1 KB texts from the development corpus, autocannon with
${connections} connections for ${duration} s after a 3 s warm-up, \`AUTH_ENABLED=true\` (bearer token), guard in its own process
(\`keel start guard\`, SQLite, in-process cache, \`LOG_LEVEL=${process.env.LOG_LEVEL ?? 'warn'}\`). ${machineLine()}.

${table}

Result: ${pass ? 'meets' : 'DOES NOT meet'} the target.`,
  );
} finally {
  await guard.stop();
}
