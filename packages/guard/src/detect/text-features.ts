import { hashStep, hashWord, isWordCode, WORD_TABLE } from './chars.ts';

// Small text measurements shared by the detectors and the scorer: entropy, character classes, placeholders,
// context words near a match.

const counts = new Int32Array(256);

/**
 * Shannon entropy of the string in bits per character (0 for a repeated character, ~5.9 for random base64).
 * Code units above 0xFF share buckets by their low byte, which is plenty for telling random from repetitive.
 */
export function shannonEntropy(s: string): number {
  const n = s.length;
  if (n === 0) return 0;
  for (let i = 0; i < n; i++) counts[s.charCodeAt(i) & 0xff]++;
  let h = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i) & 0xff;
    const k = counts[c];
    if (k > 0) {
      const p = k / n;
      h -= p * Math.log2(p);
      counts[c] = 0;
    }
  }
  return h;
}

/** Number of character classes present: lower-case, upper-case, digits, other (symbols). */
export function charClassCount(s: string): number {
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let other = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

/** Words that mark a value as a stand-in ("your-api-key-here", "sk_test_PLACEHOLDER", "REDACTED"). */
const PLACEHOLDER_MARKERS = new Set([
  'your',
  'yours',
  'example',
  'examples',
  'placeholder',
  'changeme',
  'change',
  'replace',
  'redacted',
  'dummy',
  'sample',
  'insert',
  'todo',
  'fixme',
  'fake',
  'here',
  'masked',
  'removed',
  'omitted',
  'notreal',
  'demo',
  'xxx',
  'xxxx',
  'tbd',
  'goes',
  'enter',
  'put',
]);
/** Words that fill a placeholder out ("YOUR_API_KEY") without marking one on their own. */
const PLACEHOLDER_FILLERS = new Set([
  'my',
  'api',
  'key',
  'keys',
  'token',
  'secret',
  'password',
  'pass',
  'pwd',
  'value',
  'test',
  'me',
  'the',
  'a',
  'db',
  'access',
  'auth',
  'private',
  'real',
  'actual',
  'new',
  'live',
  'prod',
  'dev',
  'user',
  'app',
  'env',
  'openai',
  'stripe',
  'github',
  'slack',
  'aws',
]);

const PLACEHOLDER_EXACT = new Set([
  'password',
  'passwd',
  'secret',
  'token',
  'apikey',
  'api_key',
  'null',
  'none',
  'nil',
  'undefined',
  'true',
  'false',
  'empty',
  'test',
  'tbd',
  'n/a',
  'na',
  'string',
  'required',
  'optional',
  'value',
  'default',
  'pass',
  'pwd',
  'hidden',
  'secret123',
  'password123',
]);

/** Cheap pre-test: any marker word as a substring (case-insensitive). */
const MARKER_HINT = new RegExp([...PLACEHOLDER_MARKERS].join('|'), 'i');

/** Lower-cased letter segments of `v`: split at non-letters and at camelCase humps. */
function letterSegments(v: string): string[] {
  const out: string[] = [];
  let seg = '';
  let prevLower = false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    const lower = c >= 97 && c <= 122;
    const upper = c >= 65 && c <= 90;
    if ((lower || upper) && !(upper && prevLower)) seg += String.fromCharCode(lower ? c : c + 32);
    else {
      if (seg) out.push(seg);
      seg = upper ? String.fromCharCode(c + 32) : '';
    }
    prevLower = lower;
  }
  if (seg) out.push(seg);
  return out;
}

function maskedShare(v: string): number {
  let masked = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    // * x X • # . _ - (and the bullet/ellipsis code points)
    if (
      c === 42 ||
      c === 120 ||
      c === 88 ||
      c === 35 ||
      c === 46 ||
      c === 95 ||
      c === 45 ||
      c === 0x2022 ||
      c === 0x2026 ||
      c === 0x25cf
    )
      masked++;
  }
  return masked / v.length;
}

/**
 * True for values that stand in for a secret rather than being one: template references (`${X}`, `{{ x }}`,
 * `<x>`, `%(x)s`, `$X`), masked values (`****`, `xxxx-xxxx`), values made mostly of placeholder words
 * ("your-api-key-here", "REDACTED", "changeme"), and long runs of one repeated character. A real passphrase that
 * merely contains such a word ("zen-sizzle-hidden-39") is not a placeholder.
 */
