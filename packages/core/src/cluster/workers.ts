import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';

/** Messages between the primary and its workers; `keel` marks them so other IPC traffic is left alone. */
type WorkerMessage =
  | { keel: 'listening'; port: number }
  | { keel: 'broadcast'; channel: string; message: string }
  | { keel: 'shutdown' };

function isWorkerMessage(value: unknown): value is WorkerMessage {
  return typeof value === 'object' && value !== null && typeof (value as { keel?: unknown }).keel === 'string';
}

/** `GUARD_WORKERS`-style values: a positive integer, or `auto` for one worker per CPU. */
export function resolveWorkerCount(value: number | 'auto'): number {
  return value === 'auto' ? Math.max(1, os.availableParallelism()) : value;
}

export interface WorkerPool {
  /** The port every worker listens on (they share one listening socket). */
  port: number;
  /** Asks every worker to stop accepting, finish in-flight requests and exit; resolves when all have. */
  close(): Promise<void>;
}

/**
 * Runs `workers` copies of `exec` (a module that starts one service instance and calls `reportListening`)
 * with Node's cluster module: they share the listening port, the primary relays broadcasts between them
 * (so an in-process cache invalidation reaches every worker), and a worker that dies unexpectedly is replaced.
 */
export async function startWorkerPool(options: {
  exec: string;
  workers: number;
  env: Record<string, string | undefined>;
  log?: (line: string) => void;
}): Promise<WorkerPool> {
  let stopping = false;
  const live = new Set<Worker>();
  let port = 0;

  const relay = (from: Worker, message: unknown) => {
    if (!isWorkerMessage(message) || message.keel !== 'broadcast') return;
    for (const worker of live) if (worker !== from && worker.isConnected()) worker.send(message);
  };

  const fork = (): Promise<number> => {
    cluster.setupPrimary({ exec: options.exec, args: [], silent: false });
    // Every worker gets the same environment: with port 0 the cluster primary still hands them one shared socket.
    const worker = cluster.fork(options.env);
    live.add(worker);
    worker.on('message', (message: unknown) => relay(worker, message));
    worker.on('exit', (code) => {
      live.delete(worker);
      if (!stopping) {
        options.log?.(`worker ${worker.process.pid} exited (${code}); starting a replacement`);
        fork().catch((error: unknown) => options.log?.(`replacement worker failed: ${(error as Error).message}`));
      }
    });
    return new Promise((resolve, reject) => {
      const onMessage = (message: unknown) => {
        if (isWorkerMessage(message) && message.keel === 'listening') {
          worker.off('message', onMessage);
          resolve(message.port);
        }
      };
      worker.on('message', onMessage);
      worker.once('exit', (code) => reject(new Error(`worker exited with code ${code} before listening`)));
    });
  };

  try {
    const ports = await Promise.all(Array.from({ length: options.workers }, fork));
    port = ports[0]!;
  } catch (error) {
    stopping = true;
    for (const worker of live) worker.kill();
    throw error;
  }

  return {
    port,
    async close() {
      stopping = true;
      await Promise.all(
        [...live].map(
          (worker) =>
            new Promise<void>((resolve) => {
              if (!worker.isConnected()) return resolve();
              worker.once('exit', () => resolve());
              worker.send({ keel: 'shutdown' } satisfies WorkerMessage);
            }),
        ),
      );
    },
  };
}

/** In a worker: tell the primary the service listens, and stop gracefully when asked. */
export function reportListening(port: number, stop: () => Promise<void>): void {
  process.send?.({ keel: 'listening', port } satisfies WorkerMessage);
  process.on('message', (message: unknown) => {
    if (isWorkerMessage(message) && message.keel === 'shutdown') {
      stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    }
  });
  // The primary decides when workers stop; a Ctrl-C reaches the whole process group, so ignore it here.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => undefined);
}

/**
 * Cross-worker delivery for the in-process cache's publish/subscribe: messages published in one worker reach
 * the subscribers of every other worker through the primary. Undefined outside a cluster worker.
 */
export function workerBroadcast():
  | {
      send(channel: string, message: string): void;
      onMessage(handler: (channel: string, message: string) => void): void;
    }
  | undefined {
  if (!cluster.isWorker || !process.send) return undefined;
  return {
    send(channel, message) {
      process.send?.({ keel: 'broadcast', channel, message } satisfies WorkerMessage);
    },
    onMessage(handler) {
      process.on('message', (message: unknown) => {
        if (isWorkerMessage(message) && message.keel === 'broadcast') handler(message.channel, message.message);
      });
    },
  };
}
