// The built-in detectors' single pass: one walk over the text that dispatches on trigger characters (`@`, `+`,
// `(`, `-----BEGIN`, `-p`, `::`, `%XX`, a `*:` line) and on each word's first characters (digits, capitals +
// digits, literal secret prefixes, key names, trigger words). Words that mix ASCII with other letters have their
// ASCII runs dispatched on their own, as CJK text puts no blank around entities. Each detector returns where the
// walk resumes.
import { foldCase, hashStep, hashWord, isAlnum, isDigit, isUpper, WORD_KIND, WORD_TABLE } from './chars.ts';
import { scanCjkKeywords } from './cjk-keywords.ts';
import { scanAttachedMysqlPassword, scanEchoPipe, scanNetUser, scanPgpassLine } from './command-credentials.ts';
import { scanCredentialColumn } from './credential-columns.ts';
import { LOGIN_WORDS, SECRET_MENTION_WORDS, scanLoginPair, scanSecretMention } from './credential-prose.ts';
import { scanWallet } from './crypto-wallets.ts';
import { scanEmail } from './email-detector.ts';
import { checkDeadline } from './errors.ts';
import { scanIban } from './iban-detector.ts';
import { injectionTriggerHashes, injectionTriggerWords, scanInjection } from './injection-detector.ts';
import { scanIpv6 } from './ip-detectors.ts';
import { scanDigitLedId, scanLetterDigitsId, scanLetterLedId, scanMac } from './national-ids.ts';
import { numberBoundaryBefore, scanNumberRun } from './numeric-detectors.ts';
import {
  ASSIGNMENT_REJECTED,
  PASSWORD_MENTION_WORDS,
  PASSWORD_SUFFIXES,
  scanAssignment,
  scanCliCredential,
  scanPasswordMention,
  scanUrlCredentials,
} from './password-detectors.ts';
import { scanPeople } from './person-detector.ts';
import { type BuiltinSelection, ScanState } from './scan-state.ts';
import { CATALOGUE_START, CATALOGUE_THIRD, isDotPrefixWord, scanAzureClientSecret } from './secret-catalogue.ts';
import { scanPrivateKey, scanSecretAt } from './secret-detectors.ts';
import { isHexCode } from './text-features.ts';
import type { Candidate } from './types.ts';
import { scanBareHost, scanSchemeUrl } from './url-detector.ts';
import { isEscapeAt, scanEncodedToken } from './url-encoded.ts';

/** How many characters the walk covers between deadline checks. */
const DEADLINE_STRIDE = 64 * 1024;

const MENTION_WORDS = new Set(PASSWORD_MENTION_WORDS);

/**
 * The last three (folded) characters of a word as one number: packed into 21 bits when they are ASCII (a small
 * integer, the common case), else a distinct negative number.
 */
function tail3(t: string, end: number): number {
  const a = foldCase(t.charCodeAt(end - 3));
  const b = foldCase(t.charCodeAt(end - 2));
  const c = foldCase(t.charCodeAt(end - 1));
  if ((a | b | c) < 128) return (a << 14) | (b << 7) | c;
  return -1 - ((a * 65599 + b) * 65599 + c);
}

/** Last three letters of every key name that can hold a password or a secret (see password-detectors). */
const KEY_TAILS = new Set(
  [
    ...PASSWORD_SUFFIXES,
    'passwort',
    'mot_de_passe',
    'pass',
    'secret',
    'key',
    'token',
    'credentials',
    'credential',
    'creds',
    'auth',
    'authorization',
    'apikey',
    'name',
    'login',
    'authenticate',
    'signin',
    'connect',
  ].map((w) => tail3(w, w.length)),
);

/**
 * True when the word ending at `j` may be a key with a value after it: an operator, a closing quote, an XML
 * `>`, or blanks followed by one of those (`key = value`, SQL `PASSWORD 'x'`), or a `--flag value`.
 */
