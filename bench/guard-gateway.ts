// guard's chat-completions gateway against the same fake upstream called directly, side by side with Portkey's
// open-source gateway, in one run. Every server runs in its own process; the load generator runs in this one.
//   npx node bench/guard-gateway.ts [--duration 10] [--connections 50] [--requests 2000] [--streams 300] [--workers 2]
//     [--port-base N]   listen on N…N+5 (upstream, paced upstream, guard, paced guard, bare pass-through, Portkey)
//                       instead of free ports, for a machine where each user keeps to a port range
// Portkey is installed on first use, bench-only, into bench/peers-gateway (not a workspace).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import { chatBody, kilobytePrompts, plainPrompts } from './lib/gateway-prompts.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    requests: { type: 'string', default: '2000' },
    streams: { type: 'string', default: '300' },
    workers: { type: 'string', default: '2' },
    'port-base': { type: 'string' },
  },
});
const portBase = values['port-base'] === undefined ? undefined : Number(values['port-base']);
/** The port of the k-th server: from --port-base, else 0 (any free port). */
const portFor = (k: number) => String(portBase === undefined ? 0 : portBase + k);
const workers = values.workers!;
const duration = Number(values.duration);
const connections = Number(values.connections);
const latencyRequests = Number(values.requests);
const streamRequests = Number(values.streams);
const ROOT = path.join(import.meta.dirname, '..');
const PORTKEY = path.join(
  ROOT,
  'bench',
  'peers-gateway',
  'node_modules',
  '@portkey-ai',
  'gateway',
  'build',
  'start-server.js',
);

interface Server {
  url: string;
  stop(): Promise<void>;
}

/** Spawns a Node process and waits for the line that announces its address. */
function startProcess(
  args: string[],
  env: Record<string, string>,
  pattern: RegExp,
  cwd = ROOT,
): Promise<Server & { child: ChildProcess }> {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(pattern);
      if (match) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve({
          child,
          url: match[1]!,
          stop: async () => {
            if (child.exitCode !== null) return;
            child.kill('SIGTERM');
            await new Promise((done) => child.once('exit', done));
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}: ${seen.slice(-2000)}`)));
  });
}

const body = chatBody;

const dispatcher = new Agent({ connections: 4, keepAliveTimeout: 60_000 });

async function post(url: string, payload: string, headers: Record<string, string> = {}) {
  const response = await request(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench', ...headers },
    body: payload,
    dispatcher,
  });
  await response.body.dump();
  return response.statusCode;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Sequential latency, one request at a time, direct and through the gateway alternately (same prompts). */
async function latencies(
  targets: { name: string; url: string; headers?: Record<string, string> }[],
  prompts: string[],
  count: number,
) {
  const samples = new Map(targets.map((t) => [t.name, [] as number[]]));
  for (let i = 0; i < count; i++) {
    const payload = body(prompts[i % prompts.length]!);
    for (const target of targets) {
      const started = performance.now();
      const status = await post(target.url, payload, target.headers);
      const ms = performance.now() - started;
      if (status !== 200) throw new Error(`${target.name} answered ${status}`);
      samples.get(target.name)!.push(ms);
    }
  }
  return new Map([...samples].map(([name, list]) => [name, list.sort((a, b) => a - b)]));
}

/** Time to the first chunk that carries content, for streaming requests made one at a time. */
async function timeToFirstToken(url: string, headers: Record<string, string>, prompts: string[], count: number) {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await request(`${url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench', ...headers },
      body: body(prompts[i % prompts.length]!, { stream: true }),
      dispatcher,
    });
    if (response.statusCode !== 200) throw new Error(`stream answered ${response.statusCode}`);
    let buffer = '';
    let first: number | undefined;
    for await (const bytes of response.body) {
      if (first === undefined) {
        buffer += bytes.toString();
        if (/"content":"[^"]/.test(buffer)) first = performance.now() - started;
      }
    }
    if (first === undefined) throw new Error('no content chunk');
    samples.push(first);
  }
  return samples.sort((a, b) => a - b);
}

