// Durable flow executions with their state in the database, beside @mastra/core workflows with LibSQL storage.
//   npm run bench -- flow-durable        (or: npx node bench/flow-durable.ts --executions 1000 --rounds 3)
//   PostgreSQL parts (async queue with two worker processes, resume after a kill) need BENCH_DATABASE_URL or
//   TEST_DATABASE_URL (postgres://…); each run works in its own schema, dropped afterwards.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryCache, type Database, openDatabase } from '../packages/core/src/index.ts';
import { buildEngineApps, prepareEngineDatabase } from '../packages/engine/src/app.ts';
import { readEngineConfig } from '../packages/engine/src/config.ts';
import type { EngineDb } from '../packages/engine/src/db/schema.ts';
import { createExecution, executeFlow } from '../packages/engine/src/executions/execution-service.ts';
import { bootstrapRealm } from '../packages/engine/src/identity/identity-service.ts';
import type { RuntimePrincipal } from '../packages/engine/src/identity/roles.ts';
import { publishedFlow, startFlowWorker, startToolDouble } from '../packages/engine/test/execution-helper.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';
import { loadPeer, mastraTenSteps, measureSequential, peerVersion, STEPS } from './lib/ten-steps.ts';

function parseArgs(argv: string[]) {
  const value = (name: string, fallback: number) => {
    const index = argv.indexOf(`--${name}`);
    return index >= 0 ? Number(argv[index + 1]) : fallback;
  };
  return {
    executions: value('executions', 1000),
    rounds: value('rounds', 3),
    warmup: value('warmup', 200),
    queue: value('queue', 1000),
  };
}

/** The same 10-step workflow as bench/flow-engine.ts: input → 8 JSON-expression transforms → output. */
function tenStepNodes() {
  const nodes: Record<string, unknown>[] = [{ id: 's1', type: 'input', assign: 'state', next: 's2' }];
  for (let index = 2; index < STEPS; index++)
    nodes.push({
      id: `s${index}`,
      type: 'transform',
      expression: { object: { n: { '+': [{ var: 'vars.state.n' }, index] } } },
      assign: 'state',
      next: `s${index + 1}`,
    });
  nodes.push({ id: `s${STEPS}`, type: 'output', action: 'DATA_RESULT', data: { var: 'vars.state' } });
  return nodes;
}

/** An engine (no listener, no background worker) on a database, with a realm, its owner principal and a flow. */
async function engineOn(database: Database<EngineDb>, nodes: Record<string, unknown>[]) {
  await prepareEngineDatabase(database.db);
  const apps = await buildEngineApps({
    config: readEngineConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '100000000', KEEL_ALLOW_PRIVATE_URLS: 'true' }),
    db: database.db,
    cache: createMemoryCache(),
    secretKeyHex: 'cd'.repeat(32),
  });
  const realm = await bootstrapRealm(database.db, { realmName: 'Bench', username: 'owner-service' });
  const call = async (method: string, url: string, options: { token?: string | null; body?: unknown } = {}) => {
    const response = await apps.rest.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(options.body !== undefined ? { payload: JSON.stringify(options.body) } : {}),
    });
    return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
  };
  const token = (
    await call('POST', '/api/v1/auth/token', { body: { access_key: realm.accessKey, secret_key: realm.secretKey } })
  ).body.access_token as string;
  const flow = await publishedFlow({ call }, token, 'Ten steps', nodes, {
    config: { permissions: { allowed_actions: ['DATA_RESULT', 'RESPOND'] } },
    input: { n: 0 },
  });
  const principal: RuntimePrincipal = {
    identityId: realm.identityId,
    userType: 'service',
    realmId: realm.realmId,
    role: 'owner',
    keyId: 'bench',
    tokenExpiresAt: Number.MAX_SAFE_INTEGER,
  };
  return { apps, principal, flowId: flow.id, call, token };
}

/** Mastra: the shared 10-step workflow with LibSQL storage on a SQLite file. */
async function mastraEngine(file: string) {
  const { LibSQLStore } = await loadPeer('@mastra/libsql');
  return {
    version: `@mastra/core ${peerVersion('@mastra/core')} + @mastra/libsql ${peerVersion('@mastra/libsql')}`,
    run: await mastraTenSteps(new LibSQLStore({ id: 'bench', url: `file:${file}` })),
  };
}

const measure = measureSequential;
type Result = Awaited<ReturnType<typeof measure>>;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