function mayBeKey(t: string, i: number, j: number): boolean {
  let c = t.charCodeAt(j);
  if (c === 61 || c === 58 || c === 34 || c === 39 || c === 62 || c === 92 || c === 96 || c === 40) return true;
  // Full-width colon and equals sign (パスワード：…, password：…).
  if (c === 0xff1a || c === 0xff1d) return true;
  if (c !== 32 && c !== 9) return false;
  // -u value, --password value, <wsse:Password Type="…">
  const p = i > 0 ? t.charCodeAt(i - 1) : 0;
  if (p === 45 || p === 60 || p === 58) return true;
  let k = j + 1;
  c = t.charCodeAt(k);
  while (k < j + 4 && (c === 32 || c === 9)) c = t.charCodeAt(++k);
  return c === 61 || c === 58 || c === 34 || c === 39 || compoundOperatorAt(t, k);
}

/** `?=`, `.=`, `+=` (Make, PHP, shell) or a Go type before `=` (`string =`) at k. */
function compoundOperatorAt(t: string, k: number): boolean {
  const c = t.charCodeAt(k);
  if (c === 63 || c === 46 || c === 43) return t.charCodeAt(k + 1) === 61;
  return (c === 115 || c === 83) && t.startsWith('tring', k + 1) && /^\s*=[^=]/.test(t.slice(k + 6, k + 10));
}

/** True when `word` (lower-case ASCII) is at k in t, before `end`, ASCII letters compared case-insensitively. */
function foldedAt(t: string, k: number, end: number, word: string): boolean {
  if (end - k < word.length) return false;
  for (let m = 0; m < word.length; m++) if (foldCase(t.charCodeAt(k + m)) !== word.charCodeAt(m)) return false;
  return true;
}

/** After `api` or `access` at k: an optional `_`, then `key` (for api) or `token`. */
function keyOrTokenAt(t: string, k: number, end: number, key: boolean): boolean {
  const m = t.charCodeAt(k) === 95 ? k + 1 : k;
  return (key && foldedAt(t, m, end, 'key')) || foldedAt(t, m, end, 'token');
}

/**
 * Key names with a secret word inside rather than at the end (mySecretString, api_token_2, todo_secret_x): secret,
 * apikey, api_key, apitoken, api_token, accesstoken or access_token anywhere in the 6 to 64 characters [i, j),
 * in any case, read in place.
 */
function hasInnerSecretWord(t: string, i: number, j: number): boolean {
  if (j - i < 6 || j - i > 64) return false;
  for (let k = i; k <= j - 6; k++) {
    const c = foldCase(t.charCodeAt(k));
    if (c === 115) {
      if (foldedAt(t, k, j, 'secret')) return true;
    } else if (c === 97) {
      if (foldedAt(t, k, j, 'api') && keyOrTokenAt(t, k + 3, j, true)) return true;
      if (foldedAt(t, k, j, 'access') && keyOrTokenAt(t, k + 6, j, false)) return true;
    }
  }
  return false;
}

/** STRUCTURED_START[first * 128 + second] is 1 for the structured formats' starts (sk-, sk_/rk_, xox?-, xapp-, ey…). */
const STRUCTURED_START = new Uint8Array(128 * 128);
for (const p of ['sk', 'rk', 'xo', 'xa', 'ey']) STRUCTURED_START[p.charCodeAt(0) * 128 + p.charCodeAt(1)] = 1;
/**
 * SECRET_START[first * 128 + second] is 1 for the first two characters of a literal secret prefix: every prefix of
 * the vendor catalogue (secret-catalogue.ts) and the structured formats.
 */
const SECRET_START = CATALOGUE_START.slice();
for (let k = 0; k < STRUCTURED_START.length; k++) if (STRUCTURED_START[k] === 1) SECRET_START[k] = 1;
/**
 * True when the letter-led ASCII word [i, j) (first character `c0`, a letter) starts no entity that onAsciiRun
 * reads: not a literal secret prefix (ghp_…, sk_live_…, xoxb…, eyJ…, AKIA…; a word that merely shares a catalogue
 * prefix's first two letters, such as "what" with whsec_ or "keep" with key-, is inert), not a dotted MAC group
 * (`abcd.`), and, for a capital, not an identifier's length (9, 10, 16) nor an IBAN's start (two capitals, two
 * digits). Such words go to the plain-word shortcut when nothing after them makes them a key either.
 */
