// Blocklist matching: an Aho–Corasick automaton over case-folded UTF-16 code units, so hundreds of forbidden
// values cost one pass over the text, and offsets stay exact (no toLowerCase() of the whole text, which can
// change its length).
import { checkDeadline } from './errors.ts';
import type { Candidate } from './types.ts';

const foldTable = new Map<number, number>();

/** Case-folds one UTF-16 code unit (simple one-to-one folding; multi-unit lower-casings keep the original). */
function foldUnit(c: number): number {
  if (c < 128) return c >= 65 && c <= 90 ? c + 32 : c;
  let f = foldTable.get(c);
  if (f === undefined) {
    const lower = String.fromCharCode(c).toLowerCase();
    f = lower.length === 1 ? lower.charCodeAt(0) : c;
    foldTable.set(c, f);
  }
  return f;
}

/** A compiled blocklist: finds every listed value in a text. */
export interface Blocklist {
  /** Appends a BLOCKLIST candidate for every case-insensitive occurrence of a listed value. */
  findAll(text: string, out: Candidate[], deadline?: number): void;
}

/** Builds the automaton for the (trimmed, non-empty) values; undefined when there are none. */
export function compileBlocklist(values: readonly string[]): Blocklist | undefined {
  const words = [...new Set(values.map((v) => v.trim()).filter((v) => v.length > 0))];
  if (words.length === 0) return undefined;
  const next: Map<number, number>[] = [new Map()];
  const fail: number[] = [0];
  const outputs: number[][] = [[]];
  for (const w of words) {
    let node = 0;
    for (let i = 0; i < w.length; i++) {
      const c = foldUnit(w.charCodeAt(i));
      let to = next[node].get(c);
      if (to === undefined) {
        to = next.length;
        next.push(new Map());
        fail.push(0);
        outputs.push([]);
        next[node].set(c, to);
      }
      node = to;
    }
    outputs[node].push(w.length);
  }
  const queue: number[] = [];
  for (const to of next[0].values()) queue.push(to);
  for (let q = 0; q < queue.length; q++) {
    const node = queue[q];
    for (const [c, to] of next[node]) {
      let f = fail[node];
      while (f !== 0 && !next[f].has(c)) f = fail[f];
      const target = next[f].get(c);
      fail[to] = target !== undefined && target !== to ? target : 0;
      outputs[to] = outputs[to].concat(outputs[fail[to]]);
      queue.push(to);
    }
  }
  return {
    findAll(text, out, deadline) {
      let node = 0;
      for (let i = 0; i < text.length; i++) {
        if ((i & 0xffff) === 0xffff) checkDeadline(deadline);
        const c = foldUnit(text.charCodeAt(i));
        let to = next[node].get(c);
        while (to === undefined && node !== 0) {
          node = fail[node];
          to = next[node].get(c);
        }
        node = to ?? 0;
        for (const len of outputs[node]) {
          const start = i + 1 - len;
          out.push({
            type: 'BLOCKLIST',
            category: 'BLOCKLIST',
            start,
            end: i + 1,
            value: text.slice(start, i + 1),
            regexScore: 1,
            localAiScore: 1,
            blocklisted: true,
          });
        }
      }
    },
  };
}
