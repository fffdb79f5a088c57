// Credentials stated in prose rather than assigned: a user and password pair after a login word (`airbnb login
// jane@example.org / Plasma1994`, `test account qa@acme.io / F4lc0n#0`), and a token or secret named in a
// sentence whose value follows a colon later in it ("Jira API token for the onboarding script: RWM9cZa12QOWeY").
import { isAlnum, isWordCode } from './chars.ts';
import { emitValue, keyKind, looksLikeUrlOrPath, PASSWORD, STRONG_SECRET } from './password-detectors.ts';
import type { ScanState } from './scan-state.ts';
import { knownSecretPrefixAt } from './secret-detectors.ts';
import { isHex, isPlaceholderValue, isUuid, lexicon, polarityBefore } from './text-features.ts';

/** Words after which `user / password` is a credential pair. */
export const LOGIN_WORDS = [
  'login',
  'logins',
  'account',
  'acct',
  'credentials',
  'creds',
  'signin',
  'username',
  'zugang',
  'zugangsdaten',
  'anmeldung',
  'konto',
  'cuenta',
  'usuario',
  'acceso',
  'compte',
  'identifiants',
  'connexion',
  'conta',
  'acesso',
  'accesso',
  'utente',
  'inloggen',
  'inlog',
  'ログイン',
  'アカウント',
  '账号',
  '帐号',
  '登录',
  '계정',
  '로그인',
  'логин',
  'аккаунт',
];
/** Before an `e-mail / value` pair: login words, and password words ("email/password: a@b.c / …"). */
const LOGIN_LEX = lexicon([...LOGIN_WORDS, 'password', 'passwords', 'passwort', 'pass', 'passwd', 'pwd', 'pw'], []);

/** Words in running text that name a secret whose value may follow a colon later in the sentence. */
export const SECRET_MENTION_WORDS = [
  'token',
  'tokens',
  'secret',
  'secrets',
  'apikey',
  'key',
  'credential',
  'credentials',
];

function isBlank(c: number): boolean {
  return c === 32 || c === 9;
}

/** The value of a pair: letters with digits or symbols (a name, a number or a phone number is not one). */
function pairValueLike(t: string, s: number, e: number): boolean {
  if (e - s < 4 || e - s > 64) return false;
  let letters = false;
  let others = false;
  for (let k = s; k < e; k++) {
    const c = t.charCodeAt(k);
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) letters = true;
    else if (c > 32) others = true;
  }
  if (!letters || !others) return false;
  const v = t.slice(s, e);
  return !isPlaceholderValue(v) && !looksLikeUrlOrPath(v) && !/@[A-Za-z0-9-]+\.[A-Za-z]/.test(v);
}

const token = { start: 0, end: 0, quoted: false };

/** Reads the token at `k` (quoted, or up to a blank), without wrapping brackets and closing punctuation. */
function readToken(t: string, k: number): boolean {
  const n = t.length;
  const q = t.charCodeAt(k);
  if (q === 34 || q === 39 || q === 96) {
    const close = t.indexOf(String.fromCharCode(q), k + 1);
    if (close < 0 || close - k > 130 || t.slice(k, close).includes('\n')) return false;
    token.start = k + 1;
    token.end = close;
    token.quoted = true;
    return close > k + 1;
  }
  let e = k;
  while (e < n && e - k < 130 && t.charCodeAt(e) > 32 && t.charCodeAt(e) < 0x2e80) e++;
  let s = k;
  while (s < e && (t.charCodeAt(s) === 40 || t.charCodeAt(s) === 91)) s++;
  while (e > s) {
    const c = t.charCodeAt(e - 1);
    if (c === 46 || c === 44 || c === 59 || c === 58 || c === 41 || c === 93) e--;
    else break;
  }
  token.start = s;
  token.end = e;
  token.quoted = false;
  return e > s;
}

/**
 * After a user name or e-mail address [userStart, userEnd): ` / value` makes value its password when a login word
 * comes before the user on the line (or `loginSeen`). Returns the value's end, or -1.
 */
export function scanPairAfterUser(st: ScanState, userStart: number, userEnd: number, loginSeen: boolean): number {
  const t = st.text;
  let k = userEnd;
  while (k < st.n && k - userEnd < 3 && isBlank(t.charCodeAt(k))) k++;
  if (t.charCodeAt(k) !== 47 || t.charCodeAt(k + 1) === 47) return -1;
  k++;
  while (k < st.n && isBlank(t.charCodeAt(k))) k++;
  if (!loginSeen && polarityBefore(t, userStart, 60, LOGIN_LEX) <= 0) return -1;
  if (!readToken(t, k)) return -1;
  const { start, end, quoted } = token;
  if (knownSecretPrefixAt(t, start) || !pairValueLike(t, start, end)) return -1;
  if (!emitValue(st, PASSWORD, start, end, true)) return -1;
  return quoted ? end + 1 : end;
}