function isInertWord(t: string, i: number, j: number, c0: number): boolean {
  const c1 = t.charCodeAt(i + 1);
  if (c1 < 128) {
    const pair = c0 * 128 + c1;
    if (STRUCTURED_START[pair] === 1) return false;
    if (CATALOGUE_START[pair] === 1) {
      // A catalogue prefix may start here only when its third character does too (a non-ASCII one is not checked).
      const c2 = t.charCodeAt(i + 2);
      if (!(c2 < 128) || (CATALOGUE_THIRD[pair * 4 + (c2 >> 5)] >>> (c2 & 31)) & 1) return false;
    }
  }
  const len = j - i;
  if (len === 4 && t.charCodeAt(j) === 46 && isHexCode(c0)) return false;
  if (c0 >= 97) return true;
  return len !== 9 && len !== 10 && len !== 16 && !isUpper(c1);
}
/** Words this long skip the plain-word shortcut (generated tokens, not prose). */
const LONG_WORD = 36;

/**
 * True when the lower-case word [i, j) cannot start anything: it is not trigger-shaped, and it is followed by
 * punctuation or a blank that does not lead to an operator (no `key = value`, `--flag value`, `<tag attr`).
 */
function isPlainWord(t: string, i: number, j: number, c0: number): boolean {
  const len = j - i;
  if (len <= MAX_TRIGGER_LENGTH && TRIGGER_SHAPES[shapeOf(c0, t.charCodeAt(j - 1), len)] === 1) return false;
  const next = t.charCodeAt(j);
  // hvs.…, dp.pt.…, sl.…: vendor tokens whose prefix is a short word and a dot.
  if (next === 46) return len > 3 || !isDotPrefixWord(t, i, len);
  if (next === 44 || next === 10 || next === 41 || next === 59 || next === 33 || next === 63) return true;
  if (next !== 32) return false;
  const p = i > 0 ? t.charCodeAt(i - 1) : 0;
  if (p === 45 || p === 60 || p === 58) return false;
  let k = j + 1;
  let c = t.charCodeAt(k);
  while (k < j + 4 && (c === 32 || c === 9)) c = t.charCodeAt(++k);
  return !(c === 61 || c === 58 || c === 34 || c === 39 || compoundOperatorAt(t, k));
}

/**
 * What a word's hash may start: a password mention, an injection phrase, a `user / password` pair (login words),
 * a secret whose value follows a colon later (token, secret), a tool's password argument (net user, echo | …).
 */
const MENTION = 1;
const INJECTION = 2;
const LOGIN = 4;
const SECRET_WORD = 8;
const COMMAND = 16;
const COMMAND_WORDS = ['net', 'echo'];
const LOGIN_WORD_SET = new Set(LOGIN_WORDS);
const SECRET_WORD_SET = new Set(SECRET_MENTION_WORDS);
const WORD_ROLES = new Map<number, number>();
/** ROLE_FILTER[h & 0xffff] is 1 when some word with a role has a hash with those low bits: most words stop there. */
const ROLE_FILTER = new Uint8Array(65536);
function addRoleHash(h: number, role: number): void {
  WORD_ROLES.set(h, (WORD_ROLES.get(h) ?? 0) | role);
  ROLE_FILTER[h & 0xffff] = 1;
}
function addRole(words: Iterable<string>, role: number): void {
  for (const w of words) addRoleHash(hashWord(w), role);
}
addRole(PASSWORD_MENTION_WORDS, MENTION);
addRole(LOGIN_WORDS, LOGIN);
addRole(SECRET_MENTION_WORDS, SECRET_WORD);
addRole(COMMAND_WORDS, COMMAND);
for (const h of injectionTriggerHashes()) addRoleHash(h, INJECTION);
const MAX_TRIGGER_LENGTH = 31;
/**
 * TRIGGER_SHAPES[shapeOf(first, last, length)] is 1 when some trigger word has that first and last (folded)
 * letter and that length: a cheap filter that lets "these" and "there" pass over while "token" is looked up.
 */