export function isPlaceholderValue(value: string): boolean {
  const v = value.trim();
  if (v.length === 0) return true;
  const first = v.charCodeAt(0);
  // $VAR, ${VAR}, <VAR>, {{VAR}}, [VAR], %(VAR)s, %VAR%
  if (first === 36 || first === 60 || first === 123 || first === 91 || first === 37) return true;
  if (v.length <= 12 && PLACEHOLDER_EXACT.has(v.toLowerCase())) return true;
  if (first === 112 || first === 111 || first === 101 || first === 80 || first === 79 || first === 69) {
    const lower = v.toLowerCase();
    if (lower.startsWith('process.env') || lower.startsWith('os.environ') || lower.startsWith('env(')) return true;
  }
  if (v.length >= 4 && maskedShare(v) >= 0.6) return true;
  if (v.includes('...') || v.includes('…')) return true;
  // Stand-ins put their marker words up front or at the end; long random bodies are only sampled there.
  if (!(v.length > 96 ? MARKER_HINT.test(v.slice(0, 48)) || MARKER_HINT.test(v.slice(-48)) : MARKER_HINT.test(v))) {
    return repeatedRun(v);
  }
  const segments = letterSegments(v);
  let marked = false;
  let covered = 0;
  for (const s of segments) {
    if (PLACEHOLDER_MARKERS.has(s) || (s.length >= 3 && /^x+$/.test(s))) {
      marked = true;
      covered += s.length;
    } else if (PLACEHOLDER_FILLERS.has(s)) covered += s.length;
  }
  if (marked && covered >= v.length * 0.4) return true;
  return repeatedRun(v);
}

/** One character repeated over most of the value (aaaaaaaa…, 00000000). */
function repeatedRun(v: string): boolean {
  let run = 1;
  let maxRun = 1;
  for (let i = 1; i < v.length; i++) {
    if (v.charCodeAt(i) === v.charCodeAt(i - 1)) {
      run++;
      if (run > maxRun) maxRun = run;
    } else run = 1;
  }
  return v.length >= 6 && maxRun >= Math.max(6, v.length * 0.5);
}

/** True for 8-4-4-4-12 hex UUIDs. */
export function isUuid(v: string): boolean {
  if (v.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = v.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
    } else if (!isHexCode(c)) return false;
  }
  return true;
}

/** True when every character is a hex digit. */
export function isHex(v: string): boolean {
  if (v.length === 0) return false;
  for (let i = 0; i < v.length; i++) if (!isHexCode(v.charCodeAt(i))) return false;
  return true;
}

/** True for 0-9, a-f, A-F. */
export function isHexCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** Context words with their polarity (+1 confirms a type, -1 says the match is something else), keyed by hashWord. */
export type Lexicon = ReadonlyMap<number, number>;

/** Builds a lexicon; a word in both lists counts as positive. */
export function lexicon(positive: readonly string[], negative: readonly string[]): Lexicon {
  const m = new Map<number, number>();
  for (const w of negative) m.set(hashWord(w), -1);
  for (const w of positive) m.set(hashWord(w), 1);
  return m;
}

function isContextWordCode(c: number): boolean {
  return WORD_TABLE[c] === 1 || c === 35; // '#' so "ss#" stays one word
}

function hashRange(text: string, s: number, e: number): number {
  let h = 0;
  for (let k = s; k < e; k++) h = hashStep(h, text.charCodeAt(k));
  return h;
}

/** Polarity of the word text[s, e): looked up whole (case-insensitively), then by its snake_case parts from the last. */
function polarityOfRange(text: string, s: number, e: number, lex: Lexicon): number {
  let h = 0;
  let snake = false;
  for (let k = s; k < e; k++) {
    const c = text.charCodeAt(k);
    if (c === 95) snake = true;
    h = hashStep(h, c);
  }
  const p = lex.get(h);
  if (p !== undefined) return p;
  if (!snake) return 0;
  // customer_phone, FIRMWARE_BASELINE, order_id: the last part that means something.
  let partEnd = e;
  for (let k = e - 1; k >= s - 1; k--) {
    if (k >= s && text.charCodeAt(k) !== 95) continue;
    if (partEnd > k + 1) {
      const q = lex.get(hashRange(text, k + 1, partEnd));
      if (q !== undefined) return q;
    }
    partEnd = k;
  }
  return 0;
}

const NUMBER_WORDS = new Set(['number', 'nummer', 'numero', 'número', 'numéro', 'no', 'nr', 'num'].map(hashWord));

/**
 * Polarity of the lexicon word nearest to `start` among the words in the `width` characters before it on the
 * same line (`client_ip` is looked up whole, then by its parts); 0 when none is in the lexicon. A bare "number"
 * takes the polarity of a negative word right before it ("customer number", "numéro de suivi" reads the nearer
 * "suivi" first anyway).
 */
