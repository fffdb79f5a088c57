// Observed health, latency and error rate per tool server, from real probe and call outcomes, decaying over time
// (exponential, by half-life) and shared between instances as plain, mergeable JSON snapshots.
//
// Each instance owns one entry per server and only ever writes its own entries. A snapshot carries every entry the
// instance knows (its own and merged ones); merging keeps, per (instance, server), the entry observed last. Merge is
// therefore idempotent, commutative and associative: instances can exchange snapshots in any order, repeatedly,
// and converge. The combined view of a server sums the entries of all instances, each decayed to "now".

/** Health as routing sees it. `unknown`: no recent observation (eligible, scored below healthy). */
export type ServerHealth = 'healthy' | 'degraded' | 'unhealthy' | 'unknown';

/** One observed outcome of a probe or a call to a server. */
export interface ServerObservation {
  server_id: string;
  kind: 'probe' | 'call';
  ok: boolean;
  /** Wall time of the probe or call in milliseconds (failures included; only successes feed the latency). */
  latency_ms: number;
  /** The server refused the engine's credentials (counts as a failure; the view reports it). */
  auth_failure?: boolean;
}

/** One instance's decayed aggregate for one server, as of `at` (epoch ms). Plain JSON. */
export interface StatsEntry {
  instance_id: string;
  server_id: string;
  at: number;
  /** Decayed number of observations. */
  samples: number;
  /** Decayed number of failed observations. */
  failures: number;
  /** Decayed number of successful observations (weights of the latency mean). */
  latency_weight: number;
  /** Decayed sum of successful latencies (ms). */
  latency_sum: number;
  /** Failures since this instance's last success. */
  consecutive_failures: number;
  /** Whether this instance's last observation was an authentication failure. */
  auth_failing: boolean;
}

/** What instances exchange. `half_life_ms` documents the sender's decay; the receiver decays with its own. */
export interface StatsSnapshot {
  version: 1;
  half_life_ms: number;
  entries: StatsEntry[];
}

/** The combined, decayed view of one server. */
export interface ServerStatsView {
  server_id: string;
  health: ServerHealth;
  /** Decayed observation count over all instances. */
  samples: number;
  /** Failures / samples (0 with no samples). */
  error_rate: number;
  /** Decayed mean latency of successes in ms, or undefined with none. */
  latency_ms: number | undefined;
  consecutive_failures: number;
  auth_failing: boolean;
  /** Time of the newest observation (epoch ms), or undefined. */
  observed_at: number | undefined;
}

/** Thresholds of the health classification and the bounds of snapshots. */
export const STATS_DEFAULTS = Object.freeze({
  halfLifeMs: 5 * 60_000,
  /** Below this decayed sample count the error rate is not trusted and health is `unknown` (unless failing in a row). */
  minSamples: 3,
  /** This many failures in a row on any instance makes a server unhealthy at once. */
  unhealthyConsecutiveFailures: 3,
  unhealthyErrorRate: 0.5,
  degradedErrorRate: 0.2,
  /** Entries whose decayed sample count falls below this are dropped from snapshots. */
  pruneBelow: 0.01,
  /** Most entries a snapshot may carry (merging ignores a larger one). */
  maxEntries: 20_000,
  maxIdLength: 200,
  /** Latencies above this (ms) are clamped, so a hostile or broken value cannot dominate the mean. */
  maxLatencyMs: 600_000,
});

export interface ServerStatsOptions {
  /** This instance's id (unique per running process). */
  instanceId: string;
  halfLifeMs?: number;
  /** Clock (epoch ms); injected in tests. */
  now?: () => number;
  minSamples?: number;
  unhealthyConsecutiveFailures?: number;
  unhealthyErrorRate?: number;
  degradedErrorRate?: number;
}

/** The result of merging a snapshot: entries taken, and entries refused as malformed. */
export interface MergeResult {
  accepted: number;
  rejected: number;
}

/** The decay factor over `elapsed` ms (no growth for a clock running backwards). */
export function decayFactor(elapsedMs: number, halfLifeMs: number): number {
  return elapsedMs <= 0 ? 1 : 0.5 ** (elapsedMs / halfLifeMs);
}

function decayed(entry: StatsEntry, now: number, halfLifeMs: number): StatsEntry {
  const f = decayFactor(now - entry.at, halfLifeMs);
  return {
    ...entry,
    at: Math.max(entry.at, now),
    samples: entry.samples * f,
    failures: entry.failures * f,
    latency_weight: entry.latency_weight * f,
    latency_sum: entry.latency_sum * f,
  };
}

