// Engine runtime: token exchanges per second, and the engine's own overhead of a chat turn (client latency minus
// the time the engine waited for the model, which it reports as routing.provider_ms) against a zero-latency
// chat-completions double. The engine, the double and the load generator each run in their own process.
//   npx node bench/engine-runtime.ts [--duration 10] [--turns 3000]
import { execSync, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import { listening, startEngine } from './lib/engine-process.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '10' }, turns: { type: 'string', default: '3000' } },
});
const DURATION = Number(values.duration);
const TURNS = Number(values.turns);
const upstreamProcess = spawn(process.execPath, [path.join(import.meta.dirname, 'engine-runtime-upstream.ts')], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [upstream, engine] = await Promise.all([
  listening(upstreamProcess, /upstream listening on (\S+)/, 'upstream'),
  startEngine({ ENGINE_WEBHOOK_WORKER: 'false' }),
]);
const { boot, url: base } = engine;
const dispatcher = new Agent({ connections: 16, keepAliveTimeout: 30_000 });

async function call(
  method: string,
  url: string,
  token: string | undefined,
  body?: unknown,
  timing?: { engine?: number },
) {
  const response = await request(`${base}${url}`, {
    method: method as 'POST',
    dispatcher,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${text}`);
  const serverTiming = String(response.headers['server-timing'] ?? '').match(/engine;dur=([\d.]+)/);
  if (timing && serverTiming) timing.engine = Number(serverTiming[1]);
  return text ? JSON.parse(text) : undefined;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round = (n: number) => Math.round(n * 100) / 100;

try {
  // 1. Token exchanges per second.
  const exchangeBody = JSON.stringify({ access_key: boot.accessKey, secret_key: boot.secretKey });
  await autocannon({
    url: `${base}/api/v1/auth/token`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: exchangeBody,
    connections: 32,
    duration: 2,
  });
  const loadBefore = os.loadavg()[0]!.toFixed(2);
  const tokens = await autocannon({
    url: `${base}/api/v1/auth/token`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: exchangeBody,
    connections: 32,
    duration: DURATION,
  });

  // 2. Chat turn overhead.
  const token = (await call('POST', '/api/v1/auth/token', undefined, JSON.parse(exchangeBody))).access_token as string;
  const provider = await call('POST', '/api/v1/runtime/providers', token, {
    type: 'openai_compatible',
    name: 'bench double',
    base_url: `${upstream}/v1`,
    api_key: 'sk-bench-0123456789',
    text_model: 'bench-model',
    input_price_per_million: 0.15,
    output_price_per_million: 0.6,
  });
  const prompt = await call('POST', '/api/v1/runtime/prompts', token, {
    name: 'Shop',
    key: 'shop',
    content: 'You are the shopping assistant of {{ shop }}. Answer briefly.',
    variables: ['shop'],
    is_active: true,
  });
  const agent = await call('POST', `/api/v1/realms/${boot.realmId}/agents`, token, { username: 'bench-agent' });
  await call('PUT', `/api/v1/runtime/agents/${agent.identity.id}/config`, token, {
    system_prompt_id: prompt.id,
    ai_provider_id: provider.id,
    settings: { max_concurrency: 1000 },
  });
  let session: { session_id: string; resume_token: string } | undefined;
  const overheads: number[] = [];
  const engineTimes: number[] = [];
  const totals: number[] = [];
  const providerTimes: number[] = [];
  const turn = async (i: number) => {
    if (i % 20 === 0) session = await call('POST', '/api/v1/runtime/sessions', token, { agent_id: agent.identity.id });
    const startedAt = performance.now();
    const timing: { engine?: number } = {};
    const result = await call(
      'POST',
      '/api/v1/runtime/ai/chat',
      token,
      {
        agent_id: agent.identity.id,
        session_id: session!.session_id,
        resume_token: session!.resume_token,
        messages: [{ role: 'user', content: `Do you have trail running shoes in size 42? (${i})` }],
        metadata: { variables: { shop: 'Acme Outdoor' } },
      },
      timing,
    );
    const total = performance.now() - startedAt;
    return { total, provider: result.routing.provider_ms as number, engine: timing.engine! };
  };
  for (let i = 0; i < 200; i++) await turn(i); // warm-up
  const loadChat = os.loadavg()[0]!.toFixed(2);
  for (let i = 0; i < TURNS; i++) {
    const { total, provider: providerMs, engine } = await turn(i);
    totals.push(total);
    engineTimes.push(engine);
    providerTimes.push(providerMs);
    overheads.push(total - providerMs);
  }
  for (const list of [overheads, engineTimes, totals, providerTimes]) list.sort((a, b) => a - b);
  const uptime = execSync('uptime').toString().trim();
  const rps = Math.round(tokens.requests.average);
  const ok = tokens.non2xx === 0 && tokens.errors === 0;
  const p50 = round(percentile(engineTimes, 50));
  const p99 = round(percentile(engineTimes, 99));
  const clientP50 = round(percentile(overheads, 50));
  const clientP99 = round(percentile(overheads, 99));
  const markdown = `## engine: runtime token exchange and chat-turn overhead

\`npx node bench/engine-runtime.ts --duration ${DURATION} --turns ${TURNS}\` — the engine in its own process (\`keel start engine\`, SQLite,
in-process cache, \`LOG_LEVEL=warn\`), a zero-latency chat-completions double in a second process, the load generator in a third.
Token exchange: autocannon, 32 connections, ${DURATION} s after a 2 s warm-up, POST /api/v1/auth/token (SHA-256 lookup, HS256 JWT).
Chat turn: ${TURNS} sequential POST /api/v1/runtime/ai/chat turns (after 200 warm-up turns) in sessions of 20 turns (resume token,
history, rendered system prompt, sensitive-data scan, model call, transcript + execution written in one transaction). The engine's
overhead of a turn is its \`Server-Timing\` \`engine\` value: the time from the request's arrival to the answer (routing, auth,
body parsing and validation, the turn, the transaction) minus the time spent waiting for the model. The client-side figure subtracts
the model wait (\`routing.provider_ms\`) from the latency the load generator saw, so it also counts the HTTP client and loopback.
${machineLine()}. Load while measuring: 1-min load average ${loadBefore} (tokens), ${loadChat} (chat); after: \`${uptime}\`.
The machine is shared with other engineers' test runs, so figures are noisy.

| measure | result | target | |
|---|---|---|---|
| token exchanges | ${rps}/s (p50 ${tokens.latency.p50} ms, p99 ${tokens.latency.p99} ms, ${tokens.non2xx} non-2xx, ${tokens.errors} errors) | ≥ 2,000/s | ${rps >= 2000 && ok ? 'met' : 'NOT met'} |
| chat-turn overhead p50 (engine, Server-Timing) | ${p50} ms | ≤ 2 ms | ${p50 <= 2 ? 'met' : 'NOT met'} |
| chat-turn overhead p99 (engine, Server-Timing) | ${p99} ms | ≤ 10 ms | ${p99 <= 10 ? 'met' : 'NOT met'} |
| chat-turn overhead p50 / p99 (client-side) | ${clientP50} ms / ${clientP99} ms | ≤ 2 / ≤ 10 ms | ${clientP50 <= 2 && clientP99 <= 10 ? 'met' : 'NOT met'} |
| chat-turn latency (client) | p50 ${round(percentile(totals, 50))} ms, p99 ${round(percentile(totals, 99))} ms | reported | |
| model wait (provider_ms) | p50 ${round(percentile(providerTimes, 50))} ms, p99 ${round(percentile(providerTimes, 99))} ms | reported | |`;
  writeResultsSection('engine-runtime', markdown);
  process.stdout.write(`${markdown}\n`);
} finally {
  await dispatcher.close();
  upstreamProcess.kill('SIGTERM');
  await engine.stop();
}
