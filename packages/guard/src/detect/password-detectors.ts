// GENERIC_PASSWORD: values assigned to password-, secret- and token-like keys (key=value, key: value, JSON,
// XML elements, CLI flags, SQL), passwords named in free text ("my password is …"), and URL credentials.
import { hashWord, isAlnum, isWordCode } from './chars.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { emitKeyedValue, keyedFormatFor } from './secret-catalogue.ts';
import { knownSecretPrefixAt } from './secret-detectors.ts';
import { charClassCount, hasAlphabetRun, isHex, isPlaceholderValue, isUuid, shannonEntropy } from './text-features.ts';

// How a key names what its value holds (keyKind's answers; 0 for keys that hold no secret).
/** The key names a password: any value but code, URLs and dates is reported. */
export const PASSWORD = 1;
/** The key names a secret (API key, client secret): the value must look generated. */
export const STRONG_SECRET = 2;
/** The key is a weaker word (token, key, auth): the value must look generated and mix three character classes. */
export const WEAK_SECRET = 3;

/** Key names (and their endings) that hold a password, in the languages guard reads. */
export const PASSWORD_SUFFIXES = [
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
  'haslo',
  'hasło',
  'salasana',
  'losenord',
  'lösenord',
  'adgangskode',
  'heslo',
  'jelszó',
  'jelszo',
  'şifre',
  'sifre',
  'passord',
  'contrasenya',
  'clave',
  'пароль',
  'парола',
  'лозинка',
  'κωδικός',
  'pwd',
  // ConvertTo-SecureString "…" -AsPlainText
  'securestring',
];
const STRONG_SUFFIXES = [
  'secret',
  'secretkey',
  'apikey',
  'apitoken',
  'apisecret',
  'authtoken',
  'accesstoken',
  'refreshtoken',
  'privatetoken',
  'bearertoken',
  'sessiontoken',
  'secrettoken',
  'credentials',
  'credential',
  'signingkey',
  'encryptionkey',
  'masterkey',
  'appkey',
  'authkey',
  'sessionkey',
  'clientkey',
  'privatekey',
  'accesskey',
  'licensekey',
  'creds',
];
const WEAK_SUFFIXES = ['token', 'key', 'auth', 'authorization'];
const NOT_SECRET_SUFFIXES = [
  'publickey',
  'pubkey',
  'publishablekey',
  'primarykey',
  'foreignkey',
  'sortkey',
  'partitionkey',
  'rangekey',
  'cachekey',
  'idempotencykey',
  'dedupkey',
  'deduplicationkey',
  'hashkey',
  'rowkey',
  'objectkey',
  's3key',
  'storagekey',
  'indexkey',
  'uniquekey',
  'routingkey',
  'lookupkey',
  'mapkey',
  'groupkey',
  'messagekey',
  'sshpublickey',
  'csrftoken',
  'xsrftoken',
  'authenticitytoken',
  'schemakey',
  'bucketkey',
  'publictoken',
  'pagetoken',
  'nexttoken',
  'nextpagetoken',
  'continuationtoken',
  'paginationtoken',
  'cursortoken',
  'synctoken',
  'resumetoken',
  'bypass',
  'compass',
];
/** Public identifiers that look like secrets but are not (Stripe object ids, publishable keys, ARNs). */
const PUBLIC_ID_PREFIXES = [
  'pk_live_',
  'pk_test_',
  'cus_',
  'pi_',
  'ch_',
  'prod_',
  'price_',
  'sub_',
  'in_',
  'txn_',
  'acct_',
  'evt_',
  'src_',
  'seti_',
  'pm_',
  'card_',
  'ba_',
  're_',
  'po_',
  'tr_',
  'arn:',
  'urn:',
];
/** PUBLIC_ID_FIRST[c] is 1 when some public-id prefix starts with the ASCII character c. */
const PUBLIC_ID_FIRST = new Uint8Array(128);
for (const p of PUBLIC_ID_PREFIXES) PUBLIC_ID_FIRST[p.charCodeAt(0)] = 1;

const keyKinds = new Map<number, number>();

/** keyKind, memoized by the key's case-folded hash: the same key names recur (password, api_key, DB_PASSWORD). */
export function keyKind(fullKey: string): number {
  const h = hashWord(fullKey);
  let kind = keyKinds.get(h);
  if (kind === undefined) {
    kind = classifyKey(fullKey);
    if (keyKinds.size >= 4096) keyKinds.clear();
    keyKinds.set(h, kind);
  }
  return kind;
}

function classifyKey(fullKey: string): number {
  // A numbered key is the same key (api_token_2, SECRET1).
  const k = fullKey
    .toLowerCase()
    .replace(/[-_.\s]/g, '')
    .replace(/\d+$/, '');
  if (k.length === 0) return 0;
  // publicKey, publishable_key, public_token: published on purpose.
  if (k.startsWith('public') || k.startsWith('publishable')) return 0;
  for (const s of NOT_SECRET_SUFFIXES) if (k.endsWith(s)) return 0;
  for (const s of PASSWORD_SUFFIXES) if (k.endsWith(s)) return PASSWORD;
  if (k.endsWith('pass') || k === 'pw' || k.endsWith('dbpw')) return PASSWORD;
  for (const s of STRONG_SUFFIXES) if (k.endsWith(s)) return STRONG_SECRET;
  for (const s of WEAK_SUFFIXES) if (k.endsWith(s)) return WEAK_SECRET;
  // mySecretString, todo_secret_do_not_commit, api_token_value: a secret word inside the name; the value must
  // then look generated like any token's (three character classes, entropy).
  if (/secret(?!s)|apikey|apitoken|accesstoken|authtoken/.test(k)) return WEAK_SECRET;
  return 0;
}

