// Tracking-event ingestion over HTTP: batches of 100 events, autocannon in this process, the service in its own
// (`keel start geo`), on SQLite and (when reachable) PostgreSQL. Every 202 means the batch is committed.
//   npx node bench/geo-events.ts [--duration 15] [--connections 32] [--postgres postgres://…]
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startGeo } from './lib/geo-process.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

/** Other work on the machine skews every figure: the 1-minute load average when this run began. */
const loadAtStart = os.loadavg()[0].toFixed(1);

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '32' },
    postgres: { type: 'string', default: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const BATCH = 100;
const TARGET = 50_000;

function batchBody(seed: number): string {
  const events = Array.from({ length: BATCH }, (_, i) => ({
    type: i % 5 === 0 ? 'event' : 'pageview',
    ...(i % 5 === 0 ? { name: 'add_to_cart', properties: { sku: `SKU-${(seed + i) % 997}`, qty: 1 } } : {}),
    url: `https://shop.example/products/${(seed * 7 + i) % 500}?utm_source=${i % 9 === 0 ? 'chatgpt.com' : 'newsletter'}`,
    referrer: i % 4 === 0 ? 'https://www.perplexity.ai/search?q=shoes' : 'https://www.google.com/',
  }));
  return JSON.stringify({ consent: { analytics: seed % 2 === 0 }, events });
}

async function measure(label: string, env: Record<string, string>) {
  const geo = await startGeo(env);
  try {
    const headers = {
      'content-type': 'application/json',
      'x-site-token': geo.boot.siteToken,
      'user-agent': 'Mozilla/5.0 (bench)',
    };
    const requests = Array.from({ length: 50 }, (_, i) => ({
      method: 'POST' as const,
      path: '/api/v2/geo/events',
      headers,
      body: batchBody(i),
    }));
    await autocannon({ url: geo.url, connections, duration: 3, requests });
    const result = await autocannon({ url: geo.url, connections, duration, requests });
    const errors = result.errors + result.timeouts + result.non2xx;
    return {
      label,
      rps: result.requests.average,
      eps: result.requests.average * BATCH,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors,
    };
  } finally {
    await geo.stop();
  }
}

const rows = [await measure('SQLite (embedded, WAL)', {})];
try {
  rows.push(await measure('PostgreSQL', { DATABASE_URL: values.postgres! }));
} catch (error) {
  console.error(`PostgreSQL run skipped: ${(error as Error).message.split('\n')[0]}`);
}
const sqlite = rows[0]!;
const met = sqlite.eps >= TARGET && sqlite.errors === 0;
const table = [
  '| database | batches/s | events/s | p50 ms | p99 ms | errors | target |',
  '|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.label} | ${Math.round(r.rps)} | **${Math.round(r.eps).toLocaleString('en')}** | ${r.p50} | ${r.p99} | ${r.errors} | ${r.label.startsWith('SQLite') ? `≥ ${TARGET.toLocaleString('en')} events/s: ${met ? 'met' : 'NOT met'}` : 'reported'} |`,
  ),
].join('\n');
const markdown = `## geo — tracking-event ingestion

\`npx node bench/geo-events.ts --duration ${duration} --connections ${connections}\` — ${machineLine()}, load average ${loadAtStart} at start

POST /api/v2/geo/events with batches of ${BATCH} events (mixed pageviews and events, half with analytics consent,
AI referrals), ${connections} connections, ${duration} s after a 3 s warm-up; the service runs in its own process
(\`keel start geo\`) and commits each batch before answering 202.

${table}`;
writeResultsSection('geo-events', markdown);
console.log(markdown);
