// Analytics reads: GET /api/v1/geo/analytics?limit=100 on a 1,000,000-record dataset (SQLite), pages taken at
// random depths through keyset cursors. The service runs in its own process; autocannon in this one.
//   npx node bench/geo-analytics.ts [--records 1000000] [--duration 15] [--connections 8]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '@keel/core';
import { type GeoDb, prepareGeoDatabase } from '@keel/geo';
import autocannon from 'autocannon';
import { recordJson } from '../packages/geo/src/datasets/analytics-json.ts';
import { startGeo } from './lib/geo-process.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

/** Other work on the machine skews every figure: the 1-minute load average when this run began. */
const loadAtStart = os.loadavg()[0].toFixed(1);

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '8' },
  },
});
const RECORDS = Number(values.records);
const duration = Number(values.duration);
const connections = Number(values.connections);
const TARGET_P99_MS = 10;

/** UUIDv7-shaped ids in time order, so the seeded rows look like the service's own. */
function idFor(ms: number, n: number): string {
  const hex =
    ms.toString(16).padStart(12, '0') +
    (0x7000 | (n & 0xfff)).toString(16) +
    (0x8000 | ((n >> 12) & 0x3fff)).toString(16) +
    n.toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

// 1. Seed the dataset straight into the service's SQLite file (before the service starts).
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-geo-analytics-'));
const geo0 = await startGeo({}, { dataDir });
const { boot } = geo0;
await geo0.stop();
const seededAt = performance.now();
const database = await openDatabase<GeoDb>({ url: `${dataDir}/geo.sqlite` });
await prepareGeoDatabase(database.db);
const start = Date.UTC(2026, 0, 1);
const ids: string[] = [];
const CHUNK = 1000;
for (let offset = 0; offset < RECORDS; offset += CHUNK) {
  const rows: Record<string, unknown>[] = [];
  for (let i = offset; i < Math.min(RECORDS, offset + CHUNK); i++) {
    const at = new Date(start + i * 1000).toISOString();
    const id = idFor(start + i * 1000, i);
    if (i % 997 === 0) ids.push(id);
    const value = (i % 1000) / 1000;
    const row = {
      id,
      workspace_id: boot.workspaceId,
      dataset: 'metrics',
      mode: '',
      record_key: `ai_visibility:${i}`,
      definition_version: 'ai-visibility/3',
      run_id: `run-${Math.floor(i / 10000)}`,
      import_id: null,
      computed_at: at,
      data: JSON.stringify({
        metric: 'ai_visibility',
        engine: ['chatgpt', 'perplexity', 'gemini', 'copilot'][i % 4],
        query: `query ${i % 5000}`,
        value,
      }),
      confidence_value: value,
      confidence_low: Math.max(0, value - 0.05),
      confidence_high: Math.min(1, value + 0.05),
      evidence: JSON.stringify([{ type: 'query', ref: `q-${i % 5000}` }]),
      status: null,
      subject_hash: null,
      created_at: at,
      updated_at: at,
    };
    rows.push({ ...row, api_json: recordJson(row) });
  }
  await database.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += 200)
      await trx
        .insertInto('dataset_record')
        .values(rows.slice(i, i + 200) as never)
        .execute();
  });
}
await database.close();
const seedSeconds = (performance.now() - seededAt) / 1000;

// 2. Serve it and read pages at random depths.
const geo = await startGeo({}, { dataDir });
try {
  const cursors = ids.map((id) => Buffer.from(`ds.metrics.:${id}`).toString('base64url'));
  // The data dir holds the first tenant; its workspace is the one seeded.
  const requests = [undefined, ...cursors.slice(1)].map((cursor) => ({
    method: 'GET' as const,
    path: `/api/v1/geo/analytics?workspaceId=${boot.workspaceId}&dataset=metrics&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    headers: { authorization: `Bearer ${boot.keys.read}` },
  }));
  const sample = requests[Math.floor(requests.length / 2)]!;
  const check = await fetch(`${geo.url}${sample.path}`, { headers: sample.headers });
  const body = (await check.json()) as { items: unknown[] };
  if (check.status !== 200 || body.items.length !== 100) throw new Error(`unexpected answer ${check.status}`);
  await autocannon({ url: geo.url, connections, duration: 3, requests });
  // One client issuing requests back to back, then `connections` clients at once.
  const levels = [...new Set([1, connections])];
  const results = [];
  for (const level of levels) {
    const result = await autocannon({ url: geo.url, connections: level, duration, requests });
    const errors = result.errors + result.timeouts + result.non2xx;
    results.push({
      level,
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors,
      met: result.latency.p99 <= TARGET_P99_MS && errors === 0,
    });
  }
  const markdown = `## geo — analytics page reads

\`npx node bench/geo-analytics.ts --records ${RECORDS} --duration ${duration} --connections ${connections}\` — ${machineLine()}, load average ${loadAtStart} at start

GET /api/v1/geo/analytics?dataset=metrics&limit=100 on a ${RECORDS.toLocaleString('en')}-record dataset (SQLite, seeded in
${seedSeconds.toFixed(0)} s), each request a page at a random depth through a keyset cursor (${requests.length} distinct pages);
${duration} s per load level after a 3 s warm-up; the service in its own process, autocannon in this one.

| concurrent clients | requests/s | p50 | p99 | errors | target p99 ≤ ${TARGET_P99_MS} ms |
|---|---|---|---|---|---|
${results.map((r) => `| ${r.level} | ${Math.round(r.rps)} | ${r.p50} ms | **${r.p99} ms** | ${r.errors} | ${r.met ? 'met' : 'NOT met'} |`).join('\n')}`;
  writeResultsSection('geo-analytics', markdown);
  console.log(markdown);
} finally {
  await geo.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
