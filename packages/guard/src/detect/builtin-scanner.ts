// The built-in detectors' single pass: one walk over the text that dispatches on trigger characters (`@`, `+`,
// `(`, `-----BEGIN`, `::`) and on each word's first characters (digits, capitals + digits, literal secret
// prefixes, key names, injection trigger words). Each detector returns where the walk resumes.
import { foldCase, hashStep, hashWord, isDigit, isUpper, isWordCode } from './chars.ts';
import { scanEmail } from './email-detector.ts';
import { checkDeadline } from './errors.ts';
import { scanIban } from './iban-detector.ts';
import { isInjectionTrigger, scanInjection } from './injection-detector.ts';
import { scanIpv6 } from './ip-detectors.ts';
import { numberBoundaryBefore, scanNumberRun } from './numeric-detectors.ts';
import {
  PASSWORD_MENTION_WORDS,
  scanAssignment,
  scanPasswordMention,
  scanUrlCredentials,
} from './password-detectors.ts';
import { type BuiltinSelection, ScanState } from './scan-state.ts';
import { scanPrivateKey, scanSecretAt } from './secret-detectors.ts';
import { isHexCode } from './text-features.ts';
import type { Candidate } from './types.ts';

/** How many characters the walk covers between deadline checks. */
const DEADLINE_STRIDE = 64 * 1024;

const MENTION_HASHES = new Set(PASSWORD_MENTION_WORDS.map(hashWord));
const MENTION_WORDS = new Set(PASSWORD_MENTION_WORDS);

function tail3(t: string, end: number): number {
  return (
    (foldCase(t.charCodeAt(end - 3)) * 65599 + foldCase(t.charCodeAt(end - 2))) * 65599 +
    foldCase(t.charCodeAt(end - 1))
  );
}

/** Last three letters of every key name that can hold a password or a secret (see password-detectors). */
const KEY_TAILS = new Set(
  [
    'password',
    'passwd',
    'passwort',
    'passcode',
    'passphrase',
    'kennwort',
    'contrasena',
    'contraseña',
    'senha',
    'wachtwoord',
    'parola',
    'motdepasse',
    'mot_de_passe',
    'haslo',
    'hasło',
    'salasana',
    'losenord',
    'lösenord',
    'adgangskode',
    'heslo',
    'пароль',
    'pwd',
    'pass',
    'secret',
    'key',
    'token',
    'credentials',
    'credential',
    'auth',
    'authorization',
    'apikey',
  ].map((w) => tail3(w, w.length)),
);

/** Characters that may follow a key name before its value: = : quote > blank backslash. */
function mayFollowKey(c: number): boolean {
  return c === 61 || c === 58 || c === 34 || c === 39 || c === 32 || c === 62 || c === 9 || c === 92 || c === 96;
}

function allHex(t: string, s: number, e: number): boolean {
  for (let k = s; k < e; k++) if (!isHexCode(t.charCodeAt(k))) return false;
  return true;
}

function onWord(st: ScanState, i: number): number {
  const t = st.text;
  const n = st.n;
  const sel = st.sel;
  let j = i;
  let h = 0;
  while (j < n) {
    const c = t.charCodeAt(j);
    if (!isWordCode(c)) break;
    h = hashStep(h, c);
    j++;
  }
  const c0 = t.charCodeAt(i);
  const next = j < n ? t.charCodeAt(j) : 0;
  let r = -1;
  if (isDigit(c0)) {
    if (sel.ip && next === 58 && j - i <= 4 && allHex(t, i, j)) r = scanIpv6(st, i);
    if (r < 0 && numberBoundaryBefore(t, i)) r = scanNumberRun(st, i);
    return Math.max(r, j);
  }
  r = scanSecretAt(st, i, c0);
  if (r > 0) return r;
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
  if (sel.ip && next === 58 && j - i <= 4 && allHex(t, i, j) && (i === 0 || t.charCodeAt(i - 1) !== 58)) {
    r = scanIpv6(st, i);
    if (r > 0) return r;
  }
  if (sel.password) {
    const len = j - i;
    if (
      mayFollowKey(next) &&
      (len >= 3
        ? KEY_TAILS.has(tail3(t, j))
        : len === 2 && foldCase(c0) === 112 && foldCase(t.charCodeAt(i + 1)) === 119)
    ) {
      r = scanAssignment(st, i, j);
      if (r > 0) return r;
    }
    if (MENTION_HASHES.has(h) && MENTION_WORDS.has(t.slice(i, j).toLowerCase())) {
      if (h !== PASSE_HASH || precededByMotDe(t, i)) {
        r = scanPasswordMention(st, j);
        if (r > 0) return r;
      }
    }
  }
  if (sel.injection && isInjectionTrigger(h)) {
    r = scanInjection(st, i, h);
    if (r > 0) return r;
  }
  return j;
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
  const t = text;
  const n = t.length;
  let checkAt = DEADLINE_STRIDE;
  let i = 0;
  while (i < n) {
    if (i >= checkAt) {
      checkDeadline(deadline);
      checkAt = i + DEADLINE_STRIDE;
    }
    const c = t.charCodeAt(i);
    if (isWordCode(c)) {
      i = onWord(st, i);
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
        break;
      case 45: // -
        if (t.charCodeAt(i + 1) === 45) r = scanPrivateKey(st, i);
        break;
      case 58: // :
        if (sel.ip && t.charCodeAt(i + 1) === 58 && (i === 0 || !isWordCode(t.charCodeAt(i - 1)))) r = scanIpv6(st, i);
        break;
    }
    i = r > i ? r : i + 1;
  }
  return st.out;
}