export function polarityBefore(text: string, start: number, width: number, lex: Lexicon): number {
  const limit = start > width ? start - width : 0;
  let j = start;
  while (j > limit) {
    const c = text.charCodeAt(j - 1);
    if (c === 10) return 0;
    if (!isContextWordCode(c)) {
      j--;
      continue;
    }
    const we = j;
    while (j > limit && isContextWordCode(text.charCodeAt(j - 1))) j--;
    const p = polarityOfRange(text, j, we, lex);
    if (p > 0 && NUMBER_WORDS.has(hashRange(text, j, we))) {
      return previousWordPolarity(text, j, limit, lex) < 0 ? -1 : p;
    }
    if (p !== 0) return p;
  }
  return 0;
}

function previousWordPolarity(text: string, j: number, limit: number, lex: Lexicon): number {
  let k = j;
  while (k > limit && !isContextWordCode(text.charCodeAt(k - 1)) && text.charCodeAt(k - 1) !== 10) k--;
  const we = k;
  while (k > limit && isContextWordCode(text.charCodeAt(k - 1))) k--;
  return we > k ? polarityOfRange(text, k, we, lex) : 0;
}

/** Polarity of the first lexicon word among the words in the `width` characters after `end` on the same line. */
export function polarityAfter(text: string, end: number, width: number, lex: Lexicon): number {
  const limit = Math.min(text.length, end + width);
  let j = end;
  while (j < limit) {
    const c = text.charCodeAt(j);
    if (c === 10) return 0;
    if (!isContextWordCode(c)) {
      j++;
      continue;
    }
    const ws = j;
    while (j < limit && isContextWordCode(text.charCodeAt(j))) j++;
    const p = polarityOfRange(text, ws, j, lex);
    if (p !== 0) return p;
  }
  return 0;
}

/** Polarity of the last lexicon word in a short label such as a CSV header cell. */
export function polarityOfLabel(label: string, lex: Lexicon): number {
  return polarityBefore(label, label.length, label.length, lex);
}

/** Where a text's first line ends and which delimiters it contains (computed once per text, on first use). */
export interface CsvHeader {
  readonly end: number;
  readonly delimiters: readonly number[];
}

const DELIMITERS = [44, 59, 9, 124]; // , ; tab |

/** Finds the text's first line and the delimiters (`,` `;` tab `|`) it uses; cells are cut only when asked for. */
export function parseCsvHeader(text: string): CsvHeader {
  const end = text.indexOf('\n');
  if (end < 0) return { end: -1, delimiters: [] };
  const delimiters: number[] = [];
  for (const d of DELIMITERS) {
    for (let i = 0; i < end; i++) {
      if (text.charCodeAt(i) === d) {
        delimiters.push(d);
        break;
      }
    }
  }
  return { end, delimiters };
}

function headerCell(text: string, header: CsvHeader, delimiter: number, column: number): string | undefined {
  let from = 0;
  for (let c = 0; c < column; c++) {
    const at = text.indexOf(String.fromCharCode(delimiter), from);
    if (at < 0 || at >= header.end) return undefined;
    from = at + 1;
  }
  let to = text.indexOf(String.fromCharCode(delimiter), from);
  if (to < 0 || to > header.end) to = header.end;
  return text.slice(from, to).trim().replace(/^"|"$/g, '');
}

/**
 * The header cell (lower-cased) of the CSV/TSV column that contains `start`, when the text's first line is a
 * delimited header and `start` sits in a later row using the same delimiter; undefined otherwise. Lets "ssn" or
 * "phone" in a header be context for a bare number three lines down.
 */
export function csvHeaderFor(text: string, header: CsvHeader, start: number): string | undefined {
  if (header.delimiters.length === 0 || start <= header.end) return undefined;
  let lineStart = start;
  const limit = start > 4096 ? start - 4096 : 0;
  while (lineStart > limit && text.charCodeAt(lineStart - 1) !== 10) lineStart--;
  if (lineStart === limit && lineStart > 0) return undefined;
  for (const delimiter of header.delimiters) {
    let column = 0;
    let quoted = false;
    for (let i = lineStart; i < start; i++) {
      const c = text.charCodeAt(i);
      if (c === 34) quoted = !quoted;
      else if (c === delimiter && !quoted) column++;
    }
    if (column === 0) {
      // The match opens its row: the row must still use this delimiter somewhere after it.
      let k = start;
      while (k < text.length && k - start < 4096 && text.charCodeAt(k) !== 10 && text.charCodeAt(k) !== delimiter) k++;
      if (text.charCodeAt(k) !== delimiter) continue;
    }
    return headerCell(text, header, delimiter, column);
  }
  return undefined;
}
