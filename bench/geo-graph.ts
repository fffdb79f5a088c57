// Target-graph import over HTTP: 10,000 targets and 50,000 relations in one POST /api/v1/geo/target-graph,
// validated, cycle-checked and written in one transaction; the service in its own process (SQLite, and
// PostgreSQL when reachable). Also times the rejection of the same graph with one cycle-closing relation.
//   npx node bench/geo-graph.ts [--targets 10000] [--relations 50000] [--runs 3]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startGeo } from './lib/geo-process.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

/** Other work on the machine skews every figure: the 1-minute load average when this run began. */
const loadAtStart = os.loadavg()[0].toFixed(1);

const { values } = parseArgs({
  options: {
    targets: { type: 'string', default: '10000' },
    relations: { type: 'string', default: '50000' },
    runs: { type: 'string', default: '3' },
    postgres: { type: 'string', default: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const TARGETS = Number(values.targets);
const RELATIONS = Number(values.relations);
const RUNS = Number(values.runs);
const TARGET_MS = 2000;

/** A random DAG: every relation goes from a lower to a higher index, so the graph is acyclic. */
function graph(seed: number) {
  let state = seed >>> 0;
  const random = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const targets = Array.from({ length: TARGETS }, (_, i) => ({
    key: `t${i}`,
    name: `Target ${i}`,
    kind: i % 10 === 0 ? 'brand' : 'page',
    url: `https://shop.example/p/${i}`,
  }));
  const seen = new Set<string>();
  const relations: { from: string; to: string; kind: string }[] = [];
  while (relations.length < RELATIONS) {
    const a = Math.floor(random() * (TARGETS - 1));
    const b = a + 1 + Math.floor(random() * Math.min(200, TARGETS - a - 1));
    const key = `${a}>${b}`;
    if (seen.has(key)) continue;
    seen.add(key);
    relations.push({ from: `t${a}`, to: `t${b}`, kind: 'links_to' });
  }
  return { targets, relations };
}

async function measure(label: string, env: Record<string, string>) {
  const geo = await startGeo(env);
  try {
    const times: number[] = [];
    let rejectMs = 0;
    for (let run = 0; run < RUNS; run++) {
      const { targets, relations } = graph(run + 1);
      const projectId = `0195f3a2-7c1e-7d4b-9a61-${String(run).padStart(12, '0')}`;
      const body = JSON.stringify({
        operation: 'import',
        workspaceId: geo.boot.workspaceId,
        projectId,
        targets,
        relations,
      });
      const started = performance.now();
      const response = await fetch(`${geo.url}/api/v1/geo/target-graph`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${geo.boot.keys.write}`,
          'idempotency-key': `bench-${run}`,
        },
        body,
      });
      const receipt = (await response.json()) as { targetsCreated: number; relationsCreated: number };
      times.push(performance.now() - started);
      if (response.status !== 200 || receipt.targetsCreated !== TARGETS || receipt.relationsCreated !== RELATIONS) {
        throw new Error(`import failed: ${response.status} ${JSON.stringify(receipt).slice(0, 300)}`);
      }
      if (run === 0) {
        const cyclic = JSON.stringify({
          operation: 'import',
          workspaceId: geo.boot.workspaceId,
          projectId: '0195f3a2-7c1e-7d4b-9a61-ffffffffffff',
          targets,
          relations: [...relations.slice(0, -1), { from: relations[0]!.to, to: relations[0]!.from, kind: 'links_to' }],
        });
        const rejectStarted = performance.now();
        const rejected = await fetch(`${geo.url}/api/v1/geo/target-graph`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${geo.boot.keys.write}`,
            'idempotency-key': 'bench-cyclic',
          },
          body: cyclic,
        });
        await rejected.text();
        rejectMs = performance.now() - rejectStarted;
        if (rejected.status !== 422) throw new Error(`cyclic import answered ${rejected.status}`);
      }
    }
    times.sort((x, y) => x - y);
    return { label, best: times[0]!, median: times[Math.floor(times.length / 2)]!, worst: times.at(-1)!, rejectMs };
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
const met = sqlite.median <= TARGET_MS;
const markdown = `## geo — target-graph import

\`npx node bench/geo-graph.ts --targets ${TARGETS} --relations ${RELATIONS} --runs ${RUNS}\` — ${machineLine()}, load average ${loadAtStart} at start

One POST /api/v1/geo/target-graph importing ${TARGETS.toLocaleString('en')} targets and ${RELATIONS.toLocaleString('en')} relations (a random DAG)
into an empty graph: parsed, validated, cycle-checked over the whole graph and written in one transaction, timed
from the client (request to receipt). The last column times the same graph plus one cycle-closing relation (422).

| database | median | best | worst | cyclic graph rejected (422) | target |
|---|---|---|---|---|---|
${rows.map((r) => `| ${r.label} | **${Math.round(r.median)} ms** | ${Math.round(r.best)} ms | ${Math.round(r.worst)} ms | ${Math.round(r.rejectMs)} ms | ${r.label.startsWith('SQLite') ? `≤ ${TARGET_MS} ms: ${met ? 'met' : 'NOT met'}` : 'reported'} |`).join('\n')}`;
writeResultsSection('geo-graph', markdown);
console.log(markdown);