const TRIGGER_SHAPES = new Uint8Array(32 * 32 * 32);
function shapeOf(first: number, last: number, len: number): number {
  // Upper- and lower-case letters differ by 32 (ASCII, Latin-1, Cyrillic): their low five bits are the same.
  return ((first & 31) << 10) | ((last & 31) << 5) | len;
}
for (const w of [
  ...PASSWORD_MENTION_WORDS,
  ...LOGIN_WORDS,
  ...SECRET_MENTION_WORDS,
  ...COMMAND_WORDS,
  ...injectionTriggerWords(),
]) {
  if (w.length <= MAX_TRIGGER_LENGTH)
    TRIGGER_SHAPES[shapeOf(w.charCodeAt(0), w.charCodeAt(w.length - 1), w.length)] = 1;
}

/**
 * `iban=DE89+3704+…`, `name=Jane+Doe`: a `+` between letters or digits of a form value stands for a blank. A raw
 * `@` in the token says it is not form-encoded (`jane+tag@…`, `<CAF=x+y@mail.gmail.com>`).
 */
function isFormBlank(t: string, i: number): boolean {
  if (i === 0 || !isAlnum(t.charCodeAt(i - 1)) || !isAlnum(t.charCodeAt(i + 1))) return false;
  let assigned = false;
  for (let k = i - 1; k >= 0 && i - k < 80; k--) {
    const c = t.charCodeAt(k);
    if (c === 64) return false;
    if (c === 61) assigned = true;
    if (c <= 32 || c === 34 || c === 39 || c === 60 || c === 62 || c === 40) break;
  }
  if (!assigned) return false;
  for (let k = i + 1; k < t.length && k - i < 80; k++) {
    const c = t.charCodeAt(k);
    if (c === 64) return false;
    if (c <= 32 || c === 34 || c === 39 || c === 60 || c === 62 || c === 38) break;
  }
  return true;
}

/** `pw` and the `BY` of SQL's IDENTIFIED BY. */
function isShortKey(t: string, i: number): boolean {
  const a = foldCase(t.charCodeAt(i));
  const b = foldCase(t.charCodeAt(i + 1));
  return (a === 112 && b === 119) || (a === 98 && b === 121);
}

/** `-u` / `-p` / `-a` command-line flags (curl, mysql, sshpass, redis-cli). */
function isCliFlag(t: string, i: number): boolean {
  const c = t.charCodeAt(i);
  return (c === 117 || c === 112 || c === 97) && i >= 2 && t.charCodeAt(i - 1) === 45 && t.charCodeAt(i - 2) === 32;
}

/** An IPv6 address may start here: not in the middle of another colon run (host:fd00::1 is fine, a:b:c is not). */
function ipv6StartOk(t: string, i: number): boolean {
  if (i === 0 || t.charCodeAt(i - 1) !== 58) return true;
  return i >= 2 && !isHexCode(t.charCodeAt(i - 2)) && t.charCodeAt(i - 2) !== 58;
}

function allHex(t: string, s: number, e: number): boolean {
  for (let k = s; k < e; k++) if (!isHexCode(t.charCodeAt(k))) return false;
  return true;
}

/**
 * The entity detectors keyed by the first characters of an ASCII run [i, j) (digits, secret prefixes, IBAN,
 * IPv6). Returns where the walk resumes (past j for a number run even when nothing was found), or -1.
 */
