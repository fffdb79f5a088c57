// Overlap resolution: a redactor must never nest placeholders, so at most one candidate covers any character.
import { localFinalScore } from './scoring.ts';
import type { Candidate } from './types.ts';

interface Ranked<T> {
  item: T;
  start: number;
  end: number;
  rank: number;
}

function better<T>(a: Ranked<T>, b: Ranked<T>): number {
  return b.rank - a.rank || b.end - b.start - (a.end - a.start) || a.start - b.start;
}

/**
 * Keeps non-overlapping items, preferring the higher rank, then the longer span, then the earlier one; returns
 * them in text order. Items are grouped into chains of overlapping spans first, so the greedy choice only ever
 * compares neighbours: O(n log n) for the usual short chains.
 */
export function pickNonOverlapping<T>(items: readonly Ranked<T>[]): T[] {
  const byStart = [...items].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Ranked<T>[] = [];
  let i = 0;
  while (i < byStart.length) {
    let j = i + 1;
    let chainEnd = byStart[i].end;
    while (j < byStart.length && byStart[j].start < chainEnd) {
      if (byStart[j].end > chainEnd) chainEnd = byStart[j].end;
      j++;
    }
    if (j === i + 1) out.push(byStart[i]);
    else {
      const chain = byStart.slice(i, j).sort(better);
      const kept: Ranked<T>[] = [];
      for (const c of chain) if (kept.every((k) => k.end <= c.start || c.end <= k.start)) kept.push(c);
      kept.sort((a, b) => a.start - b.start);
      for (const k of kept) out.push(k);
    }
    i = j;
  }
  return out.map((r) => r.item);
}

/**
 * Keeps a set of non-overlapping candidates, preferring blocklist hits, then the higher (local) final score,
 * then the longer span, then the earlier one; returns them in text order.
 */
export function resolveOverlaps(candidates: readonly Candidate[]): Candidate[] {
  let ordered = true;
  for (let i = 1; i < candidates.length && ordered; i++) ordered = candidates[i].start >= candidates[i - 1].end;
  if (ordered) return [...candidates];
  return pickNonOverlapping(
    candidates.map((c) => ({ item: c, start: c.start, end: c.end, rank: c.blocklisted ? 2 : localFinalScore(c) })),
  );
}
