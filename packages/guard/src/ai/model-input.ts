import type { Candidate } from '../detect/types.ts';

/**
 * What a model may see of a detected value: its shape, not its content. Separators stay, each run of letters
 * or digits keeps its first and last character when it is longer than four, the rest becomes `*`.
 */
export function maskValueForModel(value: string): string {
  const clipped = value.length > 120 ? `${value.slice(0, 60)}…${value.slice(-20)}` : value;
  return clipped.replace(/[\p{L}\p{N}]+/gu, (run) =>
    run.length <= 4 ? '*'.repeat(run.length) : `${run[0]}${'*'.repeat(run.length - 2)}${run[run.length - 1]}`,
  );
}

/**
 * The text around candidate `index`, with every candidate replaced by its type and the one in question
 * marked, so the model judges from context without reading any detected value.
 */
export function contextForModel(text: string, candidates: readonly Candidate[], index: number, radius = 48): string {
  const target = candidates[index]!;
  const from = Math.max(0, target.start - radius);
  const to = Math.min(text.length, target.end + radius);
  let out = '';
  let cursor = from;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i]!;
    if (c.end <= from || c.start >= to) continue;
    const start = Math.max(c.start, from);
    if (start < cursor) continue;
    out += text.slice(cursor, start) + (i === index ? '<<CANDIDATE>>' : `[${c.type}]`);
    cursor = Math.min(c.end, to);
  }
  out += text.slice(cursor, to);
  return out.replace(/\s+/g, ' ');
}