/** Nouns that follow login words ("login page / …") and are not user names. */
const NOT_USER_NAMES = new Set([
  'page',
  'screen',
  'form',
  'button',
  'link',
  'flow',
  'portal',
  'details',
  'info',
  'issue',
  'issues',
  'error',
  'errors',
  'problem',
  'history',
  'attempt',
  'attempts',
  'session',
  'settings',
  'type',
  'status',
  'number',
  'name',
  'id',
]);

/** A user name: letters (not only digits), and not one of the nouns that follow login words. */
function isUserName(t: string, s: number, e: number): boolean {
  let letters = false;
  for (let k = s; k < e; k++) {
    const c = t.charCodeAt(k) | 32;
    if (c >= 97 && c <= 122) letters = true;
  }
  return letters && !NOT_USER_NAMES.has(t.slice(s, e).toLowerCase());
}

function isUserChar(c: number): boolean {
  return isAlnum(c) || c === 46 || c === 95 || c === 45 || c === 43;
}

/**
 * After a login word ending at `e`: the first `user / password` pair on the rest of the line (a user that is an
 * e-mail address is left to the e-mail detector, which looks for the pair itself). Returns the value's end or -1.
 */
export function scanLoginPair(st: ScanState, e: number): number {
  const t = st.text;
  const limit = Math.min(st.n, e + 100);
  for (let k = e; k < limit; k++) {
    const c = t.charCodeAt(k);
    if (c === 10 || c === 64) return -1;
    if (c !== 47) continue;
    let ue = k;
    while (ue > e && isBlank(t.charCodeAt(ue - 1))) ue--;
    let us = ue;
    while (us > e && isUserChar(t.charCodeAt(us - 1))) us--;
    // A path or URL (/api/v2, https://…) is not a user name, nor is an account number or a word such as "page".
    const before = us > 0 ? t.charCodeAt(us - 1) : 32;
    if (ue - us < 2 || t.charCodeAt(k + 1) === 47 || before === 47 || before === 58 || isWordCode(before)) continue;
    if (!isUserName(t, us, ue)) continue;
    const r = scanPairAfterUser(st, us, ue, true);
    if (r > 0) return r;
  }
  return -1;
}

/**
 * A secret word in a sentence (`token`, `secret`, `key`): when a colon later in the same sentence and line is
 * followed by a value that looks generated, that value is the secret. `public key`, `page token` and other
 * non-secret compounds are skipped. Returns the value's end, or -1.
 */
export function scanSecretMention(st: ScanState, s: number, e: number): number {
  const t = st.text;
  let p = s;
  while (p > 0 && isBlank(t.charCodeAt(p - 1))) p--;
  let ps = p;
  while (ps > 0 && p - ps < 24 && isAlnum(t.charCodeAt(ps - 1))) ps--;
  if (ps < p && keyKind(t.slice(ps, p) + t.slice(s, e)) === 0) return -1;
  const limit = Math.min(st.n, e + 120);
  for (let k = e; k < limit; k++) {
    const c = t.charCodeAt(k);
    if (c === 10) return -1;
    const next = k + 1 < st.n ? t.charCodeAt(k + 1) : 10;
    if ((c === 46 || c === 33 || c === 63) && (next === 32 || next === 10)) return -1;
    if (c !== 58 || !isBlank(next)) continue;
    let v = k + 1;
    while (v < st.n && isBlank(t.charCodeAt(v))) v++;
    if (!readToken(t, v)) return -1;
    const { start, end, quoted } = token;
    if (knownSecretPrefixAt(t, start) || !looksGenerated(t, start, end)) return -1;
    // Ids and digests named in prose ("idempotency key", "…, value: <uuid>") are not the secret the word names.
    const value = t.slice(start, end);
    if (isUuid(value) || isHex(value)) return -1;
    if (!emitValue(st, STRONG_SECRET, start, end, quoted)) return -1;
    return quoted ? end + 1 : end;
  }
  return -1;
}

function classOf(c: number): number {
  if (c >= 97 && c <= 122) return 1;
  if (c >= 65 && c <= 90) return 2;
  if (c >= 48 && c <= 57) return 3;
  return 4;
}

/**
 * True when a value named in prose looks generated rather than written: its character classes change often
 * (`RWM9cZa12QOWeY`), unlike a word with a number (`Customers2024`, "key findings: Revenue2024 …").
 */
function looksGenerated(t: string, s: number, e: number): boolean {
  if (e - s < 8) return false;
  let changes = 0;
  let prev = classOf(t.charCodeAt(s));
  for (let k = s + 1; k < e; k++) {
    const c = classOf(t.charCodeAt(k));
    if (c !== prev) changes++;
    prev = c;
  }
  return changes >= 3 && changes * 5 >= e - s;
}