function isKeyChar(c: number): boolean {
  return isWordCode(c) || c === 45 || c === 46;
}

interface ValueSpan {
  start: number;
  end: number;
  quoted: boolean;
}

const valueSpan: ValueSpan = { start: 0, end: 0, quoted: false };

function readValue(t: string, k: number): boolean {
  const n = t.length;
  let j = k;
  let c = t.charCodeAt(j);
  if (c === 92 && (t.charCodeAt(j + 1) === 34 || t.charCodeAt(j + 1) === 39)) {
    // JSON embedded in a string: \"value\"
    const q = t.charCodeAt(j + 1);
    const s = j + 2;
    let e = s;
    while (e < n && e - s < 512) {
      const d = t.charCodeAt(e);
      if (d === 92 && t.charCodeAt(e + 1) === q) break;
      if (d === 10) return false;
      e++;
    }
    valueSpan.start = s;
    valueSpan.end = e;
    valueSpan.quoted = true;
    return e > s;
  }
  if (c === 34 || c === 39 || c === 96) {
    const q = c;
    const s = j + 1;
    let e = s;
    while (e < n && e - s < 512) {
      const d = t.charCodeAt(e);
      if (d === q) break;
      if (d === 92) e++;
      else if (d === 10) return false;
      e++;
    }
    if (e >= n || t.charCodeAt(e) !== q) return false;
    valueSpan.start = s;
    valueSpan.end = e;
    valueSpan.quoted = true;
    return e > s;
  }
  const s = j;
  while (j < n && j - s < 512) {
    c = t.charCodeAt(j);
    // Unquoted values end at whitespace and at the delimiters of the formats they sit in (JSON, query strings,
    // connection strings, XML, markdown), and where CJK text or full-width punctuation resumes (…：Marble94です).
    if (c <= 32 || c === 44 || c === 59 || c === 34 || c === 39 || c === 96 || c === 60 || c >= 0x2e80) break;
    // An escaped line break or tab inside a string literal ends the line the value is on (`KEY=v\nNEXT=1`).
    if (c === 92 && (t.charCodeAt(j + 1) === 110 || t.charCodeAt(j + 1) === 114 || t.charCodeAt(j + 1) === 116)) break;
    // `&` ends a value only where a query string goes on (`&next=`); inside a password it is a character.
    if (c === 38 && /^&[A-Za-z_][\w.-]*=/.test(t.slice(j, j + 40))) break;
    if (c === 41 || c === 93 || c === 125 || c === 62 || c === 124) break;
    j++;
  }
  // A full stop or colon closing a sentence is not part of the value ("my password: hunter2."); `!` and `?` are
  // common password characters and stay.
  while (j > s) {
    const last = t.charCodeAt(j - 1);
    const next = j < n ? t.charCodeAt(j) : 32;
    if ((last === 46 || last === 58) && (next === 32 || next === 10 || next === 13) && j - s > 1) j--;
    else break;
  }
  valueSpan.start = s;
  valueSpan.end = j;
  valueSpan.quoted = false;
  return j > s;
}

const AUTH_SCHEMES = ['bearer', 'basic', 'token', 'bot', 'digest', 'apikey', 'api-token', 'api-key', 'sso-key'];

/**
 * True when the lower-case ASCII `word` is at `k` in t as `toLowerCase` would compare it, in place: A-Z fold to
 * a-z, and the Kelvin sign (U+212A) to `k`, the one other code unit that lower-cases to ASCII.
 */
function foldedWordAt(t: string, k: number, word: string): boolean {
  for (let m = 0; m < word.length; m++) {
    const c = t.charCodeAt(k + m);
    const lower = c >= 65 && c <= 90 ? c + 32 : c === 0x212a ? 107 : c;
    if (lower !== word.charCodeAt(m)) return false;
  }
  return true;
}

/** Length of an HTTP auth scheme word (with its blank) at the start of a value, or 0. */
function authSchemeLength(t: string, start: number, end: number): number {
  for (const s of AUTH_SCHEMES) {
    if (end - start < s.length || !foldedWordAt(t, start, s)) continue;
    const after = start + s.length;
    if (after === end) return s.length; // unquoted: the credential is the next word
    if (t.charCodeAt(after) === 32) return s.length + 1;
  }
  return 0;
}

/** Hashes, digests and key fingerprints: hex, optionally behind an algorithm label (sha256:…, md5-…), or SHA256:base64. */
function looksLikeDigest(v: string): boolean {
  if (/^(?:sha\d*|md5|blake\d*\w*|etag|crc32)?[:=-]?([0-9a-fA-F]{16,})$/i.test(v)) return true;
  return /^(?:sha\d+|md5):[A-Za-z0-9+/=]{20,}$/i.test(v);
}

/** Values that are code, not secrets: identifiers, member chains, calls, booleans, numbers. */
function looksLikeCode(v: string): boolean {
  if (v.includes('(') || v.includes('${') || v.startsWith('@') || v.startsWith('#')) return true;
  // Each pattern below is tried only where its first character (and the `{` or `.` it needs) is there.
  const c0 = v.charCodeAt(0);
  const identStart = (c0 >= 65 && c0 <= 90) || (c0 >= 97 && c0 <= 122) || c0 === 95 || c0 === 36;
  // A struct or object literal: pkg.Type{Field
  if (identStart && v.includes('{') && /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\{/.test(v)) return true;
  if ((c0 === 45 || (c0 >= 48 && c0 <= 57)) && /^-?\d+(?:\.\d+)?$/.test(v)) return true;
  // Member chains are code when they start at a well-known object or end at a key name (req.body.password);
  // "cobalt.copper.violet" in a .env file is a passphrase.
  if (!identStart || !v.includes('.') || !/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v)) return false;
  const parts = v.split('.');
  return CODE_ROOTS.has(parts[0].toLowerCase()) || keyKind(parts[parts.length - 1]) !== 0;
}

