// Overlap resolution: a redactor must never nest placeholders, so at most one candidate covers any character.
import { localFinalScore } from './scoring.ts';
import type { Candidate } from './types.ts';

/**
 * Keeps a set of non-overlapping candidates, preferring blocklist hits, then the higher (local) final score,
 * then the longer span, then the earlier one; returns them in text order.
 */
export function resolveOverlaps(candidates: readonly Candidate[]): Candidate[] {
  if (candidates.length <= 1) return [...candidates];
  let ordered = true;
  for (let i = 1; i < candidates.length && ordered; i++) ordered = candidates[i].start >= candidates[i - 1].end;
  if (ordered) return [...candidates];
  const ranked = candidates.map((c) => ({ c, score: c.blocklisted ? 2 : localFinalScore(c) }));
  ranked.sort((a, b) => b.score - a.score || b.c.end - b.c.start - (a.c.end - a.c.start) || a.c.start - b.c.start);
  // Accepted spans kept sorted by start; a binary search finds the neighbours a new span could touch.
  const kept: Candidate[] = [];
  for (const { c } of ranked) {
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (kept[mid].start < c.start) lo = mid + 1;
      else hi = mid;
    }
    const before = lo > 0 ? kept[lo - 1] : undefined;
    const after = lo < kept.length ? kept[lo] : undefined;
    if (before && before.end > c.start) continue;
    if (after && after.start < c.end) continue;
    kept.splice(lo, 0, c);
  }
  return kept;
}
