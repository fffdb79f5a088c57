// The 10-step deterministic workflow both flow benchmarks run in @mastra/core (bench/flow-engine.ts with in-memory
// storage, bench/flow-durable.ts with LibSQL), and the sequential measurement they share.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const PEERS_DIR = path.join(import.meta.dirname, '..', 'peers');
export const STEPS = 10;

/** Imports a package export from bench/peers (installed there on first use). */
export async function loadPeer(pkg: string, sub = '.') {
  if (!fs.existsSync(path.join(PEERS_DIR, 'node_modules', pkg, 'package.json'))) {
    console.log('installing the peer libraries into bench/peers …');
    execFileSync('npm', ['--prefix', PEERS_DIR, 'install', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(PEERS_DIR, 'node_modules', pkg, 'package.json'), 'utf8'));
  const target = manifest.exports[sub];
  const file = typeof target === 'string' ? target : (target.import?.default ?? target.import ?? target.default);
  return import(pathToFileURL(path.join(PEERS_DIR, 'node_modules', pkg, file)).href);
}

export function peerVersion(pkg: string): string {
  return JSON.parse(fs.readFileSync(path.join(PEERS_DIR, 'node_modules', pkg, 'package.json'), 'utf8')).version;
}

/**
 * Mastra: 10 chained steps (n → n + index for steps 2–9), registered on a Mastra instance with `storage`, the run's
 * snapshot persisted at every step. `run()` starts one run and checks its result (44).
 */
export async function mastraTenSteps(storage: unknown) {
  const { createWorkflow, createStep } = await loadPeer('@mastra/core', './workflows');
  const { Mastra } = await loadPeer('@mastra/core', './mastra');
  const { z } = await loadPeer('zod');
  const shape = z.object({ n: z.number() });
  let workflow = createWorkflow({
    id: 'ten-steps',
    inputSchema: shape,
    outputSchema: shape,
    options: { shouldPersistSnapshot: () => true },
  });
  for (let index = 1; index <= STEPS; index++)
    workflow = workflow.then(
      createStep({
        id: `s${index}`,
        inputSchema: shape,
        outputSchema: shape,
        execute: async ({ inputData }: { inputData: { n: number } }) => ({
          n: index === 1 || index === STEPS ? inputData.n : inputData.n + index,
        }),
      }),
    );
  workflow.commit();
  const mastra = new Mastra({ workflows: { tenSteps: workflow }, storage, logger: false });
  const registered = mastra.getWorkflow('tenSteps');
  return async () => {
    const run = await registered.createRun();
    const result = await run.start({ inputData: { n: 0 } });
    if (result.status !== 'success' || result.result.n !== 44)
      throw new Error(`mastra: unexpected result ${JSON.stringify(result).slice(0, 300)}`);
  };
}

/** Runs `execute` `count` times one after another: executions per second, p50 and p99 latency in ms. */
export async function measureSequential(execute: () => Promise<void>, count: number) {
  const latencies = new Float64Array(count);
  const started = performance.now();
  for (let index = 0; index < count; index++) {
    const t0 = performance.now();
    await execute();
    latencies[index] = performance.now() - t0;
  }
  const elapsed = performance.now() - started;
  latencies.sort();
  const pick = (q: number) => latencies[Math.min(count - 1, Math.floor(q * count))]!;
  return { perSecond: count / (elapsed / 1000), p50: pick(0.5), p99: pick(0.99) };
}
