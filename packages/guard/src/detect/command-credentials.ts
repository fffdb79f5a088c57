// Passwords given to tools in their own syntax: `.pgpass` lines (host:port:database:user:password),
// `net user NAME PASSWORD /add`, `echo "…" | docker login … --password-stdin` (and passwd --stdin, chpasswd,
// sudo -S), and the attached `-pPASSWORD` of the MySQL clients.
import { emitValue, PASSWORD } from './password-detectors.ts';
import type { ScanState } from './scan-state.ts';
import { knownSecretPrefixAt } from './secret-detectors.ts';

function lineStartOf(t: string, i: number): number {
  let k = i;
  while (k > 0 && i - k < 256 && t.charCodeAt(k - 1) !== 10) k--;
  return k > 0 && t.charCodeAt(k - 1) !== 10 ? -1 : k;
}

/** End of the line containing `i` (before a CR), looked for at most `max` characters ahead; -1 beyond that. */
function lineEndOf(t: string, i: number, max: number): number {
  let k = i;
  const limit = Math.min(t.length, i + max);
  while (k < limit && t.charCodeAt(k) !== 10) k++;
  if (k === limit && limit < t.length) return -1;
  if (k > i && t.charCodeAt(k - 1) === 13) k--;
  return k;
}

/** Fields of a .pgpass line: no blanks, `\:` escapes a colon. */
function isPgpassField(t: string, s: number, e: number): boolean {
  if (e <= s) return false;
  for (let k = s; k < e; k++) if (t.charCodeAt(k) <= 32) return false;
  return true;
}

/**
 * A whole line `host:port:database:user:password` (port digits or `*`), as in ~/.pgpass; `at` is any position in
 * it. Reports the password and returns the line's end, or -1.
 */
export function scanPgpassLine(st: ScanState, at: number): number {
  const t = st.text;
  const ls = lineStartOf(t, at);
  if (ls < 0) return -1;
  const le = lineEndOf(t, at, 512);
  if (le < 0 || le - ls > 512) return -1;
  const colons: number[] = [];
  for (let k = ls; k < le && colons.length < 4; k++) {
    const c = t.charCodeAt(k);
    if (c === 92) k++;
    else if (c === 58) colons.push(k);
  }
  if (colons.length < 4) return -1;
  const [c1, c2, c3, c4] = colons;
  if (!isPgpassField(t, ls, c1) || !isPgpassField(t, c3 + 1, c4) || !isPgpassField(t, c2 + 1, c3)) return -1;
  // The port: digits or `*`.
  const port = t.slice(c1 + 1, c2);
  if (port !== '*' && !/^\d{1,5}$/.test(port)) return -1;
  let e = le;
  while (e > c4 + 1 && t.charCodeAt(e - 1) <= 32) e--;
  if (!isPgpassField(t, c4 + 1, e)) return -1;
  if (knownSecretPrefixAt(t, c4 + 1)) return -1;
  return emitValue(st, PASSWORD, c4 + 1, e, true) ? le : -1;
}

const value = { start: 0, end: 0, quoted: false };

/** Reads the argument at `k`: a quoted string or a run of non-blank characters. */
function readArgument(t: string, k: number): boolean {
  const q = t.charCodeAt(k);
  if (q === 34 || q === 39) {
    const close = t.indexOf(String.fromCharCode(q), k + 1);
    if (close < 0 || close - k > 260 || t.slice(k, close).includes('\n')) return false;
    value.start = k + 1;
    value.end = close;
    value.quoted = true;
    return close > k + 1;
  }
  let e = k;
  while (e < t.length && e - k < 256 && t.charCodeAt(e) > 32) e++;
  value.start = k;
  value.end = e;
  value.quoted = false;
  return e > k;
}

function skipBlanks(t: string, k: number): number {
  let j = k;
  while (t.charCodeAt(j) === 32 || t.charCodeAt(j) === 9) j++;
  return j;
}

/** `net user NAME PASSWORD [/add|/domain|…]` after the word `net` ending at `e`. Returns the resume position or -1. */
export function scanNetUser(st: ScanState, e: number): number {
  const t = st.text;
  if (t.slice(e, e + 6).toLowerCase() !== ' user ') return -1;
  let k = skipBlanks(t, e + 6);
  if (!readArgument(t, k)) return -1;
  k = skipBlanks(t, value.quoted ? value.end + 1 : value.end);
  if (!readArgument(t, k)) return -1;
  const { start, end, quoted } = value;
  const first = t.charCodeAt(start);
  // `*` prompts for the password; `/add` without one is an option.
  if (first === 47 || (end - start === 1 && first === 42)) return -1;
  const after = skipBlanks(t, quoted ? end + 1 : end);
  const c = t.charCodeAt(after);
  if (!(after >= t.length || c === 10 || c === 13 || c === 47)) return -1;
  return emitValue(st, PASSWORD, start, end, true) ? end : -1;
}

/** What reads a password from standard input, on the right of a pipe. */
const STDIN_READERS = /--password-stdin|passwd\s+--stdin|\bsudo\s+(?:-\w+\s+)*-S\b|\bchpasswd\b/;

/**
 * `echo "…" | docker login … --password-stdin` (also passwd --stdin, sudo -S, chpasswd's `user:password`) after
 * the word `echo` ending at `e`. Returns the resume position or -1.
 */
export function scanEchoPipe(st: ScanState, e: number): number {
  const t = st.text;
  let k = skipBlanks(t, e);
  if (k === e) return -1;
  while (t.charCodeAt(k) === 45 && /^-[neE] /.test(t.slice(k, k + 3))) k = skipBlanks(t, k + 2);
  if (!readArgument(t, k)) return -1;
  let { start, end } = value;
  const quoted = value.quoted;
  const pipe = skipBlanks(t, quoted ? end + 1 : end);
  if (t.charCodeAt(pipe) !== 124 || t.charCodeAt(pipe + 1) === 124) return -1;
  const le = lineEndOf(t, pipe, 400);
  const m = STDIN_READERS.exec(t.slice(pipe, le < 0 ? pipe + 400 : le));
  if (m === null) return -1;
  if (m[0] === 'chpasswd') {
    const colon = t.indexOf(':', start);
    if (colon < 0 || colon >= end - 1) return -1;
    start = colon + 1;
  }
  if (knownSecretPrefixAt(t, start)) return -1;
  return emitValue(st, PASSWORD, start, end, true) ? end : -1;
}

const MYSQL_CLIENTS = /\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlshow)\b/;

/**
 * `-pPASSWORD` written against its flag, on a MySQL or MariaDB client's command line; `i` is the `-`. Returns the
 * resume position or -1 (`-p'…'` and `-p …` are read with the other short flags).
 */
export function scanAttachedMysqlPassword(st: ScanState, i: number): number {
  const t = st.text;
  const c = t.charCodeAt(i + 2);
  if (c <= 32 || c === 34 || c === 39) return -1;
  const ls = lineStartOf(t, i);
  if (ls < 0 || !MYSQL_CLIENTS.test(t.slice(ls, i))) return -1;
  if (!readArgument(t, i + 2)) return -1;
  const { start, end } = value;
  return emitValue(st, PASSWORD, start, end, true) ? end : -1;
}
