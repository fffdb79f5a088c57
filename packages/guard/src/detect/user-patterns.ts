// User patterns: any stored pattern that is not an unmodified built-in, compiled with re2js (Go/RE2 syntax,
// linear-time matching, so no stored regex can cause catastrophic backtracking).
import { RE2JS, RE2JSSyntaxException } from 're2js';
import { checkDeadline } from './errors.ts';
import { evidence } from './scan-state.ts';
import { localAiScoreOf, regexScoreOf } from './scoring.ts';
import { isPlaceholderValue, shannonEntropy } from './text-features.ts';
import type { Candidate, PatternSpec } from './types.ts';

/** Longest regex source accepted. */
export const MAX_USER_REGEX_LENGTH = 4096;
/**
 * Largest compiled program accepted (re2js `programSize()`, RE2's measure of a regex's cost): matching time
 * grows with it for every character scanned. The largest built-in (SLACK_TOKEN) is 987.
 */
export const MAX_USER_REGEX_PROGRAM = 2000;
/**
 * How often a repetition may repeat an operand that itself holds an unbounded repetition (`*`, `+`, `{n,}`),
 * multiplied along the nesting: each copy stays alive at once while matching, so `(.*a){20}` costs twenty
 * scans per character. `(.*a){10}` is accepted, `(.*a){11}` and `((.*a){4}){3}` are not.
 */
export const MAX_NESTED_REPEAT = 10;
/** Matches one user pattern may report per text. */
const MAX_MATCHES_PER_PATTERN = 10_000;
/** Texts longer than this are matched in overlapping windows, with a deadline check between windows. */
const WINDOW = 256 * 1024;
const WINDOW_OVERLAP = 4 * 1024;

function excerpt(s: string): string {
  const flat = s.replace(/\s+/g, ' ');
  return flat.length > 40 ? `${flat.slice(0, 40)}…` : flat;
}

/**
 * Compiles a Go/RE2 regular expression with re2js, or throws an Error whose message says what is wrong (with at
 * most a 40-character excerpt of the offending part, never the whole input).
 */
export function compileUserRegex(regex: string): RE2JS {
  if (typeof regex !== 'string' || regex.length === 0) throw new Error('Regex must be a non-empty string');
  if (regex.length > MAX_USER_REGEX_LENGTH) {
    throw new Error(`Regex is too long: ${regex.length} characters (at most ${MAX_USER_REGEX_LENGTH})`);
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(regex);
  } catch (error) {
    if (error instanceof RE2JSSyntaxException) {
      const near = error.input ? ` near \`${excerpt(error.input)}\`` : '';
      throw new Error(`Invalid regular expression (Go/RE2 syntax): ${error.error}${near}`);
    }
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`Invalid regular expression (Go/RE2 syntax): ${excerpt(message)}`);
  }
  const size = re.programSize();
  if (size > MAX_USER_REGEX_PROGRAM) {
    throw new Error(
      `Regex is too costly: its compiled program has ${size} instructions (at most ${MAX_USER_REGEX_PROGRAM}); use smaller repetition counts`,
    );
  }
  const nested = nestedRepeatFactor(regex);
  if (nested > MAX_NESTED_REPEAT) {
    throw new Error(
      `Regex is too costly: it repeats an unbounded repetition (*, +, {n,}) ${nested} times (at most ${MAX_NESTED_REPEAT})`,
    );
  }
  return re;
}

interface RepeatFrame {
  /** Largest factor of any atom so far in this group. */
  max: number;
  /** Factor of the last atom (what a quantifier applies to); -1 when there is none. */
  last: number;
}

/**
 * For a regex that already compiles (Go/RE2 syntax): the largest number of copies in which any unbounded
 * repetition (`*`, `+`, `{n,}`) is repeated by the counted repetitions around it (1 when none is, 0 when the
 * regex has no unbounded repetition).
 */
export function nestedRepeatFactor(regex: string): number {
  const stack: RepeatFrame[] = [{ max: 0, last: -1 }];
  let top = stack[0]!;
  const atom = (factor: number) => {
    top.last = factor;
    if (factor > top.max) top.max = factor;
  };
  const quantify = (min: number, max: number | undefined) => {
    if (top.last < 0) return;
    let factor = top.last;
    if (max === undefined) factor = factor > 0 ? factor * Math.max(min, 1) : 1;
    else if (factor > 0) factor *= Math.max(max, 1);
    atom(factor);
  };
  let i = 0;
  while (i < regex.length) {
    const c = regex[i]!;
    if (c === '\\') {
      const next = regex[i + 1];
      if (next === 'Q') {
        const end = regex.indexOf('\\E', i + 2);
        i = end < 0 ? regex.length : end + 2;
        atom(0);
        continue;
      }
      i += 2;
      if ((next === 'p' || next === 'P' || next === 'x') && regex[i] === '{')
        i = Math.max(i + 1, regex.indexOf('}', i) + 1);
      else if (next === 'p' || next === 'P') i += 1;
      atom(0);
    } else if (c === '[') {
      i = classEnd(regex, i);
      atom(0);
    } else if (c === '(') {
      if (regex[i + 1] === '?' && /^\(\?[a-zA-Z-]*\)/.test(regex.slice(i, i + 12))) {
        i = regex.indexOf(')', i) + 1; // a flag group such as (?i) holds no operand
        continue;
      }
      top = { max: 0, last: -1 };
      stack.push(top);
      i++;
    } else if (c === ')') {
      const group = stack.length > 1 ? stack.pop()! : top;
      top = stack[stack.length - 1]!;
      atom(group.max);
      i++;
    } else if (c === '|') {
      top.last = -1;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      if (c !== '?') quantify(c === '+' ? 1 : 0, undefined);
      i++;
      if (regex[i] === '?') i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(regex.slice(i, i + 24));
      if (m) {
        const min = Number(m[1]);
        quantify(min, m[2] === undefined ? min : m[3] === '' ? undefined : Number(m[3]));
        i += m[0].length;
        if (regex[i] === '?') i++;
      } else {
        atom(0);
        i++;
      }
    } else {
      atom(0);
      i++;
    }
  }
  let worst = 0;
  for (const frame of stack) worst = Math.max(worst, frame.max);
  return worst;
}

