import { foldCase, hashStep, hashWord, isCjkCode, isLatinWordCode, WORD_TABLE } from './chars.ts';

// Small text measurements shared by the detectors and the scorer: entropy, character classes, placeholders,
// context words near a match.

const counts = new Int32Array(256);
/** Bucket indexes seen in the current string, so the sum visits each distinct bucket once. */
const seen = new Uint8Array(256);

/** K_LOG2K[k] = k·log2(k) for the counts of short strings (longer ones compute it). */
const K_LOG2K = Float64Array.from({ length: 1025 }, (_, k) => (k === 0 ? 0 : k * Math.log2(k)));

/**
 * Shannon entropy of the string in bits per character (0 for a repeated character, ~5.9 for random base64).
 * Code units above 0xFF share buckets by their low byte, which is plenty for telling random from repetitive.
 * Computed as log2(n) − Σ k·log2(k) / n over the bucket counts k (the same quantity as −Σ p·log2(p), with one
 * logarithm per string instead of one per distinct character).
 */
export function shannonEntropy(s: string): number {
  const n = s.length;
  if (n === 0) return 0;
  let distinct = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i) & 0xff;
    if (counts[c]++ === 0) seen[distinct++] = c;
  }
  let sum = 0;
  for (let d = 0; d < distinct; d++) {
    const c = seen[d];
    const k = counts[c];
    sum += k <= 1024 ? K_LOG2K[k] : k * Math.log2(k);
    counts[c] = 0;
  }
  const h = Math.log2(n) - sum / n;
  return h > 0 ? h : 0;
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

const MARKER_HASHES = new Set([...PLACEHOLDER_MARKERS].map(hashWord));
const FILLER_HASHES = new Set([...PLACEHOLDER_FILLERS].map(hashWord));
/**
 * WORD_FILTER[h & 0xffff] is 1 when some placeholder marker or filler (or lexicon word, see lexicon()) has hash h
 * in its low 16 bits: one load rules out most letter segments of a random value before any set lookup.
 */
const WORD_FILTER = new Uint8Array(65536);
for (const h of [...MARKER_HASHES, ...FILLER_HASHES]) WORD_FILTER[h & 0xffff] = 1;

/** MASK_ASCII[c] is 1 for the ASCII mask characters * x X # . _ - */
const MASK_ASCII = new Uint8Array(128);
for (const ch of '*xX#._-') MASK_ASCII[ch.charCodeAt(0)] = 1;

function isMaskChar(c: number): boolean {
  // * x X # . _ - and the bullet, ellipsis and black-circle code points
  return c < 128 ? MASK_ASCII[c] === 1 : c === 0x2022 || c === 0x2026 || c === 0x25cf;
}

