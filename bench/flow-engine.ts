import os from 'node:os';
import { effectiveSettings } from '../packages/engine/src/agents/agent-settings.ts';
import {
  compileFlow,
  createFlowExecutor,
  type FlowPort,
  type FlowStepRecord,
} from '../packages/engine/src/flows/index.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';
import { loadPeer, mastraTenSteps, measureSequential, peerVersion, STEPS } from './lib/ten-steps.ts';

function parseArgs(argv: string[]) {
  const value = (name: string, fallback: number) => {
    const index = argv.indexOf(`--${name}`);
    return index >= 0 ? Number(argv[index + 1]) : fallback;
  };
  return { executions: value('executions', 3000), rounds: value('rounds', 3), warmup: value('warmup', 500) };
}

/** Keel: input → 8 transforms → output, each step saved (as JSON text, as a database row would be) before the next. */
function keelEngine() {
  const nodes: unknown[] = [{ id: 's1', type: 'input', assign: 'state', next: 's2' }];
  for (let index = 2; index < STEPS; index++)
    nodes.push({
      id: `s${index}`,
      type: 'transform',
      expression: { object: { n: { '+': [{ var: 'vars.state.n' }, index] } } },
      assign: 'state',
      next: `s${index + 1}`,
    });
  nodes.push({ id: `s${STEPS}`, type: 'output', action: 'DATA_RESULT', data: { var: 'vars.state' } });
  const plan = compileFlow({
    schema_version: '2026-08-22',
    orchestration_mode: 'deterministic',
    permissions: { allowed_actions: ['DATA_RESULT'] },
    nodes,
  });
  const logs = new Map<string, string[]>();
  const port: FlowPort = {
    async loadSteps(executionId) {
      return (logs.get(executionId) ?? []).map((text) => JSON.parse(text) as FlowStepRecord);
    },
    async saveStep(executionId, record) {
      const log = logs.get(executionId) ?? [];
      log.push(JSON.stringify(record));
      logs.set(executionId, log);
    },
    callTool: () => Promise.reject(new Error('unused')),
    readResource: () => Promise.reject(new Error('unused')),
    generate: () => Promise.reject(new Error('unused')),
    decide: () => Promise.reject(new Error('unused')),
    runSpecialist: () => Promise.reject(new Error('unused')),
    loadPlan: async () => undefined,
    now: Date.now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
  const executor = createFlowExecutor(port);
  const settings = effectiveSettings({});
  let sequence = 0;
  return async () => {
    const executionId = `exec-${++sequence}`;
    const outcome = await executor.run({ executionId, plan, input: { n: 0 }, settings });
    if (outcome.status !== 'succeeded' || (outcome.action.data as { n: number }).n !== 44)
      throw new Error(`keel: unexpected outcome ${JSON.stringify(outcome)}`);
    if (logs.get(executionId)!.length !== STEPS) throw new Error('keel: not every step was saved');
    logs.delete(executionId);
  };
}

/** Mastra: the shared 10-step workflow with in-memory storage, counting its snapshot writes. */
async function mastraEngine() {
  const { InMemoryStore } = await loadPeer('@mastra/core', './storage');
  const storage = new InMemoryStore();
  // Count the snapshot writes, to report what "persisted" means on each side.
  const workflows = await storage.getStore('workflows');
  const persist = workflows.persistWorkflowSnapshot.bind(workflows);
  let writes = 0;
  workflows.persistWorkflowSnapshot = (...args: unknown[]) => {
    writes++;
    return persist(...args);
  };
  return { version: peerVersion('@mastra/core'), writes: () => writes, run: await mastraTenSteps(storage) };
}

const measure = measureSequential;

async function main() {
  const { executions, rounds, warmup } = parseArgs(process.argv.slice(2));
  const keel = keelEngine();
  const mastra = await mastraEngine();
  for (let index = 0; index < warmup; index++) {
    await keel();
    await mastra.run();
  }
  const writesPerMastraRun = mastra.writes() / warmup;
  const results = {
    keel: [] as Awaited<ReturnType<typeof measure>>[],
    mastra: [] as Awaited<ReturnType<typeof measure>>[],
  };
  const loadBefore = os.loadavg()[0]!.toFixed(2);
  for (let round = 1; round <= rounds; round++) {
    // Alternate the order so both engines see the same share of the machine's noise.
    const order = round % 2 === 1 ? (['keel', 'mastra'] as const) : (['mastra', 'keel'] as const);
    for (const name of order) {
      const result = await measure(name === 'keel' ? keel : mastra.run, executions);
      results[name].push(result);
      console.log(
        `round ${round} ${name}: ${result.perSecond.toFixed(0)} executions/s, p50 ${result.p50.toFixed(3)} ms, p99 ${result.p99.toFixed(3)} ms`,
      );
    }
  }
  const best = (list: Awaited<ReturnType<typeof measure>>[]) =>
    list.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const summary = (name: 'keel' | 'mastra') => ({
    perSecond: median(results[name].map((r) => r.perSecond)),
    p50: median(results[name].map((r) => r.p50)),
    p99: median(results[name].map((r) => r.p99)),
    best: best(results[name]),
  });
  const k = summary('keel');
  const m = summary('mastra');
  const ratio = k.perSecond / m.perSecond;
  const loadAfter = os.loadavg()[0]!.toFixed(2);
  const table = [
    '| engine | executions/s (median of rounds) | p50 | p99 | best round |',
    '|---|---|---|---|---|',
    `| Keel flow executor | ${k.perSecond.toFixed(0)} | ${k.p50.toFixed(3)} ms | ${k.p99.toFixed(3)} ms | ${k.best.perSecond.toFixed(0)}/s |`,
    `| @mastra/core ${mastra.version} workflows | ${m.perSecond.toFixed(0)} | ${m.p50.toFixed(3)} ms | ${m.p99.toFixed(3)} ms | ${m.best.perSecond.toFixed(0)}/s |`,
  ].join('\n');
  console.log(`\n${table}\nratio (Keel / Mastra executions/s): ${ratio.toFixed(1)}×`);
  writeResultsSection(
    'flow-engine',
    `## engine: flow engine core (pure engine, in-memory persistence) beside @mastra/core workflows

**This measures the pure engine**: the compiled-plan executor with an in-memory persistence port. With the state in the
database (SQLite/PostgreSQL rows per step, leases, the async queue, resume after a kill) see the flow-durable section.

\`npx node bench/flow-engine.ts --executions ${executions} --rounds ${rounds} --warmup ${warmup}\` — one process, the same 10-step
deterministic workflow in both engines, executions run one after another (sync). Keel: input → 8 JSON-expression transforms →
output, each step record serialized to JSON and saved in a Map before the next step starts, the plan compiled once. Mastra:
10 chained \`createStep\` steps committed once, registered on a \`Mastra\` instance with \`InMemoryStore\` storage and
\`shouldPersistSnapshot: () => true\`, one \`createRun()\` + \`start()\` per execution. Writes per execution: Keel ${STEPS} step
records; Mastra ${writesPerMastraRun.toFixed(0)} whole-run snapshots (its design: the run's snapshot is rewritten as it progresses),
both into memory. Both results
are checked on every execution. ${rounds} alternating rounds of ${executions} executions after ${warmup} warm-up executions each;
the table shows the median of the rounds.
${machineLine()}. 1-min load average ${loadBefore} before, ${loadAfter} after: the machine is shared with other engineers'
test runs (2 cores, ~7 sessions), so absolute figures are noisy; the ratio is measured side by side in the same run.

${table}

Ratio (Keel / Mastra executions/s): **${ratio.toFixed(1)}×** (goal ≥ 3×).`,
  );
}

await main();