function onAsciiRun(st: ScanState, i: number, j: number): number {
  const t = st.text;
  const sel = st.sel;
  const c0 = t.charCodeAt(i);
  const next = j < st.n ? t.charCodeAt(j) : 0;
  let r = -1;
  // 00:1a:2b:3c:4d:5e, 00-1A-…, 001a.2b3c.4d5e: MAC addresses, before IPv6 and number runs read them.
  if ((j - i === 2 && (next === 58 || next === 45)) || (j - i === 4 && next === 46)) {
    r = scanMac(st, i);
    if (r > 0) return r;
  }
  if (isDigit(c0)) {
    // 12345678Z (DNI), 131052-308T (HETU): national ids led by digits.
    // 1EG4TE5MK73 / 1EG4-TE5-MK73 (US MBI).
    if (
      (j - i === 9 && isUpper(t.charCodeAt(j - 1))) ||
      (j - i === 6 && (next === 45 || next === 43 || next === 65)) ||
      ((j - i === 11 || (j - i === 4 && next === 45)) && isUpper(t.charCodeAt(i + 1)))
    ) {
      r = scanDigitLedId(st, i);
      if (r > 0) return r;
    }
    // Bitcoin base58 (1…, 3…) and Ethereum (0x…) addresses.
    if (j - i >= 26 && (c0 === 49 || c0 === 51 ? j - i <= 35 : j - i === 42 && c0 === 48)) {
      r = scanWallet(st, i, j);
      if (r > 0) return r;
    }
    // host:5432:database:user:password (~/.pgpass); not times (12:30:45), whose next field is a number too.
    if (next === 58 && i > 0 && t.charCodeAt(i - 1) === 58 && sel.password && !isDigit(t.charCodeAt(j + 1))) {
      r = scanPgpassLine(st, i);
      if (r > 0) return r;
    }
    // phone=555+123+4567: a form-encoded value whose blanks became `+`.
    if (next === 43 && i > 0 && t.charCodeAt(i - 1) === 61 && i >= st.decodedUntil && isDigit(t.charCodeAt(j + 1))) {
      scanEncodedToken(st, i, walk);
    }
    if (sel.ip && next === 58 && j - i <= 4 && allHex(t, i, j) && ipv6StartOk(t, i)) r = scanIpv6(st, i);
    if (r < 0 && numberBoundaryBefore(t, i)) r = scanNumberRun(st, i);
    return Math.max(r, j);
  }
  const c1 = t.charCodeAt(i + 1);
  // bc1…/tb1… segwit addresses.
  if (j - i >= 42 && (c0 === 98 || c0 === 116) && t.charCodeAt(i + 2) === 49) {
    r = scanWallet(st, i, j);
    if (r > 0) return r;
  }
  if (c0 < 128 && c1 < 128 && SECRET_START[c0 * 128 + c1] === 1) {
    r = scanSecretAt(st, i, c0);
    if (r > 0) return r;
  }
  if (isUpper(c0) && (j - i === 9 || j - i === 10 || j - i === 16)) {
    r = scanLetterLedId(st, i, j);
    if (r > 0) return r;
  }
  // A12345678: a passport or driver licence number when a word names it.
  if (isUpper(c0) && isDigit(c1) && j - i >= 7 && j - i <= 14) {
    r = scanLetterDigitsId(st, i, j);
    if (r > 0) return r;
  }
  if (
    sel.iban &&
    isUpper(c0) &&
    j - i >= 4 &&
    isUpper(t.charCodeAt(i + 1)) &&
    isDigit(t.charCodeAt(i + 2)) &&
    isDigit(t.charCodeAt(i + 3))
  ) {
    r = scanIban(st, i, j);
    if (r > 0) return r;
  }
  if (sel.ip && next === 58 && j - i <= 4 && allHex(t, i, j) && ipv6StartOk(t, i)) {
    r = scanIpv6(st, i);
    if (r > 0) return r;
  }
  return -1;
}