/** True for URLs and file paths. */
export function looksLikeUrlOrPath(v: string): boolean {
  return v.includes('://') || v.startsWith('/') || v.startsWith('./') || v.startsWith('~/') || v.startsWith('www.');
}

function isPublicId(v: string): boolean {
  const c = v.charCodeAt(0);
  if (c >= 128 || PUBLIC_ID_FIRST[c] === 0) return false;
  for (const p of PUBLIC_ID_PREFIXES) if (v.startsWith(p)) return true;
  return false;
}

/** 0..1 from character classes and length. */
function passwordStrength(v: string): number {
  const classes = charClassCount(v);
  const len = Math.min(v.length, 16);
  return ((classes - 1) / 3) * 0.6 + (len / 16) * 0.4;
}

function hasLower(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 97 && c <= 122) return true;
  }
  return false;
}

/** Decides whether `v` (the value of a key of `kind`) is reported, and emits it. */
export function emitValue(
  st: ScanState,
  kind: number,
  start: number,
  end: number,
  quoted: boolean,
  credential = false,
): boolean {
  const v = st.text.slice(start, end);
  if (v.length < 4 || v.length > (credential ? 2048 : 256)) return false;
  if (knownSecretPrefixAt(st.text, start)) return false;
  // "email/password: jane@example.org / …": an e-mail address is the user, left to the e-mail detector.
  if (v.includes('@') && /^[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/.test(v)) return false;
  if (isPlaceholderValue(v) || hasAlphabetRun(v)) {
    st.emit('GENERIC_PASSWORD', start, end, evidence({ placeholder: true, context: 1 }));
    return true;
  }
  if (looksLikeCode(v) && !quoted) return false;
  // YAML tags stand for the value (`password: !vault |`, CloudFormation `!Ref DbPassword`).
  const first = v.charCodeAt(0);
  if (!quoted && first === 33 && /^![A-Za-z]+$/.test(v)) return false;
  if (looksLikeUrlOrPath(v) || isPublicId(v)) return false;
  const classes = charClassCount(v);
  // Dates and timestamps are not credentials, whatever the key says.
  const firstDigit = first >= 48 && first <= 57;
  if (firstDigit && /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?$|^\d{1,2}[./]\d{1,2}[./]\d{2,4}$/.test(v)) return false;
  if (kind === PASSWORD) {
    if (!quoted && classes === 1 && v.length < 10) return false;
    // The key names the value a password: that is the structural validation a password can have.
    st.emit('GENERIC_PASSWORD', start, end, evidence({ valid: true, context: 1, strength: passwordStrength(v) }));
    return true;
  }
  // A request header's credential or an API key's value: UUIDs and hex strings are how many services issue keys.
  if (
    (credential || kind === STRONG_SECRET) &&
    (isUuid(v) || (isHex(v) && v.length >= (credential ? 16 : 24) && !/^\d+$/.test(v)))
  ) {
    st.emit('GENERIC_PASSWORD', start, end, evidence({ valid: null, context: 1, strength: 0.8 }), -0.04);
    return true;
  }
  // Secret-like keys: the value must look generated, not like an id, a hash, a name or a setting path.
  if (isUuid(v) || isHex(v) || looksLikeDigest(v) || /^[\d\s:./-]+$/.test(v)) return false;
  // Artifact coordinates and versioned names (jjwt-jackson-0.11.2, SalesResults-1.2).
  const last = v.charCodeAt(v.length - 1);
  if (last >= 48 && last <= 57 && /[-_.]v?\d+(?:\.\d+)+$/.test(v)) return false;
  const firstLetter = (first >= 65 && first <= 90) || (first >= 97 && first <= 122);
  if (firstLetter && /^[A-Za-z][A-Za-z:._/-]*$/.test(v)) return false;
  if ((first === 118 || firstDigit) && /^v?\d+(?:\.\d+)+(?:[-+][\w.]+)?$/.test(v)) return false;
  // Generated secrets have no blanks and mix cases; SKUs, prices and reference numbers do not.
  if (/\s/.test(v) || !hasLower(v)) return false;
  // Entropy cannot exceed log2(length): short values are held to what their length allows.
  const h = shannonEntropy(v);
  const minEntropy = Math.min(2.8, Math.log2(v.length) - 0.7);
  if (kind === STRONG_SECRET || credential) {
    if (v.length < 8 || classes < 2 || h < minEntropy) return false;
  } else {
    if (v.length < 8 || classes < 3 || h < minEntropy) return false;
  }
  const strength = passwordStrength(v);
  const valid = kind === STRONG_SECRET ? true : null;
  st.emit(
    'GENERIC_PASSWORD',
    start,
    end,
    evidence({ valid, context: 1, strength }),
    kind === STRONG_SECRET ? -0.02 : -0.06,
  );
  return true;
}

/** scanAssignment's answer when a key with an operator was found but nothing was reported: skip the mention scan. */
export const ASSIGNMENT_REJECTED = -2;

/** True when `<` or `<ns:` opens the element whose name is the word at `s`. */
function opensXmlElement(t: string, s: number): boolean {
  if (s > 0 && t.charCodeAt(s - 1) === 60) return true;
  if (s < 2 || t.charCodeAt(s - 1) !== 58) return false;
  let j = s - 2;
  while (j >= 0 && s - j < 32 && isAlnum(t.charCodeAt(j))) j--;
  return j >= 0 && j < s - 2 && t.charCodeAt(j) === 60;
}

/** End (after `>`) of the start tag whose attributes begin at `k`, on the same line; -1 when none or self-closing. */
function startTagEnd(t: string, k: number): number {
  for (let j = k; j < t.length && j - k < 400; j++) {
    const c = t.charCodeAt(j);
    if (c === 62) return t.charCodeAt(j - 1) === 47 ? -1 : j + 1;
    if (c === 60 || c === 10) return -1;
  }
  return -1;
}

/**
 * `<add key="DbPassword" value="…"/>`, `name="password" value="…"`: when the quoted value at [qs, qe) names a
 * setting and a `value=` attribute follows, reports that value if the setting is a password or secret.
 * Returns the resume position, or -1 when no value attribute follows.
 */
function scanNameValuePair(st: ScanState, qs: number, qe: number): number {
  const t = st.text;
  const m = /["']?\s+value\s*=\s*/y;
  m.lastIndex = qe;
  if (!m.test(t)) return -1;
  const kind = keyKind(t.slice(qs, qe));
  if (kind === 0 || !readValue(t, m.lastIndex)) return qe + 1;
  const { start, end, quoted } = valueSpan;
  if (!quoted) return qe + 1;
  return emitValue(st, kind, start, end, true) ? end + 1 : qe + 1;
}

const CALL_FIRST_ARG = /(?:password|passwd|pwd|passphrase|secret)$/;
const CALL_SECOND_ARG = /(?:login|auth|basicauth|authenticate|authentication|credential|credentials|connect|signin)$/;

/**
 * Credentials passed to a call: `setPassword("…")` (first string argument), `login("user", "…")`,
 * `SetBasicAuth(user, "…")`, `new NetworkCredential("user", "…")` (second). Returns the resume position or -1.
 */
function scanCredentialCall(st: ScanState, s: number, e: number): number {
  const t = st.text;
  const name = t.slice(s, e).toLowerCase();
  let want: number;
  if (CALL_FIRST_ARG.test(name)) want = 1;
  else if (CALL_SECOND_ARG.test(name)) want = 2;
  else return -1;
  let k = e + 1;
  let arg = 1;
  const limit = Math.min(t.length, e + 300);
  while (k < limit) {
    while (k < limit && (t.charCodeAt(k) === 32 || t.charCodeAt(k) === 9)) k++;
    const c = t.charCodeAt(k);
    if (arg === want) {
      if ((c !== 34 && c !== 39) || !readValue(t, k)) return -1;
      const { start, end } = valueSpan;
      // Resume inside the arguments: the user name before the password may be an e-mail address.
      return emitValue(st, PASSWORD, start, end, true) ? e + 1 : -1;
    }
    // Skip this argument: a string literal or anything up to the next comma.
    if (c === 34 || c === 39) {
      if (!readValue(t, k)) return -1;
      k = valueSpan.end + 1;
    }
    while (k < limit && t.charCodeAt(k) !== 44 && t.charCodeAt(k) !== 41 && t.charCodeAt(k) !== 10) k++;
    if (t.charCodeAt(k) !== 44) return -1;
    k++;
    arg++;
  }
  return -1;
}

/**
 * Command-line credentials: `-u user:pass` / `--user user:pass` (curl), `-p 'pass'` / `-p'pass'` (mysql,
 * sshpass), `-a pass` (redis-cli). `s` is the flag letter's position. Returns the resume position or -1.
 */
export function scanCliCredential(st: ScanState, s: number, e: number): number {
  const t = st.text;
  const flag = t.charCodeAt(s) | 32;
  if (flag === 97 && !t.slice(Math.max(0, t.lastIndexOf('\n', s) + 1), s).includes('redis-cli')) return -1;
  let k = e;
  const attached = t.charCodeAt(k) === 34 || t.charCodeAt(k) === 39;
  if (!attached) {
    if (t.charCodeAt(k) !== 32) return -1;
    while (k < t.length && t.charCodeAt(k) === 32) k++;
  }
  if (!readValue(t, k)) return -1;
  const { start, end, quoted } = valueSpan;
  if (flag === 117) {
    // user:password
    const colon = t.indexOf(':', start);
    if (colon < 0 || colon >= end - 1) return -1;
    // Resume at the user name (it may be an e-mail address); the password span is already reported.
    return emitValue(st, PASSWORD, colon + 1, end, true) ? k : -1;
  }
  if (!quoted && !passwordLike(t.slice(start, end))) return -1;
  return emitValue(st, PASSWORD, start, end, true) ? (quoted ? end + 1 : end) : -1;
}

const CODE_ROOTS = new Set([
  'req',
  'request',
  'res',
  'body',
  'env',
  'process',
  'os',
  'config',
  'conf',
  'cfg',
  'settings',
  'this',
  'self',
  'params',
  'args',
  'options',
  'opts',
  'data',
  'user',
  'form',
  'values',
  'props',
  'ctx',
  'context',
  'app',
  'secrets',
  'vault',
  'input',
  'credentials',
  'creds',
  'auth',
  'db',
  'database',
  'window',
  'document',
  'session',
  'payload',
  'event',
  'state',
  'model',
  'record',
  'row',
  'item',
  'obj',
  'object',
  'result',
  'response',
  'account',
  'profile',
  'store',
  'spec',
  'global',
  'globals',
  'import',
  'module',
  'system',
]);

/**
 * Called for a word [s, e) whose next non-blank character assigns a value (`=`, `:`, `=>`, an XML `>`, a CLI
 * flag, a call's `(`). Emits the value when the key names a password or secret. Returns the position to resume
 * at, ASSIGNMENT_REJECTED when an assignment was seen but not reported, or -1.
 */
export function scanAssignment(st: ScanState, s: number, e: number): number {
  const t = st.text;
  const n = st.n;
  let k = e;
  let c = t.charCodeAt(k);
  if (c === 40) return scanCredentialCall(st, s, e);
  // The key's closing quote: "password": / 'password' => / \"password\":
  if (c === 92 && t.charCodeAt(k + 1) === 34) k += 2;
  else if (c === 34 || c === 39 || c === 96) k++;
  const afterKey = k;
  let xml = false;
  if (opensXmlElement(t, s)) {
    // <password>value</password>, <wsse:Password Type="…">value</wsse:Password>
    const tagEnd = c === 62 ? e + 1 : c === 32 ? startTagEnd(t, e) : -1;
    if (tagEnd < 0) return -1;
    xml = true;
    k = tagEnd;
  } else {
    while (k < n && k - afterKey < 4 && (t.charCodeAt(k) === 32 || t.charCodeAt(k) === 9)) k++;
    c = t.charCodeAt(k);
  }
  let flag = false;
  // Go's typed declaration: var apiToken string = "…"
  if (!xml && c !== 61 && c !== 58 && k > afterKey && isTypeWordThenEquals(t, k)) {
    while (k < n && t.charCodeAt(k) !== 61) k++;
    c = 61;
  }
  if (xml) {
    // value starts right after the start tag, after any blank lines and indentation
    const ws = k;
    while (k < n && k - ws < 64 && t.charCodeAt(k) <= 32) k++;
  } else if (c === 61) {
    if (t.charCodeAt(k + 1) === 61) return -1;
    k += t.charCodeAt(k + 1) === 62 ? 2 : 1;
  } else if (c === 58) {
    // key: value, key := value, key ::= value, key :::= value (Make), but not a C++/Ruby scope (a::b)
    let colons = 1;
    while (colons < 3 && t.charCodeAt(k + colons) === 58) colons++;
    if (colons > 1 && t.charCodeAt(k + colons) !== 61) return -1;
    k += colons + (t.charCodeAt(k + colons) === 61 ? 1 : 0);
  } else if ((c === 63 || c === 46 || c === 43) && t.charCodeAt(k + 1) === 61) {
    k += 2; // ?= (Make), .= (PHP), += (shell, Make)
  } else if (c === 44 && afterKey > e && quotedArgumentFollows(t, k + 1)) {
    k++; // System.setProperty("API_TOKEN", "…"), getenv("SECRET", "…"): the string after a quoted key
  } else if (c === 0xff1a || c === 0xff1d) {
    k++;
  } else if (k > afterKey && isFlagName(t, s)) {
    flag = true; // --password value, -Password value, -SecretKey value (PowerShell)
  } else if (k > afterKey && (c === 39 || c === 34)) {
    flag = true; // SQL: PASSWORD 'value', IDENTIFIED BY 'value'
  } else return -1;
  // Key name with its dotted or dashed prefix (db.password, x-api-key).
  let ks = s;
  while (ks > 0 && s - ks < 64 && isKeyChar(t.charCodeAt(ks - 1))) ks--;
  const keyName = t.slice(ks, e);
  let kind = keyKind(keyName);
  if (kind === 0 && flag && (isIdentifiedBy(t, s, e) || isSecureStringArgument(t, ks, keyName))) kind = PASSWORD;
  const lowerKey = kind === 0 || kind === WEAK_SECRET ? keyName.toLowerCase() : '';
  if (kind === 0 && lowerKey !== 'name') return -1;
  // "sort key: …", "page token: …": the word before a bare key word can make it something else.
  if (kind === WEAK_SECRET && ks === s && !flag && compoundIsNotSecret(t, s, e)) return ASSIGNMENT_REJECTED;
  if (flag && kind === 0) return -1;
  // Markdown emphasis and blanks between the operator and the value (**Password:** value).
  const opEnd = k;
  while (!xml && k < n && k - opEnd < 8) {
    const d = t.charCodeAt(k);
    if (d === 32 || d === 9 || d === 42) k++;
    else break;
  }
  // Templates and references stand in for the value: report them as placeholders (never above the allow threshold).
  if (t.charCodeAt(k) === 123 && t.charCodeAt(k + 1) === 123 && kind !== 0) {
    const close = t.indexOf('}}', k + 2);
    if (close > 0 && close - k < 200) {
      st.emit('GENERIC_PASSWORD', k, close + 2, evidence({ placeholder: true, context: 1 }));
      return close + 2;
    }
  }
  if (!readValue(t, k)) return ASSIGNMENT_REJECTED;
  let { start, end, quoted } = valueSpan;
  if (!quoted && isCmdletCall(t, start, end)) return ASSIGNMENT_REJECTED;
  if (quoted && (lowerKey === 'key' || lowerKey === 'name')) {
    const r = scanNameValuePair(st, start, end);
    if (r >= 0) return r;
    if (lowerKey === 'name') return ASSIGNMENT_REJECTED;
  }
  if (kind === 0) return ASSIGNMENT_REJECTED;
  // Authorization: Bearer <token> / "Basic <base64>": the credential is what follows the scheme.
  const scheme = authSchemeLength(t, start, end);
  if (scheme > 0) {
    if (quoted) start += scheme;
    else {
      let v = end;
      while (v < n && (t.charCodeAt(v) === 32 || t.charCodeAt(v) === 9)) v++;
      if (!readValue(t, v)) return ASSIGNMENT_REJECTED;
      ({ start, end, quoted } = valueSpan);
    }
    if (start >= end) return ASSIGNMENT_REJECTED;
  }
  if (xml) {
    let close = end;
    while (close < n && close - end < 64 && t.charCodeAt(close) <= 32) close++;
    if (t.charCodeAt(close) !== 60) return ASSIGNMENT_REJECTED;
  }
  // A key that names a vendor with a fixed token format (telegram_bot_token, DATADOG_API_KEY): the value is reported
  // when it fits the format (hex included), and a value outside it is not the vendor's token. A password key
  // (JIRA_PASSWORD, twitter_pass) holds the account's password, not the vendor's token: it stays a password.
  const keyed = kind === PASSWORD ? undefined : keyedFormatFor(keyName);
  if (keyed && !knownSecretPrefixAt(t, start)) {
    if (emitKeyedValue(st, keyed, start, end)) return quoted ? end + 1 : end;
    if (keyed.exclusive !== false) return ASSIGNMENT_REJECTED;
  }
  // A request header (curl -H "Authorization: …", "X-Api-Key: …") or an auth scheme: the value is a credential.
  const credential = scheme > 0 || inHeaderArgument(t, ks);
  if (!emitValue(st, kind, start, end, quoted || xml, credential)) return ASSIGNMENT_REJECTED;
  return quoted ? end + 1 : end;
}

/** ` string = `, ` String = ` after a key: a type name between the key and `=` (Go's `var key string = "…"`). */
function isTypeWordThenEquals(t: string, k: number): boolean {
  let j = k;
  while (j < t.length && j - k < 16 && /[A-Za-z0-9_[\]*]/.test(t[j])) j++;
  if (j === k) return false;
  const word = t.slice(k, j).toLowerCase();
  if (word !== 'string' && word !== 'str' && word !== '[]byte' && word !== '*string') return false;
  while (j < t.length && t.charCodeAt(j) === 32) j++;
  return t.charCodeAt(j) === 61 && t.charCodeAt(j + 1) !== 61;
}

/** True when a quoted string follows (after blanks) at `k`: the value argument after a quoted key. */
function quotedArgumentFollows(t: string, k: number): boolean {
  let j = k;
  while (j < t.length && j - k < 4 && t.charCodeAt(j) === 32) j++;
  return t.charCodeAt(j) === 34 || t.charCodeAt(j) === 39;
}

/** True when the key at `ks` opens a request-header argument: `-H "Authorization: …"`, `--header 'X-Api-Key: …'`. */
function inHeaderArgument(t: string, ks: number): boolean {
  const q = t.charCodeAt(ks - 1);
  if (q !== 34 && q !== 39) return false;
  let j = ks - 2;
  while (j >= 0 && ks - j < 8 && t.charCodeAt(j) === 32) j--;
  if (t.charCodeAt(j) === 72 && t.charCodeAt(j - 1) === 45) return true; // -H
  return j >= 7 && t.slice(j - 7, j + 1) === '--header';
}

/** True when the word before the key word [s, e) (one blank between) makes a non-secret name: `sort key`, `page token`. */
function compoundIsNotSecret(t: string, s: number, e: number): boolean {
  if (s < 2 || t.charCodeAt(s - 1) !== 32) return false;
  let p = s - 1;
  while (p > 0 && s - p < 24 && isAlnum(t.charCodeAt(p - 1))) p--;
  return p < s - 1 && keyKind(t.slice(p, s - 1) + t.slice(s, e)) === 0;
}

/** `--name` or a PowerShell-style `-Name` (at least three letters, after a blank): a command-line flag. */
function isFlagName(t: string, s: number): boolean {
  if (s < 1 || t.charCodeAt(s - 1) !== 45) return false;
  const p = s >= 2 ? t.charCodeAt(s - 2) : 32;
  return p === 45 || p === 32 || p === 9;
}

/** `$pw = ConvertTo-SecureString "…"`, `$c = Get-Credential -UserName …`: a cmdlet call, not the value itself. */
function isCmdletCall(t: string, s: number, e: number): boolean {
  if (!/^[A-Z][A-Za-z]+-[A-Z][A-Za-z]+$/.test(t.slice(s, e))) return false;
  let k = e;
  while (t.charCodeAt(k) === 32) k++;
  const c = t.charCodeAt(k);
  return k > e && (c === 34 || c === 39 || c === 45 || c === 36 || c === 40);
}

/** `ConvertTo-SecureString -String "…" -AsPlainText`: the plain text handed to the cmdlet. */
function isSecureStringArgument(t: string, ks: number, keyName: string): boolean {
  return (
    keyName.toLowerCase() === '-string' &&
    t
      .slice(Math.max(0, ks - 24), ks)
      .toLowerCase()
      .includes('securestring')
  );
}

function isIdentifiedBy(t: string, s: number, e: number): boolean {
  return e - s === 2 && s >= 11 && t.slice(s - 11, e).toLowerCase() === 'identified by';
}

const FREE_TEXT_STOP = new Set([
  'is',
  'was',
  'are',
  'be',
  'to',
  'the',
  'a',
  'an',
  'and',
  'of',
  'for',
  'my',
  'your',
  'our',
  'it',
]);

/** True when a free-text word looks like a password rather than a word, a date, a version, an e-mail or a URL. */
function passwordLike(w: string): boolean {
  if (w.length < 6 || w.length > 64) return false;
  // Three character classes, or a passphrase of three or more words (harbor-anchor-walnut).
  if (charClassCount(w) < 3 && !/^[A-Za-z]{3,}(?:[-._][A-Za-z]{3,}){2,}\d*$/.test(w)) return false;
  if (/[{}<>=\\/]/.test(w)) return false;
  if (w.includes('@') && w.includes('.') && /@[A-Za-z0-9-]+\.[A-Za-z]/.test(w)) return false;
  if (looksLikeUrlOrPath(w)) return false;
  if (/^v?\d+(?:[.\-:/]\d+)+[a-z-]*$/i.test(w)) return false;
  if (isPlaceholderValue(w)) return false;
  return true;
}

/**
 * Called for a password word in running text ("my password is …", "the passcode I typed … "): reports the
 * first password-like word within the next few words on the same line. Returns the position to resume at, or -1.
 */
export function scanPasswordMention(st: ScanState, e: number): number {
  const t = st.text;
  // A mention is followed by a blank ("password is …"); "password>" or "password\"" belong to markup or code.
  const after = t.charCodeAt(e);
  if (after === 63) return answerOnNextLine(st, e + 1);
  if (after !== 32 && after !== 9) return -1;
  const netrc = netrcValue(st, e);
  if (netrc !== 0) return netrc;
  const limit = Math.min(st.n, e + 110);
  let j = e;
  let words = 0;
  let adjacent = true;
  while (j < limit && words < 12) {
    while (j < limit && (t.charCodeAt(j) === 32 || t.charCodeAt(j) === 9)) j++;
    if (j >= limit) return -1;
    if (t.charCodeAt(j) === 10)
      return t.charCodeAt(j - 1) === 63 || t.charCodeAt(j - 2) === 63 ? answerOnNextLine(st, j) : -1;
    const ws = j;
    // A token is a run of non-blank characters, split where CJK text begins or ends (Marble94です).
    const cjk = t.charCodeAt(j) >= 0x2e80;
    while (j < st.n && t.charCodeAt(j) > 32 && t.charCodeAt(j) >= 0x2e80 === cjk && j - ws < 80) j++;
    words++;
    let a = ws;
    let b = j;
    // Surrounding quotes and sentence punctuation are not part of the password.
    while (a < b && isWrapper(t.charCodeAt(a))) a++;
    while (b > a && (isWrapper(t.charCodeAt(b - 1)) || isSentenceEnd(t.charCodeAt(b - 1)))) b--;
    const w = t.slice(a, b);
    const lower = w.toLowerCase();
    // "password for the wifi is …": a copula makes the next word the value again.
    if (COPULAS.has(lower)) {
      adjacent = true;
      continue;
    }
    if (FREE_TEXT_STOP.has(lower) || w.length === 0) continue;
    if (knownSecretPrefixAt(t, a)) return -1;
    // Right after "password is" / "passwort ist" / "password changed to", letters with digits or symbols are
    // enough (latte2024); further on, the word must look like a password by itself.
    if (passwordLike(w) || (adjacent && copulaValueLike(w))) {
      // A mixed password named as one blocks like an assigned one; a word-only passphrase in prose is masked.
      const strong = charClassCount(w) >= 3 && w.length >= 8;
      st.emit(
        'GENERIC_PASSWORD',
        a,
        b,
        evidence({ valid: strong ? true : null, context: 1, strength: passwordStrength(w) }),
        strong ? -0.04 : -0.08,
      );
      return b;
    }
    adjacent = false;
  }
  return -1;
}

/** Copulas and the verbs of "set / changed / reset … to", in the languages of the mention words. */
const COPULAS = new Set([
  'is',
  'was',
  'are',
  'be',
  'to',
  'now',
  'still',
  'as',
  'set',
  'changed',
  'reset',
  'updated',
  'ist',
  'lautet',
  'war',
  'est',
  'était',
  'es',
  'era',
  'é',
  'è',
  'är',
  'var',
  'er',
  'on',
  'oli',
  'jest',
  'je',
  'az',
  'is:',
  '-',
  '—',
  '–',
  '=',
]);

/** A value right after a copula: letters with digits, or letters with a symbol other than a hyphen or dot. */
function copulaValueLike(w: string): boolean {
  if (w.length < 6 || w.length > 64) return false;
  let letters = false;
  let digits = false;
  let symbols = false;
  for (let k = 0; k < w.length; k++) {
    const c = w.charCodeAt(k);
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) letters = true;
    else if (c >= 48 && c <= 57) digits = true;
    else if (c !== 45 && c !== 46) symbols = true;
  }
  if (!letters || !(digits || symbols)) return false;
  if (/[{}<>=\\/]/.test(w) || looksLikeUrlOrPath(w) || isPlaceholderValue(w)) return false;
  if (w.includes('@') && /@[A-Za-z0-9-]+\.[A-Za-z]/.test(w)) return false;
  // Versions (v1.2.3) and counts with a unit ("8chars", "12characters") are not values.
  return !/^v?\d+(?:[.\-:/]\d+)+[a-z-]*$/i.test(w) && !/^\d+[a-z]+$/i.test(w);
}

/**
 * A question about a password ("what's the wifi password?") answered on the next line by one word, after an
 * optional speaker label and time (`B: BlueOcean42!`, `[10:03] mark: St4ging#Db`). `from` is at or before the
 * question line's end. Returns the resume position or -1.
 */
function answerOnNextLine(st: ScanState, from: number): number {
  const t = st.text;
  let k = from;
  while (k < st.n && k - from < 4 && t.charCodeAt(k) !== 10) {
    const c = t.charCodeAt(k);
    if (c !== 32 && c !== 9 && c !== 63 && c !== 13) return -1;
    k++;
  }
  if (t.charCodeAt(k) !== 10) return -1;
  const ls = k + 1;
  const le = lineEnd(t, ls);
  if (le - ls > 120) return -1;
  const line = t.slice(ls, le);
  const m = /^\s*(?:\[[^\]\n]{1,24}\]\s*)?(?:[\p{L}\p{N}_ .'-]{1,24}:\s+)?(\S+)\s*$/u.exec(line);
  if (m === null) return -1;
  let a = ls + line.lastIndexOf(m[1]);
  let b = a + m[1].length;
  while (a < b && isWrapper(t.charCodeAt(a))) a++;
  while (b > a && (isWrapper(t.charCodeAt(b - 1)) || t.charCodeAt(b - 1) === 46 || t.charCodeAt(b - 1) === 44)) b--;
  const w = t.slice(a, b);
  if (knownSecretPrefixAt(t, a) || !(passwordLike(w) || copulaValueLike(w))) return -1;
  return emitValue(st, PASSWORD, a, b, true) ? b : -1;
}

function lineEnd(t: string, i: number): number {
  const e = t.indexOf('\n', i);
  let end = e < 0 ? t.length : e;
  if (end > i && t.charCodeAt(end - 1) === 13) end--;
  return end;
}

/**
 * `password value` alone on its line (.netrc, ~/.pgpass-like notes, SQL*Plus): the one word after the keyword is
 * the value. Returns the resume position, -1 when it is a placeholder or code, 0 when the shape does not apply.
 */
function netrcValue(st: ScanState, e: number): number {
  const t = st.text;
  // The keyword must open its line: look back over at most a short indent.
  let ls = e;
  const limit = e > 64 ? e - 64 : 0;
  while (ls > limit && t.charCodeAt(ls - 1) !== 10) ls--;
  if (ls > 0 && t.charCodeAt(ls - 1) !== 10) return 0;
  let firstWord = ls;
  while (firstWord < e && (t.charCodeAt(firstWord) === 32 || t.charCodeAt(firstWord) === 9)) firstWord++;
  if (t.charCodeAt(firstWord) > 122 || e - firstWord > 12) return 0;
  let a = e;
  while (a < t.length && (t.charCodeAt(a) === 32 || t.charCodeAt(a) === 9)) a++;
  let b = a;
  while (b < t.length && t.charCodeAt(b) > 32) b++;
  let lineEnd = b;
  while (
    lineEnd < t.length &&
    (t.charCodeAt(lineEnd) === 32 || t.charCodeAt(lineEnd) === 9 || t.charCodeAt(lineEnd) === 13)
  )
    lineEnd++;
  if (b === a || (lineEnd < t.length && t.charCodeAt(lineEnd) !== 10)) return 0;
  // Only when the keyword opens the line: "password hunter2" as a whole line.
  if (!/^[A-Za-z]+$/.test(t.slice(firstWord, e))) return 0;
  if (knownSecretPrefixAt(t, a)) return -1;
  return emitValue(st, PASSWORD, a, b, false) ? b : -1;
}

function isWrapper(c: number): boolean {
  return (
    c === 34 ||
    c === 39 ||
    c === 96 ||
    c === 40 ||
    c === 41 ||
    c === 91 ||
    c === 93 ||
    c === 42 ||
    c === 0x201c ||
    c === 0x201d
  );
}

function isSentenceEnd(c: number): boolean {
  return c === 46 || c === 44 || c === 59 || c === 58 || c === 33 || c === 63;
}

/**
 * At an `@`: when it ends the user-info of a URL with a password (`scheme://user:pass@host`), reports the
 * password and returns the `@` position; -1 otherwise.
 */
export function scanUrlCredentials(st: ScanState, at: number): number {
  const t = st.text;
  let j = at - 1;
  let colon = -1;
  while (j >= 2 && at - j < 256) {
    const c = t.charCodeAt(j);
    if (c <= 32 || c === 34 || c === 39 || c === 60 || c === 64) return -1;
    if (c === 47) {
      if (t.charCodeAt(j - 1) === 47 && t.charCodeAt(j - 2) === 58 && colon > 0) break;
      return -1;
    }
    if (c === 58) colon = j;
    j--;
  }
  if (colon < 0 || j < 2 || t.charCodeAt(j) !== 47) return -1;
  const start = colon + 1;
  if (at - start < 1) return -1;
  if (!st.sel.password) return at;
  const v = t.slice(start, at);
  const placeholder = isPlaceholderValue(v) || v === 'pass' || v === 'password';
  st.emit('GENERIC_PASSWORD', start, at, evidence({ context: 1, placeholder, strength: passwordStrength(v) }));
  return at;
}

/** Words that introduce a password in running text. */
export const PASSWORD_MENTION_WORDS = [
  'password',
  'passwort',
  'passcode',
  'passphrase',
  'passwd',
  'pwd',
  'pw',
  'contraseña',
  'contrasena',
  'contrasenya',
  'clave',
  'senha',
  'wachtwoord',
  'kennwort',
  'passe',
  'parola',
  'hasło',
  'haslo',
  'lösenord',
  'losenord',
  'salasana',
  'heslo',
  'jelszó',
  'jelszo',
  'şifre',
  'sifre',
  'passord',
  'adgangskode',
  'khẩu',
  'sandi',
  'пароль',
  'парола',
  'лозинка',
  'κωδικός',
  'पासवर्ड',
  'المرور',
  'סיסמה',
  'הסיסמה',
];
