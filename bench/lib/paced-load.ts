import { Pool } from 'undici';

export interface PacedRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface PacedResult {
  sent: number;
  completed: number;
  errors: number;
  non2xx: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** How late the generator itself handed requests over (its own event-loop lag), p99. */
  sendLagP99Ms: number;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * An open-loop load generator: requests are scheduled at an even rate (a few per millisecond, not a burst per
 * second) over a pool of keep-alive connections, whatever the answers do (no coordinated omission). Latency runs
 * from the moment a request is handed to the pool — so waiting for a free connection counts — and the generator's
 * own lag behind the schedule is reported apart.
 */
export async function pacedLoad(options: {
  url: string;
  connections: number;
  ratePerSecond: number;
  durationSeconds: number;
  /** Run at the same rate on the same connections first, unmeasured (connections opened, both JITs warm). */
  warmupSeconds?: number;
  requests: PacedRequest[];
}): Promise<PacedResult> {
  const pool = new Pool(options.url, { connections: options.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  await runSchedule(pool, options, Math.round(options.ratePerSecond * (options.warmupSeconds ?? 3)));
  const result = await runSchedule(pool, options, Math.round(options.ratePerSecond * options.durationSeconds));
  await pool.close();
  return result;
}

async function runSchedule(
  pool: Pool,
  options: { ratePerSecond: number; requests: PacedRequest[] },
  total: number,
): Promise<PacedResult> {
  const latencies = new Float64Array(total);
  const lags = new Float64Array(total);
  let completed = 0;
  let errors = 0;
  let non2xx = 0;
  const start = performance.now();
  const intervalMs = 1000 / options.ratePerSecond;
  const inFlight: Promise<void>[] = [];

  const fire = (index: number, dueAt: number) => {
    const request = options.requests[index % options.requests.length]!;
    const sentAt = performance.now();
    lags[index] = sentAt - dueAt;
    const done = pool
      .request({ method: request.method, path: request.path, headers: request.headers, body: request.body })
      .then(async (response) => {
        await response.body.dump();
        if (response.statusCode < 200 || response.statusCode >= 300) non2xx++;
        latencies[completed++] = performance.now() - sentAt;
      })
      .catch(() => {
        errors++;
      });
    inFlight.push(done);
  };

  let next = 0;
  while (next < total) {
    const now = performance.now();
    // Send everything that is due by now, then sleep about a millisecond (not spin: the generator shares the
    // machine with the server).
    while (next < total && start + next * intervalMs <= now) {
      fire(next, start + next * intervalMs);
      next++;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - start) / 1000;
  const sorted = latencies.slice(0, completed).sort();
  return {
    sent: total,
    completed,
    errors,
    non2xx,
    requestsPerSecond: completed / elapsed,
    latencyMs: {
      p50: percentile(sorted, 0.5),
      p90: percentile(sorted, 0.9),
      p99: percentile(sorted, 0.99),
      max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    },
    sendLagP99Ms: percentile(lags.slice(0, next).sort(), 0.99),
  };
}