/** The keyword detectors for the word [i, j): keys with values, password mentions, injection phrases; or -1. */
function onKeyword(st: ScanState, i: number, j: number): number {
  const t = st.text;
  const sel = st.sel;
  const c0 = t.charCodeAt(i);
  let r = -1;
  let assignmentSeen = false;
  if (sel.password && mayBeKey(t, i, j)) {
    const len = j - i;
    if (
      len >= 3
        ? KEY_TAILS.has(tail3(t, j)) || hasInnerSecretWord(t, i, j)
        : len === 2
          ? isShortKey(t, i)
          : isCliFlag(t, i)
    ) {
      r = len === 1 ? scanCliCredential(st, i, j) : scanAssignment(st, i, j);
      if (r > 0) return r;
      assignmentSeen = r === ASSIGNMENT_REJECTED;
    }
  }
  // curl --user name:password
  if (sel.password && j - i === 4 && i >= 2 && t.startsWith('--user', i - 2) && t.charCodeAt(j) === 32) {
    r = scanCliCredential(st, i, j);
    if (r > 0) return r;
  }
  // Only words whose first and last letters and length match a trigger word get hashed and looked up.
  const len = j - i;
  if (len > MAX_TRIGGER_LENGTH || TRIGGER_SHAPES[shapeOf(c0, t.charCodeAt(j - 1), len)] === 0) return -1;
  let h = 0;
  for (let k = i; k < j; k++) h = hashStep(h, t.charCodeAt(k));
  if (ROLE_FILTER[h & 0xffff] === 0) return -1;
  const role = WORD_ROLES.get(h);
  if (role === undefined) return -1;
  if (role & MENTION && sel.password && !assignmentSeen && MENTION_WORDS.has(t.slice(i, j).toLowerCase())) {
    const d = t.charCodeAt(j);
    if (d === 44 || d === 9 || d === 59 || d === 124 || d === 10 || d === 32 || d === 34)
      scanCredentialColumn(st, i, j);
    if (h !== PASSE_HASH || precededByMotDe(t, i)) {
      r = scanPasswordMention(st, j);
      if (r > 0) return r;
    }
  }
  if (role & (LOGIN | SECRET_WORD | COMMAND) && sel.password) {
    const word = t.slice(i, j).toLowerCase();
    if (role & LOGIN && LOGIN_WORD_SET.has(word)) {
      r = scanLoginPair(st, j);
      if (r > 0) return r;
    }
    if (role & SECRET_WORD && !assignmentSeen && SECRET_WORD_SET.has(word)) {
      r = scanSecretMention(st, i, j);
      if (r > 0) return r;
    }
    if (role & COMMAND) {
      r = word === 'net' ? scanNetUser(st, j) : word === 'echo' ? scanEchoPipe(st, j) : -1;
      if (r > 0) return r;
    }
  }
  if (role & INJECTION && sel.injection) {
    r = scanInjection(st, i, h);
    if (r > 0) return r;
  }
  return -1;
}

function onWord(st: ScanState, i: number, j: number): number {
  const r = onAsciiRun(st, i, j);
  if (r > 0) return r;
  const k = onKeyword(st, i, j);
  return k > 0 ? k : j;
}

/**
 * A word with non-ASCII letters: its ASCII runs are tried as entities of their own (`卡号6212…`, `IPは192…`,
 * `Müller4111…`), then the whole word as a keyword (`contraseña`, `пароль`), then the keywords of scripts written
 * without blanks inside it (`パスワードは…`, `密码是…`).
 */
function onMixedWord(st: ScanState, i: number, j: number, kinds: number): number {
  const t = st.text;
  const found = st.out.length;
  let resume = j;
  if (kinds === 3) {
    let a = i;
    while (a < j) {
      while (a < j && WORD_KIND[t.charCodeAt(a)] === 2) a++;
      if (a >= j) break;
      let b = a + 1;
      while (b < j && WORD_KIND[t.charCodeAt(b)] === 1) b++;
      const r = onAsciiRun(st, a, b);
      if (r >= j) {
        resume = r;
        break;
      }
      a = Math.max(r, b);
    }
  }
  // An entity that runs past the word ends it; a number run that found nothing ("密码是123456") does not.
  if (resume > j && st.out.length > found) return resume;
  let r = onKeyword(st, i, j);
  if (r > 0) return Math.max(r, resume);
  if (st.sel.password) {
    r = scanCjkKeywords(st, i, j);
    if (r > 0) return Math.max(r, resume);
  }
  return resume;
}

const PASSE_HASH = hashWord('passe');

function precededByMotDe(t: string, i: number): boolean {
  return i >= 7 && t.slice(i - 7, i).toLowerCase() === 'mot de ';
}

/**
 * Runs every enabled built-in detector over `text` in one pass and returns their candidates in text order
 * (overlaps not yet resolved). Throws DetectionTimeout once `deadline` passes (checked every 64 K characters).
 */