const REFERENCE = /^(?:ENC\[|EJ\[|vault:|ref\+|sops:|secretsmanager:|arn:aws:secretsmanager:|!vault)/i;
/** REFERENCE_START[c | 32] is 1 for the first letters of REFERENCE's alternatives (e, v, r, s, a, and `!`). */
const REFERENCE_START = new Uint8Array(65536);
for (const ch of 'evrsa!') REFERENCE_START[ch.charCodeAt(0)] = 1;

/**
 * True for values that stand in for a secret rather than being one: template references (`${X}`, `{{ x }}`,
 * `<x>`, `%(x)s`, `$X`), masked values (`****`, `xxxx-xxxx`), values made mostly of placeholder words
 * ("your-api-key-here", "REDACTED", "changeme"), and long runs of one repeated character. A real passphrase that
 * merely contains such a word ("zen-sizzle-hidden-39") is not a placeholder. One pass, no allocation.
 */
export function isPlaceholderValue(value: string): boolean {
  let s = 0;
  let e = value.length;
  while (s < e && value.charCodeAt(s) <= 32) s++;
  while (e > s && value.charCodeAt(e - 1) <= 32) e--;
  const len = e - s;
  if (len === 0) return true;
  const first = value.charCodeAt(s);
  // $VAR, ${VAR}, <VAR>, {{VAR}}, [VAR], %(VAR)s, %VAR%
  if (first === 36 || first === 60 || first === 123 || first === 91 || first === 37) return true;
  if (len <= 12 && PLACEHOLDER_EXACT.has(value.slice(s, e).toLowerCase())) return true;
  // AWS's documentation keys end in EXAMPLE / EXAMPLEKEY (wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY).
  if (len >= 16 && value.includes('EXAMPLE')) return true;
  // Encrypted or referenced values: SOPS/ejson ENC[…], Vault and secret-manager references, redacted dumps.
  if (REFERENCE_START[first | 32] === 1 && REFERENCE.test(value.slice(s, s + 24))) return true;
  if (first === 112 || first === 111 || first === 101 || first === 80 || first === 79 || first === 69) {
    const head = value.slice(s, s + 12).toLowerCase();
    if (head.startsWith('process.env') || head.startsWith('os.environ') || head.startsWith('env(')) return true;
  }
  let masked = 0;
  let run = 1;
  let maxRun = 1;
  let dots = 0;
  let marked = false;
  let covered = 0;
  // Letter segments (split at non-letters and camelCase humps), hashed as they are read.
  let segHash = 0;
  let segLen = 0;
  let segAllX = true;
  let prevLower = false;
  // "[REDACTED]", "***redacted": the redaction-marker pattern is tried after the loop, only when one was seen.
  let bracketOrStar = false;
  for (let i = s; i <= e; i++) {
    const c = i < e ? value.charCodeAt(i) : 0;
    if (i < e) {
      if (c === 91 || c === 93 || c === 42) bracketOrStar = true;
      if (isMaskChar(c)) masked++;
      if (c === 46) {
        if (++dots >= 3) return true; // "..."
      } else dots = 0;
      if (c === 0x2026) return true;
      if (i > s && c === value.charCodeAt(i - 1)) {
        if (++run > maxRun) maxRun = run;
      } else run = 1;
    }
    const lower = c >= 97 && c <= 122;
    const upper = c >= 65 && c <= 90;
    if ((lower || upper) && !(upper && prevLower)) {
      segHash = hashStep(segHash, c);
      segLen++;
      if ((c | 32) !== 120) segAllX = false;
    } else {
      if (segLen > 0) {
        if (segLen >= 3 && segAllX) {
          marked = true;
          covered += segLen;
        } else if (WORD_FILTER[segHash & 0xffff] === 1) {
          if (MARKER_HASHES.has(segHash)) {
            marked = true;
            covered += segLen;
          } else if (FILLER_HASHES.has(segHash)) covered += segLen;
        }
      }
      segHash = upper ? hashStep(0, c) : 0;
      segLen = upper ? 1 : 0;
      segAllX = !upper || (c | 32) === 120;
    }
    prevLower = lower;
  }
  if (bracketOrStar && len >= 8 && /\[redacted|redacted\]|\*\*\*redacted/i.test(value)) return true;
  if (len >= 4 && masked >= len * 0.6) return true;
  if (marked && covered >= len * 0.4) return true;
  return len >= 6 && maxRun >= Math.max(6, len * 0.5);
}

/**
 * True when `v` holds eight letters in a row, each one more than the last (abcdefgh, KLMNOPQR): an alphabet run is
 * typed, not generated. Used for values found by their key, not for vendor formats (a test key with an alphabet
 * body is still refused where a vendor's format is seen).
 */
export function hasAlphabetRun(v: string): boolean {
  return hasAscendingRun(v, 0, v.length, 8);
}

function hasAscendingRun(v: string, s: number, e: number, min: number): boolean {
  let run = 1;
  for (let i = s + 1; i < e; i++) {
    const c = v.charCodeAt(i);
    const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
    if (letter && c === v.charCodeAt(i - 1) + 1) {
      if (++run >= min) return true;
    } else run = 1;
  }
  return false;
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

/**
 * Context words with their polarity (+1 confirms a type, -1 says the match is something else), keyed by hashWord:
 * an open-addressing table of the word hashes (a slot whose polarity is 0 is empty), probed linearly. Built only
 * by lexicon(), which also enters its words in WORD_FILTER (the lookups below consult the filter first).
 */
export interface Lexicon {
  readonly hashes: Int32Array;
  readonly polarities: Int8Array;
  readonly mask: number;
}

/** The slot where the probe for hash h starts (Fibonacci hashing spreads nearby hashes apart). */
function slotOf(h: number, mask: number): number {
  return (Math.imul(h, 0x9e3779b1) >>> 16) & mask;
}

/** The polarity of hash h in lex, or undefined; one filter load for the words of no lexicon. */
function lookup(lex: Lexicon, h: number): number | undefined {
  if (WORD_FILTER[h & 0xffff] === 0) return undefined;
  const { hashes, polarities, mask } = lex;
  for (let k = slotOf(h, mask); polarities[k] !== 0; k = (k + 1) & mask) if (hashes[k] === h) return polarities[k];
  return undefined;
}

/** Builds a lexicon; a word in both lists counts as positive. */
export function lexicon(positive: readonly string[], negative: readonly string[]): Lexicon {
  const m = new Map<number, number>();
  for (const w of negative) m.set(hashWord(w), -1);
  for (const w of positive) m.set(hashWord(w), 1);
  let size = 8;
  while (size < m.size * 4) size *= 2;
  const lex: Lexicon = { hashes: new Int32Array(size), polarities: new Int8Array(size), mask: size - 1 };
  for (const [h, polarity] of m) {
    WORD_FILTER[h & 0xffff] = 1;
    let k = slotOf(h, lex.mask);
    while (lex.polarities[k] !== 0) k = (k + 1) & lex.mask;
    lex.hashes[k] = h;
    lex.polarities[k] = polarity;
  }
  return lex;
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
  return polarityOfHashed(text, s, e, h, snake, lex);
}

/** polarityOfRange for a word whose hash `h` (and whether it holds a `_`) is already known. */
function polarityOfHashed(text: string, s: number, e: number, h: number, snake: boolean, lex: Lexicon): number {
  const p = lookup(lex, h);
  if (p !== undefined) return p;
  if (!snake) return 0;
  // customer_phone, FIRMWARE_BASELINE, order_id: the last part that means something.
  let partEnd = e;
  for (let k = e - 1; k >= s - 1; k--) {
    if (k >= s && text.charCodeAt(k) !== 95) continue;
    if (partEnd > k + 1) {
      const q = lookup(lex, hashRange(text, k + 1, partEnd));
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
    // The word is read once, backwards: hashStep's hash is the sum of each folded character times 31 to the power
    // of the characters after it (mod 2^32), so it can be summed from the end.
    let h = 0;
    let power = 1;
    let snake = false;
    while (j > limit) {
      const d = text.charCodeAt(j - 1);
      if (!isContextWordCode(d)) break;
      if (d === 95) snake = true;
      h = (h + Math.imul(foldCase(d), power)) | 0;
      power = Math.imul(power, 31);
      j--;
    }
    let p = polarityOfHashed(text, j, we, h, snake, lex);
    if (p > 0 && NUMBER_WORDS.has(h)) {
      return previousWordPolarity(text, j, limit, lex) < 0 ? -1 : p;
    }
    // Another script at either end of the word (`IPは`, `请致电`, `カード番号`): look at its parts.
    if (p === 0 && (text.charCodeAt(we - 1) >= 0x250 || text.charCodeAt(j) >= 0x250)) {
      p = polarityOfScripts(text, j, we, lex);
    }
    if (p !== 0) return p;
  }
  return 0;
}

/**
 * Polarity of a word that mixes scripts or is written without blanks (`IPは`, `请致电`, `カード番号`): its runs of
 * one script from the last, a Latin run looked up whole, a CJK run by its substrings of two to four characters
 * ending nearest to the match.
 */
function polarityOfScripts(text: string, s: number, e: number, lex: Lexicon): number {
  let segEnd = e;
  while (segEnd > s) {
    const latin = isLatinWordCode(text.charCodeAt(segEnd - 1));
    let segStart = segEnd - 1;
    while (segStart > s && isLatinWordCode(text.charCodeAt(segStart - 1)) === latin) segStart--;
    if (latin || !isCjkCode(text.charCodeAt(segEnd - 1))) {
      if (segStart > s || segEnd < e) {
        const p = lookup(lex, hashRange(text, segStart, segEnd));
        if (p !== undefined) return p;
      }
    } else {
      for (let q = segEnd; q > segStart + 1 && segEnd - q < 8; q--) {
        for (let len = 2; len <= 4 && q - len >= segStart; len++) {
          const p = lookup(lex, hashRange(text, q - len, q));
          if (p !== undefined) return p;
        }
      }
    }
    segEnd = segStart;
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
/** DELIMITER_INDEX[c] is the index of c in DELIMITERS, or -1 (c < 128). */
const DELIMITER_INDEX = new Int8Array(128).fill(-1);
DELIMITERS.forEach((d, k) => {
  DELIMITER_INDEX[d] = k;
});

/**
 * Finds the text's first line and the delimiters (`,` `;` tab `|`) it uses as a header would: short cells, few
 * blanks (a sentence with commas is not a header). Cells are cut only when asked for.
 */
const NO_HEADER: CsvHeader = Object.freeze({ end: -1, delimiters: Object.freeze([]) });

export function parseCsvHeader(text: string): CsvHeader {
  const end = text.indexOf('\n');
  if (end < 0 || end > 2000) return NO_HEADER;
  const delimiters: number[] = [];
  for (const d of DELIMITERS) {
    const at = text.indexOf(String.fromCharCode(d));
    if (at >= 0 && at < end && looksLikeHeader(text, end, d)) delimiters.push(d);
  }
  return { end, delimiters };
}

function looksLikeHeader(text: string, end: number, delimiter: number): boolean {
  let cells = 1;
  let blanks = 0;
  let cellLength = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === delimiter) {
      cells++;
      cellLength = 0;
    } else if (++cellLength > 40) return false;
    else if (c === 32) blanks++;
  }
  return blanks <= cells;
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
 * Where the scan is within the current row: kept between lookups so that many numbers on one long row cost one
 * pass over it, not one look-back each.
 */
export interface RowCursor {
  lineStart: number;
  pos: number;
  quoted: boolean;
  counts: Int32Array;
  /** Start of the last markdown table row looked up, and the start of its table's header row. */
  mdRow: number;
  mdTop: number;
}

/** A cursor before any lookup. */
export function newRowCursor(): RowCursor {
  return { lineStart: 0, pos: -1, quoted: false, counts: new Int32Array(DELIMITERS.length), mdRow: -1, mdTop: -1 };
}

function moveCursor(text: string, cursor: RowCursor, start: number): boolean {
  if (start < cursor.pos || cursor.pos < 0) {
    let lineStart = start;
    const limit = start > 4096 ? start - 4096 : 0;
    while (lineStart > limit && text.charCodeAt(lineStart - 1) !== 10) lineStart--;
    if (lineStart === limit && lineStart > 0) return false;
    cursor.lineStart = lineStart;
    cursor.pos = lineStart;
    cursor.quoted = false;
    cursor.counts.fill(0);
  }
  for (let i = cursor.pos; i < start; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      cursor.lineStart = i + 1;
      cursor.quoted = false;
      cursor.counts.fill(0);
    } else if (c === 34) cursor.quoted = !cursor.quoted;
    else if (c < 128 && !cursor.quoted) {
      const k = DELIMITER_INDEX[c];
      if (k >= 0) cursor.counts[k]++;
    }
  }
  cursor.pos = start;
  return true;
}

/**
 * The header cell (lower-cased) of the CSV/TSV/markdown-table column that contains `start`: for delimited text
 * the text's first line, for a markdown table the row above its |---| line. Lets "ssn" or "phone" in a header be
 * context for a bare number three rows down. Undefined when `start` is not in such a row.
 */
export function csvHeaderFor(text: string, header: CsvHeader, start: number, cursor: RowCursor): string | undefined {
  if (!moveCursor(text, cursor, start)) return undefined;
  const lineStart = cursor.lineStart;
  if (text.charCodeAt(lineStart) === 124) return markdownHeaderFor(text, lineStart, cursor);
  if (header.delimiters.length === 0 || start <= header.end) return undefined;
  for (const delimiter of header.delimiters) {
    const column = cursor.counts[DELIMITERS.indexOf(delimiter)];
    if (column === 0) {
      // The match opens its row: the row must still use this delimiter somewhere after it.
      let k = start;
      while (k < text.length && k - start < 256 && text.charCodeAt(k) !== 10 && text.charCodeAt(k) !== delimiter) k++;
      if (text.charCodeAt(k) !== delimiter) continue;
    }
    return headerCell(text, header, delimiter, column);
  }
  return undefined;
}

/** Header cell of a markdown table column: the block's first row (above its |---| line), whatever line the text starts with. */
function markdownHeaderFor(text: string, lineStart: number, cursor: RowCursor): string | undefined {
  const column = cursor.counts[DELIMITERS.indexOf(124)];
  let top: number;
  if (cursor.mdRow >= 0 && (lineStart === cursor.mdRow || previousLineStart(text, lineStart) === cursor.mdRow)) {
    top = cursor.mdTop;
  } else {
    // Walk up over the table's rows (each starts with '|'), at most 64 lines of at most 1 KB.
    top = lineStart;
    for (let rows = 0; rows < 64 && top > 0; rows++) {
      const prev = previousLineStart(text, top);
      if (prev < 0 || text.charCodeAt(prev) !== 124) break;
      top = prev;
    }
  }
  cursor.mdRow = lineStart;
  cursor.mdTop = top;
  if (top === lineStart) return undefined;
  let from = top;
  for (let c = 0; c < column; c++) {
    const at = text.indexOf('|', from);
    if (at < 0 || at >= lineStart) return undefined;
    from = at + 1;
  }
  const to = text.indexOf('|', from);
  const lineEnd = text.indexOf('\n', top);
  if (to < 0 || (lineEnd >= 0 && to > lineEnd)) return undefined;
  return text.slice(from, to).trim();
}

/** Start of the line before the line starting at `lineStart`, or -1 (none, or longer than 1 KB). */
function previousLineStart(text: string, lineStart: number): number {
  if (lineStart <= 0) return -1;
  let prev = lineStart - 1;
  const limit = prev > 1024 ? prev - 1024 : 0;
  while (prev > limit && text.charCodeAt(prev - 1) !== 10) prev--;
  return prev > 0 && text.charCodeAt(prev - 1) !== 10 ? -1 : prev;
}