/** Index just past the character class that starts at `start` (`[`), in Go syntax. */
function classEnd(regex: string, start: number): number {
  let i = start + 1;
  if (regex[i] === '^') i++;
  if (regex[i] === ']') i++;
  while (i < regex.length && regex[i] !== ']') {
    if (regex[i] === '\\') i += 2;
    else if (regex[i] === '[' && regex[i + 1] === ':') {
      const end = regex.indexOf(':]', i + 2);
      i = end < 0 ? i + 1 : end + 2;
    } else i++;
  }
  return i + 1;
}

/** A stored pattern compiled for matching. */
export interface UserPattern {
  readonly name: string;
  readonly category: string;
  readonly re: RE2JS;
  readonly groups: number;
  readonly base: number;
}

/** Starting risk of a user pattern's match, by its category: credentials and injections block, the rest mask. */
export function userPatternBase(category: string): number {
  switch (category.toUpperCase()) {
    case 'SECRET':
    case 'INJECTION':
      return 0.95;
    case 'PII':
      return 0.7;
    default:
      return 0.6;
  }
}

/** Compiles a stored pattern as a user pattern; the error names the pattern when its regex is invalid. */
export function compileUserPattern(spec: PatternSpec): UserPattern {
  let re: RE2JS;
  try {
    re = compileUserRegex(spec.regex);
  } catch (error) {
    throw new Error(`Pattern ${spec.name}: ${(error as Error).message}`);
  }
  const category = spec.category || 'PII';
  return { name: spec.name, category, re, groups: re.groupCount(), base: userPatternBase(category) };
}

function pushMatch(p: UserPattern, text: string, start: number, end: number, out: Candidate[]): void {
  const value = text.slice(start, end);
  const secret = p.category.toUpperCase() === 'SECRET';
  const h = secret ? shannonEntropy(value) : 0;
  const ev = evidence({
    placeholder: secret && isPlaceholderValue(value),
    strength: secret ? Math.min(1, Math.max(0, (h - 2.5) / 2)) : 0.7,
  });
  out.push({
    type: p.name,
    category: p.category,
    start,
    end,
    value,
    regexScore: regexScoreOf(p.base, ev),
    localAiScore: localAiScoreOf(p.base, ev),
    blocklisted: false,
  });
}

/**
 * Appends the non-empty matches of `p` in `text` to `out` (the first capturing group that took part, when the
 * regex has groups; else the whole match). Checks the deadline every 256 matches and between windows.
 */
export function runUserPattern(p: UserPattern, text: string, out: Candidate[], deadline?: number): void {
  if (text.length <= WINDOW) {
    collect(p, text, 0, 0, text.length, out, deadline, undefined);
    return;
  }
  let full: ReturnType<RE2JS['matcher']> | undefined;
  for (let ws = 0; ws < text.length; ws += WINDOW) {
    checkDeadline(deadline);
    const from = ws > WINDOW_OVERLAP ? ws - WINDOW_OVERLAP : 0;
    const to = Math.min(text.length, ws + WINDOW + WINDOW_OVERLAP);
    full ??= p.re.matcher(text);
    collect(
      p,
      text,
      from,
      ws,
      Math.min(text.length, ws + WINDOW),
      out,
      deadline,
      to < text.length ? { to, full } : undefined,
    );
  }
}

interface WindowEdge {
  to: number;
  full: ReturnType<RE2JS['matcher']>;
}

/** Finds matches starting in [acceptFrom, acceptTo) within text[from, edge.to). */
function collect(
  p: UserPattern,
  text: string,
  from: number,
  acceptFrom: number,
  acceptTo: number,
  out: Candidate[],
  deadline: number | undefined,
  edge: WindowEdge | undefined,
): void {
  const slice = from === 0 && edge === undefined ? text : text.slice(from, edge ? edge.to : text.length);
  const m = p.re.matcher(slice);
  let pos = acceptFrom - from;
  let count = 0;
  while (pos <= slice.length && m.find(pos)) {
    let ms = m.start() + from;
    let me = m.end() + from;
    if (ms >= acceptTo) break;
    pos = m.end() > m.start() ? m.end() : m.start() + 1;
    if (edge && me === edge.to && edge.full.find(ms)) {
      // The match touches the window's end: take its true extent from the whole text.
      ms = edge.full.start();
      me = edge.full.end();
      if (ms >= acceptTo) break;
      pos = Math.max(pos, me - from);
      if (p.groups > 0) {
        const g = firstGroup(edge.full, p.groups);
        if (g) [ms, me] = g;
      }
    } else if (p.groups > 0) {
      const g = firstGroup(m, p.groups);
      if (g) [ms, me] = [g[0] + from, g[1] + from];
    }
    if (me > ms) pushMatch(p, text, ms, me, out);
    if (++count % 256 === 0) checkDeadline(deadline);
    if (count >= MAX_MATCHES_PER_PATTERN) break;
  }
}

function firstGroup(m: ReturnType<RE2JS['matcher']>, groups: number): [number, number] | undefined {
  for (let g = 1; g <= groups; g++) {
    const s = m.start(g);
    if (s >= 0) return [s, m.end(g)];
  }
  return undefined;
}
