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

const E_INV = Math.exp(-1);

/** A Poisson(1) draw by inversion. */
function poissonOne(random: () => number): number {
  const u = random();
  let k = 0;
  let p = E_INV;
  let cumulative = p;
  while (u > cumulative && k < 20) {
    k++;
    p /= k;
    cumulative += p;
  }
  return k;
}

/**
 * A streaming (Poisson) bootstrap of ratio statistics Σx / Σy (Hanley & MacGibbon 2006; Chamandy et al. 2012):
 * each observation gets an independent Poisson(1) weight in each of B replicates, so replicates are accumulated
 * as observations arrive and memory stays O(B × statistics), whatever the number of observations. Seeded: the
 * same observations in the same order give the same interval.
 */
export class PoissonBootstrap {
  readonly replicates: number;
  readonly #random: () => number;
  readonly #weights: Float64Array;
  readonly #numerators: Float64Array[];
  readonly #denominators: Float64Array[];
  readonly #totals: { x: number; y: number }[];

  constructor(statistics: number, seed: number, replicates = 1000) {
    this.replicates = replicates;
    this.#random = seededRandom(seed);
    this.#weights = new Float64Array(replicates);
    this.#numerators = Array.from({ length: statistics }, () => new Float64Array(replicates));
    this.#denominators = Array.from({ length: statistics }, () => new Float64Array(replicates));
    this.#totals = Array.from({ length: statistics }, () => ({ x: 0, y: 0 }));
  }

  /** Draws the replicate weights of the next observation (call once per observation, before `add`). */
  next(): void {
    for (let b = 0; b < this.replicates; b++) this.#weights[b] = poissonOne(this.#random);
  }

  /** Adds the current observation's contribution x / y to statistic `index`. */
  add(index: number, x: number, y: number): void {
    const total = this.#totals[index]!;
    total.x += x;
    total.y += y;
    const num = this.#numerators[index]!;
    const den = this.#denominators[index]!;
    const w = this.#weights;
    for (let b = 0; b < this.replicates; b++) {
      const weight = w[b]!;
      if (weight !== 0) {
        num[b]! += weight * x;
        den[b]! += weight * y;
      }
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