/** Part 1: synchronous executions, state in SQLite, beside Mastra with LibSQL (a SQLite file too). */
async function sqliteSync(args: ReturnType<typeof parseArgs>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-bench-flow-'));
  const database = await openDatabase<EngineDb>({ url: path.join(dir, 'engine.sqlite') });
  const engine = await engineOn(database, tenStepNodes());
  const keel = async () => {
    const outcome = await executeFlow(
      engine.apps.runtime,
      engine.principal,
      engine.flowId,
      { input: { n: 0 } },
      undefined,
    );
    const body = outcome.body as { state: string; action: { data: { n: number } } };
    if (body.state !== 'succeeded' || body.action.data.n !== 44)
      throw new Error(`keel: unexpected outcome ${JSON.stringify(body).slice(0, 300)}`);
  };
  const mastra = await mastraEngine(path.join(dir, 'mastra.db'));
  for (let index = 0; index < args.warmup; index++) {
    await keel();
    await mastra.run();
  }
  const results = { keel: [] as Result[], mastra: [] as Result[] };
  for (let round = 1; round <= args.rounds; round++) {
    const order = round % 2 === 1 ? (['keel', 'mastra'] as const) : (['mastra', 'keel'] as const);
    for (const name of order) {
      const result = await measure(name === 'keel' ? keel : mastra.run, args.executions);
      results[name].push(result);
      console.log(
        `round ${round} ${name}: ${result.perSecond.toFixed(0)} executions/s, p50 ${result.p50.toFixed(3)} ms, p99 ${result.p99.toFixed(3)} ms`,
      );
    }
  }
  const steps = await database.db
    .selectFrom('flow_execution_step')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  await engine.apps.close();
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const summary = (list: Result[]) => ({
    perSecond: median(list.map((r) => r.perSecond)),
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
  });
  return {
    keel: summary(results.keel),
    mastra: summary(results.mastra),
    mastraVersion: mastra.version,
    steps: Number(steps.n),
  };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number) {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Parts 2 and 3 on PostgreSQL: the async queue with two worker processes, and resume after a SIGKILL. */
async function postgresParts(url: string, args: ReturnType<typeof parseArgs>) {
  const schema = `engine_bench_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase<EngineDb>({ url, schema, poolSize: 8 });
  const children: ChildProcess[] = [];
  const double = await startToolDouble({ slowMs: 10 });
  try {
    const engine = await engineOn(database, tenStepNodes());
    const env = {
      WORKER_DB_URL: url,
      WORKER_DB_SCHEMA: schema,
      WORKER_LEASE_MS: '1000',
      WORKER_POLL_MS: '20',
      WORKER_CONCURRENCY: '16',
      WORKER_TOOL_URL: double.url,
    };
    for (const id of ['one', 'two']) children.push(await startFlowWorker({ ...env, WORKER_ID: id }));
    // Queue: N executions as fast as 16 concurrent producers can, then wait for all to succeed.
    const queued: string[] = [];
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < args.queue) {
          next++;
          const created = await createExecution(
            engine.apps.runtime,
            engine.principal,
            { flow_id: engine.flowId, input: { n: 0 } },
            undefined,
          );
          queued.push((created.body as { id: string }).id);
        }
      }),
    );
    const enqueuedMs = Date.now() - t0;
    const count = async (state: string) =>
      Number(
        (
          await database.db
            .selectFrom('flow_execution')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('state', '=', state)
            .where('flow_id', '=', engine.flowId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    await waitFor(async () => (await count('succeeded')) >= args.queue, 300_000);
    const rows = await database.db
      .selectFrom('flow_execution')
      .select(['created_at', 'started_at', 'finished_at'])
      .where('flow_id', '=', engine.flowId)
      .execute();
    const ms = (value: string | Date | null) => new Date(value as string).getTime();
    const first = Math.min(...rows.map((row) => ms(row.created_at)));
    const last = Math.max(...rows.map((row) => ms(row.finished_at)));
    const toStart = rows.map((row) => ms(row.started_at) - ms(row.created_at));
    const queue = {
      count: rows.length,
      perSecond: rows.length / ((last - first) / 1000),
      enqueuedMs,
      startP50: quantile(toStart, 0.5),
      startP99: quantile(toStart, 0.99),
    };
    console.log(
      `queue: ${queue.count} executions, ${queue.perSecond.toFixed(0)}/s end to end, time-to-start p50 ${queue.startP50} ms, p99 ${queue.startP99} ms`,
    );

    // Resume: a flow whose second step is a write in flight when its worker is killed; the other worker goes on.
    const crash = await publishedFlow(engine, engine.token, 'Crash', [
      { id: 'a', type: 'tool', tool: 'record', next: 'b' },
      { id: 'b', type: 'tool', tool: 'hold', next: 'c' },
      { id: 'c', type: 'output', action: 'RESPOND', content: 'done' },
    ]);
    const resumes: number[] = [];
    for (let trial = 0; trial < 3; trial++) {
      let killedAt = 0;
      const killed = new Promise<void>((resolve) => {
        double.onHit((hit) => {
          if (hit.tool !== 'hold' || killedAt) return;
          // Kill whichever worker holds the lease (both run; the other one takes over).
          killedAt = Date.now();
          resolve();
        });
      });
      const created = await createExecution(engine.apps.runtime, engine.principal, { flow_id: crash.id }, undefined);
      const id = (created.body as { id: string }).id;
      await killed;
      const row = await database.db
        .selectFrom('flow_execution')
        .select('lease_owner')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const index = row.lease_owner === 'one' ? 0 : 1;
      children[index]!.kill('SIGKILL');
      double.onHit(undefined);
      await waitFor(
        async () =>
          (
            await database.db
              .selectFrom('flow_execution')
              .select('state')
              .where('id', '=', id)
              .executeTakeFirstOrThrow()
          ).state === 'succeeded',
        60_000,
      );
      resumes.push(Date.now() - killedAt);
      children[index] = await startFlowWorker({ ...env, WORKER_ID: index === 0 ? 'one' : 'two' });
    }
    console.log(`resume after SIGKILL: ${resumes.join(', ')} ms (lease 1000 ms)`);
    await engine.apps.close();
    return { queue, resumes };
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await double.close();
    await database.close();
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`drop schema if exists "${schema}" cascade`);
    await client.end();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const loadBefore = os.loadavg()[0]!.toFixed(2);
  const sync = await sqliteSync(args);
  const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const pgParts = pgUrl?.startsWith('postgres') ? await postgresParts(pgUrl, args) : undefined;
  const loadAfter = os.loadavg()[0]!.toFixed(2);
  const ratio = sync.keel.perSecond / sync.mastra.perSecond;
  const table = [
    '| engine (state in SQLite files) | executions/s (median of rounds) | p50 | p99 |',
    '|---|---|---|---|',
    `| Keel \`executeFlow\` (execution row, 10 step rows + 10 events, final state) | ${sync.keel.perSecond.toFixed(0)} | ${sync.keel.p50.toFixed(3)} ms | ${sync.keel.p99.toFixed(3)} ms |`,
    `| ${sync.mastraVersion} | ${sync.mastra.perSecond.toFixed(0)} | ${sync.mastra.p50.toFixed(3)} ms | ${sync.mastra.p99.toFixed(3)} ms |`,
  ].join('\n');
  const pgText = pgParts
    ? `PostgreSQL (same machine), two worker processes (\`ENGINE_FLOW_CONCURRENCY\` 16 each, poll 20 ms, lease 1 s), ${pgParts.queue.count} executions of the same flow queued by 16 concurrent producers through \`createExecution\`:

| async queue | value |
|---|---|
| throughput, first queued → last finished | ${pgParts.queue.perSecond.toFixed(0)} executions/s |
| time-to-start (started_at − created_at) p50 / p99 | ${pgParts.queue.startP50} ms / ${pgParts.queue.startP99} ms |
| resume after SIGKILL (kill of the lease holder mid-write → succeeded on the other worker), 3 trials | ${pgParts.resumes.join(' / ')} ms |

The resume time is bounded below by the lease (1 s): the other worker takes the execution once the dead worker's lease
expires, replays the stored steps and sends the in-flight write again with the same idempotency key.`
    : 'PostgreSQL parts not run (no BENCH_DATABASE_URL / TEST_DATABASE_URL).';
  writeResultsSection(
    'flow-durable',
    `## engine: durable flow executions (state in the database) beside @mastra/core workflows with LibSQL storage

\`npx node bench/flow-durable.ts --executions ${args.executions} --rounds ${args.rounds} --warmup ${args.warmup} --queue ${args.queue}\`
(PostgreSQL parts with \`TEST_DATABASE_URL\`). The 10-step workflow of the flow-engine section, executions one after
another (sync). Keel: \`executeFlow\` (what \`POST /flows/{id}/execute\` runs, without HTTP): the execution row with its
pinned versions is inserted (one transaction), run in the process, and the final state written with the step records and
their events (one transaction: all ten nodes here are pure — input, transforms, output — whose steps are held back until
the next durable write; a step that calls a tool, a model or an agent, or waits, is stored with everything before it
before the next step starts) — ${Math.round(sync.steps / (args.warmup + args.executions * args.rounds))} step rows per execution;
the run gets the row it stored and answers the row it wrote (nothing is read back), and each node execution is a
\`flow.node <type>\` span under \`execution.run\` (no OTLP exporter configured here, as by default);
SQLite file in WAL mode, \`synchronous=NORMAL\`. Mastra: the same 10 chained steps with \`LibSQLStore\` on a SQLite file and
\`shouldPersistSnapshot: () => true\`. ${args.rounds} alternating rounds of ${args.executions} after ${args.warmup} warm-up executions each.
${machineLine()}. 1-min load average ${loadBefore} before, ${loadAfter} after (2 cores; the load
generator, both engines and any other process share them); the ratio is side by side in one run. Under load the mean is
set by the tail (p99); the p50 of one Keel execution is the figure to compare with the 1,000/s floor (1 ms).

${table}

Ratio (Keel / Mastra executions/s): **${ratio.toFixed(1)}×** (goal ≥ 3×; floor 1,000 executions/s on SQLite).

${pgText}`,
  );
  console.log(`\n${table}\nratio ${ratio.toFixed(1)}×`);
}

await main();
process.exit(0);
