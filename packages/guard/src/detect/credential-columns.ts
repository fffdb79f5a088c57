// Password columns of tables: a CSV or TSV text whose header row names a password column, or a markdown table
// whose header does. Each row's cell in that column is the value.
import { emitValue, keyKind, PASSWORD, STRONG_SECRET } from './password-detectors.ts';
import type { ScanState } from './scan-state.ts';

const MAX_ROWS = 2000;
const MAX_COLUMN_SCANS = 8;

function hasDelimiter(t: string, s: number, e: number, delimiter: number): boolean {
  for (let k = s; k < e; k++) if (t.charCodeAt(k) === delimiter) return true;
  return false;
}

/** `|---|:---:|`: the line under a markdown table's header (a new table begins). */
function isSeparatorRow(t: string, s: number, e: number): boolean {
  for (let k = s; k < e; k++) {
    const c = t.charCodeAt(k);
    if (c !== 124 && c !== 45 && c !== 58 && c !== 32 && c !== 13) return false;
  }
  return true;
}

function lineEndAt(t: string, i: number): number {
  const e = t.indexOf('\n', i);
  return e < 0 ? t.length : e;
}

/** Blanks and quotes around a cell's text (a tab only where it is not the delimiter). */
function isCellBlank(c: number, delimiter: number): boolean {
  return c !== delimiter && (c === 32 || c === 9 || c === 13 || c === 34 || c === 39 || c === 96);
}

/** Start of cell `column` of the row [ls, le) split at `delimiter`, or -1. */
function cellStart(t: string, ls: number, le: number, delimiter: number, column: number): number {
  let k = ls;
  for (let c = 0; c < column; c++) {
    const at = t.indexOf(String.fromCharCode(delimiter), k);
    if (at < 0 || at >= le) return -1;
    k = at + 1;
  }
  return k;
}

/** End of the cell starting at `s`: the next delimiter or the row's end. */
function cellEnd(t: string, s: number, le: number, delimiter: number): number {
  const at = t.indexOf(String.fromCharCode(delimiter), s);
  return at < 0 || at > le ? le : at;
}

/**
 * Called for a password word [i, j) that may be a header cell. When it is the whole cell of a CSV/TSV header
 * (the text's first line) or of a markdown table's header row, reports the cell of every row below in that
 * column (until a row without the delimiter). The walk goes on from j either way.
 */
export function scanCredentialColumn(st: ScanState, i: number, j: number): void {
  const t = st.text;
  // A few tables per text: a header row of hundreds of password columns must not cost rows × columns.
  if (st.columnScans >= MAX_COLUMN_SCANS) return;
  let ls = i;
  while (ls > 0 && i - ls < 512 && t.charCodeAt(ls - 1) !== 10) ls--;
  // A header cell is followed by a delimiter or the line's end (blanks and quotes aside).
  let b = j;
  while (b < t.length && (t.charCodeAt(b) === 32 || t.charCodeAt(b) === 34 || t.charCodeAt(b) === 39)) b++;
  const next = t.charCodeAt(b);
  if (!(next === 44 || next === 9 || next === 59 || next === 124 || next === 10 || next === 13 || b >= t.length))
    return;
  let delimiter: number;
  let firstRow: number;
  let markdown = false;
  if (t.charCodeAt(ls) === 124) {
    const le = lineEndAt(t, ls);
    const sepEnd = lineEndAt(t, le + 1);
    if (le >= t.length || !/^\|[ :|-]*-[ :|-]*\|?\r?$/.test(t.slice(le + 1, sepEnd))) return;
    delimiter = 124;
    firstRow = sepEnd + 1;
    markdown = true;
  } else {
    if (ls !== 0) return;
    const header = st.csvHeader();
    if (header.end < 0 || i >= header.end || header.delimiters.length === 0) return;
    delimiter = header.delimiters[0];
    firstRow = header.end + 1;
  }
  // The word must be the whole cell (blanks and quotes aside).
  let a = i;
  while (a > ls && isCellBlank(t.charCodeAt(a - 1), delimiter)) a--;
  b = j;
  while (b < t.length && isCellBlank(t.charCodeAt(b), delimiter)) b++;
  if ((a > ls && t.charCodeAt(a - 1) !== delimiter) || (t.charCodeAt(b) !== delimiter && t.charCodeAt(b) !== 10))
    return;
  const kind = keyKind(t.slice(i, j));
  if (kind !== PASSWORD && kind !== STRONG_SECRET) return;
  let column = 0;
  for (let k = ls; k < i; k++) if (t.charCodeAt(k) === delimiter) column++;
  st.columnScans++;
  let r = firstRow;
  for (let rows = 0; r < t.length && rows < MAX_ROWS; rows++) {
    const le = lineEndAt(t, r);
    if (markdown ? t.charCodeAt(r) !== 124 || isSeparatorRow(t, r, le) : !hasDelimiter(t, r, le, delimiter)) break;
    const cs = cellStart(t, r, le, delimiter, column);
    if (cs >= 0) {
      let s = cs;
      let e = cellEnd(t, cs, le, delimiter);
      while (s < e && isCellBlank(t.charCodeAt(s), delimiter)) s++;
      while (e > s && isCellBlank(t.charCodeAt(e - 1), delimiter)) e--;
      if (e > s && emitValue(st, kind, s, e, true)) st.unordered = true;
    }
    r = le + 1;
  }
}
