// User-defined work (user patterns, REGEX and SCHEMA validators) runs off the event loop, in worker threads,
// under a hard deadline: a job still running when its deadline passes is stopped by terminating its worker
// (a fresh one takes its place), so no stored pattern or schema can hold up other requests or /healthz.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DetectionTimeout } from '../detect/errors.ts';
import type { Candidate, PatternSpec } from '../detect/types.ts';

/** The user patterns of one active configuration; `key` is unique to that list of definitions. */
export interface UserPatternSet {
  key: string;
  specs: readonly PatternSpec[];
}

export type WorkRequest =
  | { id: number; kind: 'patterns'; key: string; specs: readonly PatternSpec[]; text: string; deadline: number }
  | { id: number; kind: 'regex'; rule: string; text: string }
  | { id: number; kind: 'schema'; rule: string; text: string };

export type WorkReply =
  | { id: number; ok: true; matches: Float64Array }
  | { id: number; ok: true; matched: boolean }
  | { id: number; ok: true; outcome: { passed: boolean; reason?: string } }
  | { id: number; ok: false; timeout: boolean; message: string };

/** What a worker posts once, when it has loaded and listens. */
export interface ReadyNote {
  ready: true;
}

type WorkInput = WorkRequest extends infer R ? (R extends WorkRequest ? Omit<R, 'id'> : never) : never;

export interface UserWork {
  /** The matches of the user patterns in `text`, as the inline scan would report them; DetectionTimeout past the deadline. */
  matchPatterns(set: UserPatternSet, text: string, deadline: number): Promise<Candidate[]>;
  /** Whether the RE2 `rule` matches somewhere in `text`; DetectionTimeout past the deadline. */
  testRegex(rule: string, text: string, deadline: number): Promise<boolean>;
  /** Whether `text` is JSON satisfying the schema `rule`; DetectionTimeout past the deadline. */
  validateSchema(rule: string, text: string, deadline: number): Promise<{ passed: boolean; reason?: string }>;
  /** Starts every worker (the first job does too); resolves when all are ready to work. */
  warm(): Promise<void>;
  /** Stops the workers; pending jobs fail. */
  close(): Promise<void>;
}

interface Job {
  id: number;
  request: WorkRequest;
  resolve: (reply: WorkReply) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  slot: Slot | undefined;
}

interface Slot {
  worker: Worker | undefined;
  job: Job | undefined;
  /** Settles when the current worker has loaded and listens (or is gone). */
  ready: Promise<void>;
}

const WORKER_URL = new URL('./user-work-worker.ts', import.meta.url);
/** Heap bound of one worker: a pattern or schema that allocates without end stops the worker, not the process. */
const WORKER_HEAP_MB = 512;

/** Creates the worker pool (`size` workers, 2 to 4 by default after the machine's cores), started lazily. */
export function createUserWork(size = Math.min(4, Math.max(2, availableParallelism()))): UserWork {
  const slots: Slot[] = Array.from({ length: size }, () => ({
    worker: undefined,
    job: undefined,
    ready: Promise.resolve(),
  }));
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  const release = (slot: Slot) => {
    const job = slot.job;
    slot.job = undefined;
    if (job) clearTimeout(job.timer);
    pump();
  };

  const spawn = (slot: Slot): Worker => {
    const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    worker.unref();
    let readied: () => void = () => {};
    slot.ready = new Promise((resolve) => {
      readied = resolve;
    });
    worker.once('exit', () => readied());
    worker.on('message', (reply: WorkReply | ReadyNote) => {
      if ('ready' in reply) return readied();
      const job = slot.job;
      if (slot.worker !== worker || !job || job.id !== reply.id) return;
      release(slot);
      job.resolve(reply);
    });
    const lost = (reason: string) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      const job = slot.job;
      if (job) {
        release(slot);
        job.reject(new Error(`user-defined detection stopped: ${reason}`));
      }
    };
    worker.on('error', (error) => lost(error.name));
    worker.on('exit', (code) => lost(`worker exited (${code})`));
    return worker;
  };

  const pump = () => {
    for (const slot of slots) {
      if (queue.length === 0) return;
      if (slot.job) continue;
      const job = queue.shift()!;
      slot.job = job;
      job.slot = slot;
      slot.worker ??= spawn(slot);
      slot.worker.postMessage(job.request);
    }
  };

  const expire = (job: Job) => {
    const slot = job.slot;
    if (slot && slot.job === job) {
      // The only way to stop a regex in the middle of a match: end the thread that runs it.
      const worker = slot.worker;
      slot.worker = undefined;
      slot.job = undefined;
      void worker?.terminate();
      pump();
    } else {
      const at = queue.indexOf(job);
      if (at >= 0) queue.splice(at, 1);
    }
    job.reject(new DetectionTimeout());
  };

  const submit = (input: WorkInput, deadline: number): Promise<WorkReply> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new Error('user-defined detection is shut down'));
      const wait = deadline - Date.now();
      if (wait <= 0) return reject(new DetectionTimeout());
      const id = nextId++;
      const job: Job = {
        id,
        request: { ...input, id } as WorkRequest,
        resolve,
        reject,
        timer: undefined!,
        slot: undefined,
      };
      job.timer = setTimeout(() => expire(job), wait);
      queue.push(job);
      startAll();
      pump();
    });

  // All workers start with the first job, so a second request finds one ready while the first is busy.
  const startAll = () => {
    if (closed) return;
    for (const slot of slots) slot.worker ??= spawn(slot);
  };

  const settle = (reply: WorkReply): WorkReply => {
    if (reply.ok) return reply;
    if (reply.timeout) throw new DetectionTimeout();
    throw new Error(reply.message);
  };

  return {
    async matchPatterns(set, text, deadline) {
      const reply = settle(
        await submit({ kind: 'patterns', key: set.key, specs: set.specs, text, deadline }, deadline),
      ) as Extract<WorkReply, { matches: Float64Array }>;
      const m = reply.matches;
      const out: Candidate[] = [];
      for (let i = 0; i + 4 < m.length; i += 5) {
        const spec = set.specs[m[i]!]!;
        const start = m[i + 1]!;
        const end = m[i + 2]!;
        out.push({
          type: spec.name,
          category: spec.category || 'PII',
          start,
          end,
          value: text.slice(start, end),
          regexScore: m[i + 3]!,
          localAiScore: m[i + 4]!,
          blocklisted: false,
        });
      }
      return out;
    },
    async testRegex(rule, text, deadline) {
      const reply = settle(await submit({ kind: 'regex', rule, text }, deadline));
      return (reply as Extract<WorkReply, { matched: boolean }>).matched;
    },
    async validateSchema(rule, text, deadline) {
      const reply = settle(await submit({ kind: 'schema', rule, text }, deadline));
      return (reply as Extract<WorkReply, { outcome: unknown }>).outcome;
    },
    async warm() {
      startAll();
      await Promise.all(slots.map((slot) => slot.ready));
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) {
        clearTimeout(job.timer);
        job.reject(new Error('user-defined detection is shut down'));
      }
      await Promise.all(
        slots.map(async (slot) => {
          const { worker, job } = slot;
          slot.worker = undefined;
          slot.job = undefined;
          if (job) {
            clearTimeout(job.timer);
            job.reject(new Error('user-defined detection is shut down'));
          }
          await worker?.terminate();
        }),
      );
    },
  };
}
