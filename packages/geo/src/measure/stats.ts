/** z for a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

export interface Interval {
  value: number;
  low: number;
  high: number;
}

/** The Wilson score interval of k successes in n trials (Wilson 1927); n must be > 0. */
export function wilsonInterval(k: number, n: number, z = Z95): Interval {
  const p = k / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  return { value: p, low: Math.max(0, center - half), high: Math.min(1, center + half) };
}

/** A seeded 32-bit generator (mulberry32): the same seed gives the same stream on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a string, to derive a sub-seed (per scope) from a run's seed. */
export function hashSeed(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Poisson(1) CDF thresholds scaled to 32-bit integers: a draw is the number of thresholds below a uniform. */
const POISSON_THRESHOLDS = (() => {
  const out: number[] = [];
  let p = Math.exp(-1);
  let cumulative = p;
  for (let k = 1; k <= 12; k++) {
    out.push(Math.floor(cumulative * 4294967296));
    p /= k;
    cumulative += p;
  }
  return Uint32Array.from(out);
})();

/**
 * Replicate weights for a Poisson bootstrap: B independent Poisson(1) draws per observation from a seeded stream
 * (mulberry32, inversion against integer thresholds). One weight vector may serve several statistics and scopes.
 */
export class PoissonWeights {
  readonly replicates: number;
  readonly weights: Uint8Array;
  #state: number;

  constructor(seed: number, replicates = 1000) {
    this.replicates = replicates;
    this.weights = new Uint8Array(replicates);
    this.#state = seed >>> 0;
  }

  /** Draws the weights of the next observation. */
  next(): Uint8Array {
    const w = this.weights;
    const thresholds = POISSON_THRESHOLDS;
    let state = this.#state;
    for (let b = 0; b < this.replicates; b++) {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      const u = (t ^ (t >>> 14)) >>> 0;
      let k = 0;
      while (k < 12 && u >= thresholds[k]!) k++;
      w[b] = k;
    }
    this.#state = state;
    return w;
  }
}

/**
 * A streaming (Poisson) bootstrap of ratio statistics Σx / Σy (Hanley & MacGibbon 2006; Chamandy et al. 2012):
 * each observation gets an independent Poisson(1) weight in each of B replicates, so replicates are accumulated
 * as observations arrive and memory stays O(B × statistics), whatever the number of observations. Seeded: the
 * same observations in the same order give the same interval.
 */
export class PoissonBootstrap {
  readonly replicates: number;
  readonly #numerators: Float64Array[];
  readonly #denominators: Float64Array[];
  readonly #totals: { x: number; y: number }[];
  readonly #ownWeights: PoissonWeights | undefined;
  #weights: Uint8Array;

  /** With a seed, the bootstrap draws its own weights (`next()`); without, the caller passes them to `use()`. */
  constructor(statistics: number, seed: number | undefined, replicates = 1000) {
    this.replicates = replicates;
    this.#ownWeights = seed === undefined ? undefined : new PoissonWeights(seed, replicates);
    this.#weights = new Uint8Array(replicates);
    this.#numerators = Array.from({ length: statistics }, () => new Float64Array(replicates));
    this.#denominators = Array.from({ length: statistics }, () => new Float64Array(replicates));
    this.#totals = Array.from({ length: statistics }, () => ({ x: 0, y: 0 }));
  }

  /** Draws the replicate weights of the next observation (call once per observation, before `add`). */
  next(): void {
    this.#weights = this.#ownWeights!.next();
  }

  /** Uses weights drawn elsewhere for the next observation. */
  use(weights: Uint8Array): void {
    this.#weights = weights;
  }

  /** Adds the current observation's contribution x / y to statistic `index`. */
  add(index: number, x: number, y: number): void {
    const total = this.#totals[index]!;
    total.x += x;
    total.y += y;
    const num = this.#numerators[index]!;
    const den = this.#denominators[index]!;
    const w = this.#weights;
    const n = this.replicates;
    if (x === 0) {
      for (let b = 0; b < n; b++) den[b]! += w[b]! * y;
      return;
    }
    for (let b = 0; b < n; b++) {
      const weight = w[b]!;
      num[b]! += weight * x;
      den[b]! += weight * y;
    }
  }

  /** The statistic's point value and its 95% percentile interval; null without any observation (Σy = 0). */
  interval(index: number): Interval | null {
    const total = this.#totals[index]!;
    if (total.y === 0) return null;
    const value = total.x / total.y;
    const ratios: number[] = [];
    const num = this.#numerators[index]!;
    const den = this.#denominators[index]!;
    for (let b = 0; b < this.replicates; b++) if (den[b]! > 0) ratios.push(num[b]! / den[b]!);
    if (ratios.length === 0) return { value, low: value, high: value };
    ratios.sort((a, b) => a - b);
    const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.max(0, Math.floor(q * ratios.length)))]!;
    return { value, low: Math.min(value, at(0.025)), high: Math.max(value, at(0.975)) };
  }
}

/**
 * Two-proportion z-test (pooled): the two-sided p-value that rates k1/n1 and k2/n2 differ. Used to decide that a
 * change between runs, or between an experiment's arms, is real.
 */
export function twoProportionTest(k1: number, n1: number, k2: number, n2: number): { z: number; pValue: number } {
  const pooled = (k1 + k2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (se === 0) return { z: 0, pValue: 1 };
  const z = (k2 / n2 - k1 / n1) / se;
  return { z, pValue: 2 * (1 - normalCdf(Math.abs(z))) };
}

/** Φ(x), the standard normal CDF (Abramowitz & Stegun 7.1.26 through erf; error < 1.5e-7). */
export function normalCdf(x: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(x)) / Math.SQRT2);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}