const finiteNonNegative = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

function validEntry(value: unknown): value is StatsEntry {
  if (typeof value !== 'object' || value === null) return false;
  const e = value as Record<string, unknown>;
  const id = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= STATS_DEFAULTS.maxIdLength;
  return (
    id(e.instance_id) &&
    id(e.server_id) &&
    finiteNonNegative(e.at) &&
    finiteNonNegative(e.samples) &&
    finiteNonNegative(e.failures) &&
    e.failures <= e.samples + 1e-9 &&
    finiteNonNegative(e.latency_weight) &&
    finiteNonNegative(e.latency_sum) &&
    Number.isInteger(e.consecutive_failures) &&
    (e.consecutive_failures as number) >= 0 &&
    typeof e.auth_failing === 'boolean'
  );
}

/** Observed server statistics of one instance, plus what it merged from others. */
export class ServerStats {
  readonly instanceId: string;
  readonly halfLifeMs: number;
  readonly #now: () => number;
  readonly #thresholds: Required<Omit<ServerStatsOptions, 'instanceId' | 'halfLifeMs' | 'now'>>;
  /** server id → instance id → entry (indexed by server so a view reads only its own entries). */
  readonly #servers = new Map<string, Map<string, StatsEntry>>();

  #get(instanceId: string, serverId: string): StatsEntry | undefined {
    return this.#servers.get(serverId)?.get(instanceId);
  }

  #set(entry: StatsEntry): void {
    let byInstance = this.#servers.get(entry.server_id);
    if (!byInstance) {
      byInstance = new Map();
      this.#servers.set(entry.server_id, byInstance);
    }
    if (byInstance.has(entry.instance_id)) {
      byInstance.set(entry.instance_id, entry);
      return;
    }
    // A new instance (rare): rebuild the map in instance id order, the order views sum in.
    const sorted = [...byInstance.values(), entry].sort((x, y) => (x.instance_id < y.instance_id ? -1 : 1));
    this.#servers.set(entry.server_id, new Map(sorted.map((e) => [e.instance_id, e])));
  }

  constructor(options: ServerStatsOptions) {
    if (!options.instanceId || options.instanceId.length > STATS_DEFAULTS.maxIdLength) {
      throw new RangeError('instanceId must be a non-empty string of at most 200 characters');
    }
    const halfLifeMs = options.halfLifeMs ?? STATS_DEFAULTS.halfLifeMs;
    if (!(halfLifeMs > 0) || !Number.isFinite(halfLifeMs)) throw new RangeError('halfLifeMs must be positive');
    this.instanceId = options.instanceId;
    this.halfLifeMs = halfLifeMs;
    this.#now = options.now ?? Date.now;
    this.#thresholds = {
      minSamples: options.minSamples ?? STATS_DEFAULTS.minSamples,
      unhealthyConsecutiveFailures: options.unhealthyConsecutiveFailures ?? STATS_DEFAULTS.unhealthyConsecutiveFailures,
      unhealthyErrorRate: options.unhealthyErrorRate ?? STATS_DEFAULTS.unhealthyErrorRate,
      degradedErrorRate: options.degradedErrorRate ?? STATS_DEFAULTS.degradedErrorRate,
    };
  }

  /** Records one probe or call outcome in this instance's entry for the server. */
  record(observation: ServerObservation): void {
    const now = this.#now();
    const prior = this.#get(this.instanceId, observation.server_id);
    const base: StatsEntry = prior
      ? decayed(prior, now, this.halfLifeMs)
      : {
          instance_id: this.instanceId,
          server_id: observation.server_id,
          at: now,
          samples: 0,
          failures: 0,
          latency_weight: 0,
          latency_sum: 0,
          consecutive_failures: 0,
          auth_failing: false,
        };
    const latency = Math.min(Math.max(0, Number(observation.latency_ms) || 0), STATS_DEFAULTS.maxLatencyMs);
    const next: StatsEntry = { ...base, at: Math.max(base.at, now), samples: base.samples + 1 };
    if (observation.ok) {
      next.latency_weight += 1;
      next.latency_sum += latency;
      next.consecutive_failures = 0;
      next.auth_failing = false;
    } else {
      next.failures += 1;
      next.consecutive_failures += 1;
      next.auth_failing = observation.auth_failure === true;
    }
    this.#set(next);
  }

  /** The combined view of one server over all known instances, decayed to now. */
  view(serverId: string): ServerStatsView {
    const now = this.#now();
    let samples = 0;
    let failures = 0;
    let latencyWeight = 0;
    let latencySum = 0;
    let consecutive = 0;
    let newest: StatsEntry | undefined;
    // Summed in instance order (kept by #set), so instances holding the same entries compute the same view.
    for (const entry of this.#servers.get(serverId)?.values() ?? []) {
      const d = decayed(entry, now, this.halfLifeMs);
      samples += d.samples;
      failures += d.failures;
      latencyWeight += d.latency_weight;
      latencySum += d.latency_sum;
      consecutive = Math.max(consecutive, entry.consecutive_failures);
      if (!newest || entry.at > newest.at) newest = entry;
    }
    const errorRate = samples > 0 ? Math.min(1, failures / samples) : 0;
    const authFailing = newest?.auth_failing === true;
    const t = this.#thresholds;
    let health: ServerHealth;
    if (authFailing || consecutive >= t.unhealthyConsecutiveFailures) health = 'unhealthy';
    else if (samples < t.minSamples) health = 'unknown';
    else if (errorRate >= t.unhealthyErrorRate) health = 'unhealthy';
    else if (errorRate >= t.degradedErrorRate) health = 'degraded';
    else health = 'healthy';
    return {
      server_id: serverId,
      health,
      samples,
      error_rate: errorRate,
      latency_ms: latencyWeight > 1e-9 ? latencySum / latencyWeight : undefined,
      consecutive_failures: consecutive,
      auth_failing: authFailing,
      observed_at: newest?.at,
    };
  }

  /** Views of every server with at least one entry, sorted by server id. */
  views(): ServerStatsView[] {
    const ids = [...this.#servers.keys()].sort();
    return ids.map((id) => this.view(id));
  }

  /** Forgets every entry of a server (a deleted registration). */
  forget(serverId: string): void {
    this.#servers.delete(serverId);
  }

  /** A plain-JSON snapshot of every known entry, sorted, without entries that have decayed to nothing. */
  snapshot(): StatsSnapshot {
    const now = this.#now();
    const entries: StatsEntry[] = [];
    for (const [serverId, byInstance] of this.#servers) {
      for (const [instanceId, entry] of byInstance) {
        const f = decayFactor(now - entry.at, this.halfLifeMs);
        if (entry.samples * f < STATS_DEFAULTS.pruneBelow && entry.consecutive_failures === 0) {
          byInstance.delete(instanceId);
          continue;
        }
        entries.push({ ...entry });
      }
      if (byInstance.size === 0) this.#servers.delete(serverId);
    }
    entries.sort((a, b) =>
      a.server_id === b.server_id ? (a.instance_id < b.instance_id ? -1 : 1) : a.server_id < b.server_id ? -1 : 1,
    );
    return { version: 1, half_life_ms: this.halfLifeMs, entries };
  }

  /**
   * Merges another instance's snapshot: per (instance, server), the entry observed last wins (this instance's own
   * entries are never replaced). Malformed entries are skipped and counted; a snapshot that is not one is refused.
   */
  merge(snapshot: unknown): MergeResult {
    const s = snapshot as Partial<StatsSnapshot> | null;
    if (typeof s !== 'object' || s === null || s.version !== 1 || !Array.isArray(s.entries)) {
      return { accepted: 0, rejected: 1 };
    }
    if (s.entries.length > STATS_DEFAULTS.maxEntries) return { accepted: 0, rejected: s.entries.length };
    let accepted = 0;
    let rejected = 0;
    for (const raw of s.entries) {
      if (!validEntry(raw)) {
        rejected += 1;
        continue;
      }
      if (raw.instance_id === this.instanceId) continue;
      const current = this.#get(raw.instance_id, raw.server_id);
      if (current && !newer(raw, current)) continue;
      this.#set({
        instance_id: raw.instance_id,
        server_id: raw.server_id,
        at: raw.at,
        samples: raw.samples,
        failures: raw.failures,
        latency_weight: raw.latency_weight,
        latency_sum: raw.latency_sum,
        consecutive_failures: raw.consecutive_failures,
        auth_failing: raw.auth_failing,
      });
      accepted += 1;
    }
    return { accepted, rejected };
  }
}

/** Whether `a` supersedes `b` (later observation; on equal times the one with more samples, so merge commutes). */
function newer(a: StatsEntry, b: StatsEntry): boolean {
  if (a.at !== b.at) return a.at > b.at;
  if (a.samples !== b.samples) return a.samples > b.samples;
  return JSON.stringify(a) > JSON.stringify(b);
}
