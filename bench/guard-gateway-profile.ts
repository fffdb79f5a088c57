// Where a gateway request spends guard's CPU: guard in-process (SQLite in memory, in-memory cache, MASK) in front of
// the bench's local upstream (its own process), requests one at a time through `app.inject`, the CPU profiler on
// only around the timed requests (not start-up). Each sample goes to the first of guard's parts found on its stack
// (engine scan, decision and redaction, AI-verdict keys and cache, placeholders, gw_meta, …), the rest to the HTTP
// layers; the split is given per prompt kind in µs of this thread's CPU per request.
//   npx node bench/guard-gateway-profile.ts [--requests 400] [--passes 6]
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createMemoryCache } from '../packages/core/src/index.ts';
import { openTestDatabase } from '../packages/core/src/testing.ts';
import { buildGuardApp, prepareGuardDatabase } from '../packages/guard/src/app.ts';
import { readGuardConfig } from '../packages/guard/src/config.ts';
import { chatBody, kilobytePrompts, plainPrompts } from './lib/gateway-prompts.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '400' }, passes: { type: 'string', default: '6' } },
});
const requests = Number(values.requests);
const passes = Number(values.passes);

/** Guard's parts, matched against the script URL of each frame from the sampled function outwards. */
const PARTS: [RegExp, string][] = [
  [/\/core\/src\/telemetry\/|@opentelemetry/, 'telemetry: spans, context and metrics'],
  [/\/detect\/(decide|overlaps)\.ts/, 'engine: decision and redaction'],
  [/\/detect\//, 'engine: scan'],
  [/\/guard\/src\/ai\/|\/core\/src\/(cache|auth)\/|lru-cache/, 'AI-verdict keys and cache look-ups'],
  [/\/gateway\/placeholders\.ts/, 'placeholder bookkeeping'],
  [/\/gateway\/content-analysis\.ts/, 'gw_meta copy (values replaced by placeholders)'],
  [/\/gateway\/gateway-service\.ts/, 'answer JSON parse and serialization with gw_meta'],
  [/\/detect-api\/analyze-text\.ts/, 'analysis glue (deadline race, response object)'],
  [/\/audit\//, 'audit record'],
  [/\/gateway\//, 'gateway route glue (headers, options, outcome)'],
  [/undici|\/models\/src\//, 'upstream HTTP client'],
  [/pino/, 'logging'],
  [/fastify|light-my-request|find-my-way|avvio/, 'fastify and inject'],
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

function split(profile: { nodes: ProfileNode[]; samples: number[] }): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const counts = new Map<string, number>();
  for (const id of profile.samples) {
    const leaf = byId.get(id)!.callFrame.functionName;
    if (leaf === '(idle)' || leaf === '(program)' || leaf === '(root)') continue;
    let part = leaf === '(garbage collector)' ? 'garbage collection' : undefined;
    for (let at: number | undefined = id; part === undefined && at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)!.callFrame.url;
      part = PARTS.find(([re]) => re.test(url))?.[1];
    }
    part ??= 'other (Node internals, event loop)';
    counts.set(part, (counts.get(part) ?? 0) + 1);
  }
  return counts;
}

function startUpstream(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'guard-gateway-upstream.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(/upstream listening on (\S+)/);
      if (match) resolve({ url: match[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`upstream exited with ${code}`)));
  });
}

const threadCpuUs = () => {
  const u = process.threadCpuUsage();
  return u.user + u.system;
};

async function main(): Promise<void> {
  const upstream = await startUpstream();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-gw-profile-'));
  const config = readGuardConfig({
    KEEL_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '100000000',
    AI_MODEL_URL: upstream.url,
    GATEWAY_BLOCK_MODE: 'MASK',
    GATEWAY_SECURITY_EVENTS: 'file:/dev/null',
  });
  const database = await openTestDatabase({ dialect: 'sqlite', url: ':memory:' }, 'guard', {
    prepare: prepareGuardDatabase,
  });
  const { app } = await buildGuardApp({
    config,
    db: database.db,
    cache: createMemoryCache(),
    logStream: fs.createWriteStream(os.devNull),
  });
  await app.ready();
  const kinds = [
    ['PII-dense corpus prompts', kilobytePrompts(requests)],
    ['ordinary prompts', plainPrompts(requests)],
  ] as const;
  const send = async (prompts: readonly string[]) => {
    for (const prompt of prompts) {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
        payload: chatBody(prompt),
      });
      if (response.statusCode !== 200) throw new Error(`gateway answered ${response.statusCode}`);
    }
  };
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  // Warm-up: the AI-scoring verdicts get cached as in production, and V8 optimizes the hot paths.
  for (let w = 0; w < 3; w++) for (const [, prompts] of kinds) await send(prompts);
  const rows = kinds.map(([kind]) => ({ kind, cpuUs: 0, parts: new Map<string, number>(), samples: 0 }));
  // The kinds alternate pass by pass, so a change in the machine's load hits both alike.
  for (let p = 0; p < passes; p++) {
    for (const [k, [, prompts]] of kinds.entries()) {
      const row = rows[k]!;
      await session.post('Profiler.start');
      const cpu0 = threadCpuUs();
      await send(prompts);
      row.cpuUs += (threadCpuUs() - cpu0) / (passes * prompts.length);
      const { profile } = await session.post('Profiler.stop');
      for (const [part, n] of split(profile as unknown as { nodes: ProfileNode[]; samples: number[] })) {
        row.parts.set(part, (row.parts.get(part) ?? 0) + n);
        row.samples += n;
      }
    }
  }
  for (const { kind, cpuUs, parts, samples } of rows) {
    console.log(`${kind}: ${cpuUs.toFixed(0)} µs of guard CPU per request`);
    for (const [part, n] of [...parts].sort((a, b) => b[1] - a[1]))
      console.log(`  ${((cpuUs * n) / samples).toFixed(0).padStart(5)} µs  ${part}`);
  }
  session.disconnect();
  await app.close();
  await database.close();
  upstream.child.kill('SIGTERM');
  fs.rmSync(dataDir, { recursive: true, force: true });

  const names = [...new Set(rows.flatMap((r) => [...r.parts.keys()]))];
  const share = (r: (typeof rows)[number], part: string) => (r.cpuUs * (r.parts.get(part) ?? 0)) / r.samples;
  names.sort((a, b) => share(rows[0]!, b) - share(rows[0]!, a));
  const [dense, plain] = rows as [(typeof rows)[number], (typeof rows)[number]];
  const table = [
    '| part of the request | PII-dense corpus prompts, µs | ordinary prompts, µs | difference, µs |',
    '|---|---|---|---|',
    ...names.map(
      (part) =>
        `| ${part} | ${share(dense, part).toFixed(0)} | ${share(plain, part).toFixed(0)} | ${(share(dense, part) - share(plain, part)).toFixed(0)} |`,
    ),
    `| **total guard CPU per request** | **${dense.cpuUs.toFixed(0)}** | **${plain.cpuUs.toFixed(0)}** | **${(dense.cpuUs - plain.cpuUs).toFixed(0)}** |`,
  ].join('\n');
  writeResultsSection(
    'guard-gateway-profile',
    `## guard: where a gateway request spends its time

\`npx node bench/guard-gateway-profile.ts --requests ${requests} --passes ${passes}\` — guard in-process (SQLite in memory,
in-memory cache, \`GATEWAY_BLOCK_MODE=MASK\`, AI scoring against the bench's upstream with verdicts cached) in front of
\`bench/guard-gateway-upstream.ts\` (its own process); ${requests} prompts of each kind (as in the gateway benchmark) sent
one at a time through \`app.inject\`, ${passes} timed passes of each kind (alternating) after 3 warm-up passes, the CPU
profiler (100 µs) on only during the timed passes. Guard's CPU per request (this thread) split by the part of guard on each sample's stack.
${machineLine()}, load average ${os.loadavg()[0]!.toFixed(2)}.

${table}`,
  );
}

await main();
