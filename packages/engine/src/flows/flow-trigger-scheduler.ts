import { createLoopHealth } from '@keel/core';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { fireDueSchedules } from './flow-trigger-service.ts';

export interface TriggerScheduler {
  start(): void;
  stop(): Promise<void>;
  check(): true | { reason: string };
}

/**
 * The schedule loop of one engine instance: every `pollMs` it fires the due schedule slots. Any number of instances
 * may run it: each slot is claimed in the database, so it queues exactly one execution.
 */
export function createTriggerScheduler(rt: RuntimeContext, options: { pollMs: number }): TriggerScheduler {
  const health = createLoopHealth('flow trigger scheduler', rt.log);
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let pass: Promise<void> | undefined;
  const tick = () => {
    pass = (async () => {
      let delay = options.pollMs;
      try {
        await fireDueSchedules(rt);
        health.succeeded();
      } catch (error) {
        delay = health.failed(error);
      } finally {
        pass = undefined;
        if (running) timer = setTimeout(tick, delay);
      }
    })();
  };
  return {
    start() {
      if (running) return;
      running = true;
      tick();
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      await pass;
    },
    check: () => health.check(),
  };
}