export function scanBuiltins(text: string, sel: BuiltinSelection, deadline?: number): Candidate[] {
  const st = new ScanState(text, sel);
  if (sel.enabled.size === 0) return st.out;
  walk(st, deadline);
  // People's names (opt-in: seeded inactive) come from a tagger over the whole text, after the walk.
  if (sel.enabled.has('PERSON')) scanPeople(st, deadline);
  // Entities found in a decoded view are added when their escape is met, ahead of the walk's later ones.
  if (st.unordered) st.out.sort((a, b) => a.start - b.start || b.end - a.end);
  return st.out;
}

/** The walk over the state's whole text (the text of a request, or a decoded view of one of its tokens). */
function walk(st: ScanState, deadline?: number): void {
  const t = st.text;
  const n = st.n;
  const sel = st.sel;
  let checkAt = DEADLINE_STRIDE;
  // The character-kind table in a local: the hot loop reads it without going through the module's import cell.
  const kindOf = WORD_KIND;
  let i = 0;
  while (i < n) {
    if (i >= checkAt) {
      checkDeadline(deadline);
      checkAt = i + DEADLINE_STRIDE;
    }
    const c = t.charCodeAt(i);
    let kinds = kindOf[c];
    if (kinds !== 0) {
      // The run of the first character's kind, then (rarely) the rest of a word that mixes both kinds.
      let j = i + 1;
      while (j < n && kindOf[t.charCodeAt(j)] === kinds) j++;
      if (j < n && kindOf[t.charCodeAt(j)] !== 0) {
        kinds = 3;
        while (j < n && kindOf[t.charCodeAt(j)] !== 0) j++;
      }
      // A host name (microsoft.com, www.example.org/path): reported, and the walk goes on inside it.
      if (sel.url && t.charCodeAt(j) === 46 && j + 1 < n && isAlnum(t.charCodeAt(j + 1))) scanBareHost(st, i);
      // Plain words (lower-case or capitalized) followed by a blank or punctuation, the bulk of prose, are passed
      // over here; the rest go to onWord, and words with non-ASCII letters to onMixedWord.
      if (kinds !== 1) i = onMixedWord(st, i, j, kinds);
      else if (
        ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) &&
        j - i < LONG_WORD &&
        isInertWord(t, i, j, c) &&
        isPlainWord(t, i, j, c)
      )
        i = j;
      else i = onWord(st, i, j);
      continue;
    }
    let r = -1;
    switch (c) {
      case 64: // @
        if (sel.password) r = scanUrlCredentials(st, i);
        if (r < 0) r = scanEmail(st, i);
        else r++;
        break;
      case 43: // +
      case 40: // (
        if (i + 1 < n && isDigit(t.charCodeAt(i + 1)) && numberBoundaryBefore(t, i)) r = scanNumberRun(st, i);
        else if (c === 43 && i >= st.decodedUntil && isFormBlank(t, i)) scanEncodedToken(st, i, walk);
        break;
      case 45: // -
        if (t.charCodeAt(i + 1) === 45) r = scanPrivateKey(st, i);
        else if (t.charCodeAt(i + 1) === 112 && sel.password && (i === 0 || t.charCodeAt(i - 1) === 32))
          r = scanAttachedMysqlPassword(st, i);
        break;
      case 42: // * (a .pgpass line with a wildcard host)
        if (sel.password && t.charCodeAt(i + 1) === 58 && (i === 0 || t.charCodeAt(i - 1) === 10))
          r = scanPgpassLine(st, i);
        break;
      case 58: // :
        if (sel.url && t.charCodeAt(i + 1) === 47 && t.charCodeAt(i + 2) === 47) scanSchemeUrl(st, i);
        if (sel.ip && t.charCodeAt(i + 1) === 58 && (i === 0 || WORD_TABLE[t.charCodeAt(i - 1)] === 0))
          r = scanIpv6(st, i);
        break;
      case 37: // %
        if (i >= st.decodedUntil && isEscapeAt(t, i)) scanEncodedToken(st, i, walk);
        break;
      case 126: // ~ (an Azure client secret's `<digit>Q~` marker)
        if (sel.password && t.charCodeAt(i - 1) === 81 && isDigit(t.charCodeAt(i - 2)))
          r = scanAzureClientSecret(st, i);
        break;
    }
    i = r > i ? r : i + 1;
  }
}
