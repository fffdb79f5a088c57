// Overlap resolution: a redactor must never nest placeholders, so at most one candidate covers any character;
// and overlaps must never shrink what is redacted, so the kept spans grow to cover every overlapping detection.
import { localFinalScore } from './scoring.ts';
import type { Candidate } from './types.ts';

interface Ranked<T> {
  item: T;
  start: number;
  end: number;
  rank: number;
  /** True when the item is a detection in its own right, so the text it covers must stay covered. */
  counts: boolean;
}

/** A kept item and the span it redacts (its own span, widened over the detections it won against). */
export interface Covering<T> {
  item: T;
  start: number;
  end: number;
}

function better<T>(a: Ranked<T>, b: Ranked<T>): number {
  return b.rank - a.rank || b.end - b.start - (a.end - a.start) || a.start - b.start;
}

/**
 * Keeps non-overlapping items, preferring the higher rank, then the longer span, then the earlier one, and
 * widens the kept spans so that together they cover every overlapping item that `counts` (the union of every
 * detection, whichever won the label): a gap between two kept items goes to the left one. Returns them in text
 * order. Items are grouped into chains of overlapping spans first, so the greedy choice only ever compares
 * neighbours: O(n log n) for the usual short chains.
 */
export function pickNonOverlapping<T>(items: readonly Ranked<T>[]): Covering<T>[] {
  const byStart = [...items].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Covering<T>[] = [];
  let i = 0;
  while (i < byStart.length) {
    let j = i + 1;
    let chainEnd = byStart[i].end;
    while (j < byStart.length && byStart[j].start < chainEnd) {
      if (byStart[j].end > chainEnd) chainEnd = byStart[j].end;
      j++;
    }
    if (j === i + 1) out.push({ item: byStart[i].item, start: byStart[i].start, end: byStart[i].end });
    else coverChain(byStart.slice(i, j), out);
    i = j;
  }
  return out;
}

/** Resolves one chain of overlapping items (sorted by start) into `out`. */
function coverChain<T>(chain: Ranked<T>[], out: Covering<T>[]): void {
  const kept: Ranked<T>[] = [];
  for (const c of [...chain].sort(better)) if (kept.every((k) => k.end <= c.start || c.end <= k.start)) kept.push(c);
  kept.sort((a, b) => a.start - b.start);
  // The covered segments: the union of the kept spans and of every dropped item that counts (chain is by start).
  const segments: [number, number][] = [];
  for (const c of chain) {
    if (!c.counts && !kept.includes(c)) continue;
    const last = segments[segments.length - 1];
    if (last && c.start <= last[1]) last[1] = Math.max(last[1], c.end);
    else segments.push([c.start, c.end]);
  }
  let s = 0;
  for (let k = 0; k < kept.length; k++) {
    const own = kept[k];
    while (segments[s][1] < own.end) s++;
    const [segStart, segEnd] = segments[s];
    const prev = kept[k - 1];
    const next = kept[k + 1];
    const start = prev && prev.end > segStart ? own.start : segStart;
    const end = next && next.start < segEnd ? next.start : segEnd;
    out.push({ item: own.item, start: Math.min(start, own.start), end: Math.max(end, own.end) });
  }
}

/** The candidate widened to [start, end) of `text` (unchanged when the span is its own). */
export function widenCandidate(text: string, c: Candidate, start: number, end: number): Candidate {
  return start === c.start && end === c.end ? c : { ...c, start, end, value: text.slice(start, end) };
}

/**
 * A URL that overlaps another detection (a token in its path, credentials in its authority) yields to it: the
 * secret keeps its own type and span, the rest of the URL is left as it is.
 */
function withoutContainerUrls(candidates: readonly Candidate[]): readonly Candidate[] {
  let urls = 0;
  for (const c of candidates) if (c.type === 'URL' && !c.blocklisted) urls++;
  if (urls === 0 || urls === candidates.length) return candidates;
  return candidates.filter(
    (c) =>
      c.type !== 'URL' ||
      c.blocklisted ||
      !candidates.some((o) => o !== c && o.type !== 'URL' && o.start < c.end && c.start < o.end),
  );
}

/**
 * Keeps a set of non-overlapping candidates, preferring blocklist hits, then the higher (local) final score,
 * then the longer span, then the earlier one; the kept ones are widened over the overlapping candidates that
 * are detections (blocklist hits, or a local final score at or above `allowThreshold`), so no detected
 * character is left in clear whichever candidate wins the label. Returns them in text order: `all` itself when
 * nothing overlaps and nothing is dropped (the scanner hands over an array it no longer uses).
 */
export function resolveOverlaps(text: string, all: readonly Candidate[], allowThreshold = 0): Candidate[] {
  const candidates = withoutContainerUrls(all);
  let ordered = true;
  for (let i = 1; i < candidates.length && ordered; i++) ordered = candidates[i].start >= candidates[i - 1].end;
  if (ordered) return candidates === all ? (all as Candidate[]) : [...candidates];
  return pickNonOverlapping(
    candidates.map((c) => {
      const rank = c.blocklisted ? 2 : localFinalScore(c);
      return { item: c, start: c.start, end: c.end, rank, counts: c.blocklisted || rank >= allowThreshold };
    }),
  ).map((k) => widenCandidate(text, k.item, k.start, k.end));
}