async function throughput(url: string, headers: Record<string, string>, prompts: string[]) {
  const requests = prompts.map((prompt) => ({
    method: 'POST' as const,
    path: '/v1/chat/completions',
    headers,
    body: body(prompt),
  }));
  const common = { url, connections, pipelining: 1, requests };
  await autocannon({ ...common, duration: 3 });
  const result = await autocannon({ ...common, duration });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

const servers: Server[] = [];
const loadAverage = os
  .loadavg()
  .map((n) => n.toFixed(2))
  .join(', ');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-gw-bench-'));
try {
  const upstream = await startProcess(
    ['bench/guard-gateway-upstream.ts', '--port', portFor(0)],
    {},
    /upstream listening on (\S+)/,
  );
  servers.push(upstream);
  const paced = await startProcess(
    ['bench/guard-gateway-upstream.ts', '--gap-ms', '10', '--port', portFor(1)],
    {},
    /upstream listening on (\S+)/,
  );
  servers.push(paced);
  const guardEnv = {
    KEEL_DATA_DIR: dataDir,
    RATE_LIMIT_MAX: '100000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    GATEWAY_SECURITY_EVENTS: 'file:/dev/null',
    // The corpus is dense with high-confidence PII: in BLOCK mode most prompts would be refused before the
    // upstream (cheaper than a forward). MASK analyzes and redacts every prompt and forwards it.
    GATEWAY_BLOCK_MODE: 'MASK',
    GUARD_WORKERS: workers,
  };
  const keelArgs = ['packages/cli/src/keel.ts', 'start', 'guard'];
  const guard = await startProcess(
    keelArgs,
    { ...guardEnv, GUARD_PORT: portFor(2), AI_MODEL_URL: upstream.url },
    /guard listening on (\S+)/,
  );
  servers.push(guard);
  const guardPaced = await startProcess(
    keelArgs,
    { ...guardEnv, GUARD_PORT: portFor(3), KEEL_DATA_DIR: `${dataDir}-paced`, AI_MODEL_URL: paced.url },
    /guard listening on (\S+)/,
  );
  servers.push(guardPaced);

  const bare = await startProcess(
    ['bench/guard-gateway-bare.ts', upstream.url, portFor(4)],
    {},
    /bare listening on (\S+)/,
  );
  servers.push(bare);

  let portkey: Server | undefined;
  let portkeyProblem: string | undefined;
  if (!fs.existsSync(PORTKEY)) {
    // Bench-only and outside the workspaces: installed on first use, like the detection peer.
    console.log('installing Portkey into bench/peers-gateway …');
    const peers = path.join(ROOT, 'bench', 'peers-gateway');
    spawnSync('npm', ['--prefix', peers, 'install', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  }
  if (!fs.existsSync(PORTKEY)) {
    portkeyProblem = 'not installed (`npm install` in bench/peers-gateway failed)';
  } else {
    try {
      const port = portBase === undefined ? 20_000 + Math.floor(Math.random() * 20_000) : portBase + 5;
      const started = await startProcess(
        [PORTKEY, `--port=${port}`, '--headless'],
        { NODE_ENV: 'production' },
        /(Ready for connections)/,
        path.join(ROOT, 'bench', 'peers-gateway'),
      );
      portkey = { url: `http://127.0.0.1:${port}`, stop: started.stop };
      servers.push(portkey);
    } catch (error) {
      portkeyProblem = (error as Error).message.slice(0, 300);
    }
  }
  const portkeyHeaders = { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream.url };

  // 1 KB prompts; one pass through the gateway first, so guard's AI-scoring verdicts are cached as in production.
  const prompts = kilobytePrompts(400);
  let redacted = 0;
  for (const prompt of prompts) {
    const response = await request(`${guard.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(prompt),
      dispatcher,
    });
    const answer = (await response.body.json()) as { gw_meta?: { input?: { detections: unknown[] }[] } };
    if (response.statusCode !== 200) throw new Error(`gateway answered ${response.statusCode}`);
    if ((answer.gw_meta?.input?.[0]?.detections.length ?? 0) > 0) redacted++;
  }
  const gatewayHeaders = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };

  const plain = plainPrompts(400);
  for (const prompt of plain) await post(`${guard.url}/v1`, body(prompt));

  // Non-streaming overhead: the same prompts, one at a time, alternating direct / gateway.
  const overhead = async (set: string[]) => {
    const targets = [
      { name: 'direct', url: upstream.url },
      { name: 'keel', url: `${guard.url}/v1` },
    ];
    await latencies(targets, set, 300);
    const lat = await latencies(targets, set, latencyRequests);
    const d = lat.get('direct')!;
    const k = lat.get('keel')!;
    return { d, k, p50: percentile(k, 50) - percentile(d, 50), p99: percentile(k, 99) - percentile(d, 99) };
  };
  const corpusLat = await overhead(prompts);
  const plainLat = await overhead(plain);

  // Time to first token: direct, final-only and stream-sync; against the burst upstream and a paced one.
  const ttft = async (upstreamUrl: string, gatewayUrl: string) => {
    await timeToFirstToken(gatewayUrl, { 'x-gw-guardrails-mode': 'stream-sync' }, prompts, 50);
    const d = await timeToFirstToken(upstreamUrl, {}, prompts, streamRequests);
    const f = await timeToFirstToken(gatewayUrl, { 'x-gw-guardrails-mode': 'final-only' }, prompts, streamRequests);
    const s = await timeToFirstToken(gatewayUrl, { 'x-gw-guardrails-mode': 'stream-sync' }, prompts, streamRequests);
    return { d, f, s };
  };
  const burst = await ttft(upstream.url, `${guard.url}/v1`);
  const pacedTtft = await ttft(paced.url, `${guardPaced.url}/v1`);
  const syncAdded = percentile(burst.s, 50) - percentile(burst.d, 50);

  // Throughput, each target alone with the same load.
  const tDirect = await throughput(upstream.url.replace(/\/v1$/, ''), gatewayHeaders, prompts);
  const tKeel = await throughput(guard.url, gatewayHeaders, prompts);
  const tKeelPlain = await throughput(guard.url, gatewayHeaders, plain);
  const tBare = await throughput(bare.url, gatewayHeaders, prompts);
  const tPortkey = portkey
    ? await throughput(portkey.url, { ...gatewayHeaders, ...portkeyHeaders }, prompts)
    : undefined;
  const ratio = tPortkey && tPortkey.rps > 0 ? tKeel.rps / tPortkey.rps : undefined;
  const ratioPlain = tPortkey && tPortkey.rps > 0 ? tKeelPlain.rps / tPortkey.rps : undefined;

  const ms = (n: number) => `${round(n)} ms`;
  const verdict = (ok: boolean) => (ok ? 'met' : '**NOT met**');
  const table = [
    '| measure | value | target |',
    '|---|---|---|',
    ...[
      ['PII-dense corpus prompts', corpusLat],
      ['ordinary prompts', plainLat],
    ].flatMap(([name, o]) => {
      const r = o as typeof corpusLat;
      return [
        `| non-streaming overhead p50, ${name} (gateway p50 − direct p50) | ${ms(r.p50)} (${ms(percentile(r.k, 50))} vs ${ms(percentile(r.d, 50))}) | ≤ 1 ms: ${verdict(r.p50 <= 1)} |`,
        `| non-streaming overhead p99, ${name} (gateway p99 − direct p99) | ${ms(r.p99)} (${ms(percentile(r.k, 99))} vs ${ms(percentile(r.d, 99))}) | ≤ 5 ms: ${verdict(r.p99 <= 5)} |`,
      ];
    }),
    `| stream-sync added time to first token, p50 | ${ms(syncAdded)} (direct ${ms(percentile(burst.d, 50))}, final-only ${ms(percentile(burst.f, 50))}, stream-sync ${ms(percentile(burst.s, 50))}) | ≤ 5 ms: ${verdict(syncAdded <= 5)} |`,
    `| non-streaming requests/s through the gateway, PII-dense corpus prompts (${connections} connections) | ${Math.round(tKeel.rps)} (p50 ${tKeel.p50} ms, p99 ${tKeel.p99} ms, errors ${tKeel.errors}) | ≥ 3,000: ${verdict(tKeel.rps >= 3000 && tKeel.errors === 0)} |`,
    `| non-streaming requests/s through the gateway, ordinary prompts | ${Math.round(tKeelPlain.rps)} (p50 ${tKeelPlain.p50} ms, p99 ${tKeelPlain.p99} ms, errors ${tKeelPlain.errors}) | ≥ 3,000: ${verdict(tKeelPlain.rps >= 3000 && tKeelPlain.errors === 0)} |`,
    `| the upstream called directly, same load | ${Math.round(tDirect.rps)} req/s (p50 ${tDirect.p50} ms, p99 ${tDirect.p99} ms) | reference |`,
    `| a bare Fastify + undici pass-through (no checks), same load | ${Math.round(tBare.rps)} req/s (p50 ${tBare.p50} ms, p99 ${tBare.p99} ms) | this machine's ceiling for a Node gateway |`,
    tPortkey
      ? `| Portkey gateway ${portkeyVersion()}, same load and upstream | ${Math.round(tPortkey.rps)} req/s (p50 ${tPortkey.p50} ms, p99 ${tPortkey.p99} ms, errors ${tPortkey.errors}) | peer |`
      : `| Portkey gateway | could not run: ${portkeyProblem} | peer |`,
    ratio !== undefined && ratioPlain !== undefined
      ? `| Keel (input and output detection on) ÷ Portkey (no detection), requests/s | **${round(ratio, 1)}×** (corpus prompts), **${round(ratioPlain, 1)}×** (ordinary prompts) | ≥ 4×: ${verdict(ratio >= 4)} / ${verdict(ratioPlain >= 4)} |`
      : '| Keel ÷ Portkey | not measured | ≥ 4× |',
  ].join('\n');
  const pacedLine = `With a paced upstream (one word every 10 ms, as a model streams), time to first token p50 is direct ${ms(percentile(pacedTtft.d, 50))}, final-only ${ms(percentile(pacedTtft.f, 50))}, stream-sync ${ms(percentile(pacedTtft.s, 50))}: stream-sync releases a word once the next chunk shows it has ended, so it adds about one chunk interval when the first chunk ends inside a word (the word could still grow into an e-mail address), and nothing when it ends with a space or punctuation.`;
  console.log(table);
  console.log(pacedLine);
  writeResultsSection(
    'guard-gateway',
    `## guard: chat-completions gateway

\`npx node bench/guard-gateway.ts --duration ${duration} --connections ${connections} --workers ${workers}\` (guard as \`GUARD_WORKERS=${workers} keel start guard\`) — ${machineLine()}.

One run, every server in its own process: a fast local chat-completions upstream (\`bench/guard-gateway-upstream.ts\`),
guard (\`keel start guard\`, SQLite, \`LOG_LEVEL=${process.env.LOG_LEVEL ?? 'warn'}\`, \`AI_MODEL_URL\` = that upstream) and
Portkey's open-source gateway (\`@portkey-ai/gateway\` from npm in \`bench/peers-gateway\`, \`@hono/node-server\` 1.13.8,
\`x-portkey-provider: openai\` with the same upstream as custom host). Requests carry 1 KB user prompts built from the
PII development corpus ("corpus prompts": ${prompts.length} prompts, ${redacted} of them with detections — names, e-mail addresses, phone numbers,
cards, ids, secrets in running text); guard runs with \`GATEWAY_BLOCK_MODE=MASK\` so every prompt is analyzed, redacted and
forwarded (BLOCK would refuse most of this corpus before the upstream, which is cheaper than forwarding); and
"ordinary prompts": 400 distinct 1 KB requests of running text, one in ten with an e-mail address. Overhead: ${latencyRequests} requests one at a time,
alternating direct and through the gateway. Time to first token: ${streamRequests} streaming requests one at a time
(first chunk whose delta carries content). Throughput: autocannon, ${connections} connections, ${duration} s after a 3 s
warm-up, each target alone. The load generator shares the machine's cores with the servers; load average when the
run started: ${loadAverage}.

${table}

${pacedLine}

Reading the throughput rows: this 2-core machine runs the load generator, the upstream, the gateway under test (and,
during development, other processes: see the load average) at once, and a bare Fastify + undici pass-through with no
checks at all tops out at the "ceiling" row — about the 3,000 req/s target itself, leaving no room for any work per
request in this setup. On top of that hop,
Keel's cost per call is the detection engine on the 1 KB prompt and on the answer (about 0.2–0.5 ms of CPU for a
PII-dense prompt; \`/detect\` alone serves about 1,200 req/s with these texts, see its own section). Portkey runs no
detection; the ratio is reported as measured.`,
  );
} finally {
  for (const server of servers.reverse()) await server.stop().catch(() => {});
  await dispatcher.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(`${dataDir}-paced`, { recursive: true, force: true });
}

function portkeyVersion(): string {
  try {
    return JSON.parse(fs.readFileSync(path.join(path.dirname(PORTKEY), '..', 'package.json'), 'utf8')).version;
  } catch {
    return '';
  }
}
