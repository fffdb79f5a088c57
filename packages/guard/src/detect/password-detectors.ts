// GENERIC_PASSWORD: values assigned to password-, secret- and token-like keys (key=value, key: value, JSON,
// XML elements, CLI flags, SQL), passwords named in free text ("my password is …"), and URL credentials.
import { isAlnum, isWordCode } from './chars.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { knownSecretPrefixAt } from './secret-detectors.ts';
import { charClassCount, isHex, isPlaceholderValue, isUuid, shannonEntropy } from './text-features.ts';

/** How a key names what its value holds. */
const PASSWORD = 1;
const STRONG_SECRET = 2;
const WEAK_SECRET = 3;

const PASSWORD_SUFFIXES = [
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
  'пароль',
  'pwd',
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

const keyKinds = new Map<string, number>();

/** keyKind, memoized: the same key names recur across texts (password, api_key, DB_PASSWORD). */
function keyKind(fullKey: string): number {
  let kind = keyKinds.get(fullKey);
  if (kind === undefined) {
    kind = classifyKey(fullKey);
    if (keyKinds.size >= 4096) keyKinds.clear();
    keyKinds.set(fullKey, kind);
  }
  return kind;
}

function classifyKey(fullKey: string): number {
  const k = fullKey.toLowerCase().replace(/[-_.\s]/g, '');
  if (k.length === 0) return 0;
  for (const s of NOT_SECRET_SUFFIXES) if (k.endsWith(s)) return 0;
  for (const s of PASSWORD_SUFFIXES) if (k.endsWith(s)) return PASSWORD;
  if (k.endsWith('pass') || k === 'pw' || k.endsWith('dbpw')) return PASSWORD;
  for (const s of STRONG_SUFFIXES) if (k.endsWith(s)) return STRONG_SECRET;
  for (const s of WEAK_SUFFIXES) if (k.endsWith(s)) return WEAK_SECRET;
  return 0;
}

function isKeyChar(c: number): boolean {
  return isWordCode(c) || c === 45 || c === 46;
}

/** The cheap pre-test the scanner applies to every word: could this word end a key whose value follows? */
export function mayEndKey(lastFolded: number): boolean {
  // d: password, passwd, pwd, passwort; s: pass, credentials; t: secret; e: passcode, passphrase; n: token;
  // y: key; h: auth; l: credential; w: pw; a: senha, parola; o: haslo; r: authorization; ь: пароль
  switch (lastFolded) {
    case 100:
    case 115:
    case 116:
    case 101:
    case 110:
    case 121:
    case 104:
    case 108:
    case 119:
    case 97:
    case 111:
    case 114:
    case 0x44c:
      return true;
    default:
      return false;
  }
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
    // connection strings, XML, markdown).
    if (c <= 32 || c === 44 || c === 59 || c === 38 || c === 34 || c === 39 || c === 96 || c === 60) break;
    if (c === 41 || c === 93 || c === 125 || c === 62 || c === 124) break;
    j++;
  }
  // Sentence punctuation after an unquoted value is not part of it.
  while (j > s) {
    const last = t.charCodeAt(j - 1);
    const next = j < n ? t.charCodeAt(j) : 32;
    if ((last === 46 || last === 58 || last === 33 || last === 63) && next <= 32 && j - s > 1) j--;
    else break;
  }
  valueSpan.start = s;
  valueSpan.end = j;
  valueSpan.quoted = false;
  return j > s;
}

const AUTH_SCHEMES = ['bearer', 'basic', 'token', 'bot', 'digest', 'apikey'];

/** Length of an HTTP auth scheme word (with its blank) at the start of a value, or 0. */
function authSchemeLength(t: string, start: number, end: number): number {
  for (const s of AUTH_SCHEMES) {
    if (end - start < s.length) continue;
    if (t.slice(start, start + s.length).toLowerCase() !== s) continue;
    const after = start + s.length;
    if (after === end) return s.length; // unquoted: the credential is the next word
    if (t.charCodeAt(after) === 32) return s.length + 1;
  }
  return 0;
}

/** Hashes and digests: hex, optionally behind an algorithm label (sha256:…, md5-…). */
function looksLikeDigest(v: string): boolean {
  const m = /^(?:sha\d*|md5|blake\d*\w*|etag|crc32)?[:=-]?([0-9a-fA-F]{16,})$/i.exec(v);
  return m !== null;
}

/** Values that are code, not secrets: identifiers, member chains, calls, booleans, numbers. */
function looksLikeCode(v: string): boolean {
  if (v.includes('(') || v.includes('${') || v.startsWith('@') || v.startsWith('#')) return true;
  return /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v) || /^-?\d+(?:\.\d+)?$/.test(v);
}

function looksLikeUrlOrPath(v: string): boolean {
  return v.includes('://') || v.startsWith('/') || v.startsWith('./') || v.startsWith('~/') || v.startsWith('www.');
}

function isPublicId(v: string): boolean {
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
function emitValue(
  st: ScanState,
  kind: number,
  start: number,
  end: number,
  quoted: boolean,
  keyIsExact: boolean,
): boolean {
  const v = st.text.slice(start, end);
  if (v.length < 4 || v.length > 256) return false;
  if (knownSecretPrefixAt(st.text, start)) return false;
  if (isPlaceholderValue(v)) {
    st.emit('GENERIC_PASSWORD', start, end, evidence({ placeholder: true, context: 1 }));
    return true;
  }
  if (looksLikeCode(v) && !quoted) return false;
  if (looksLikeUrlOrPath(v) || isPublicId(v)) return false;
  const classes = charClassCount(v);
  if (kind === PASSWORD) {
    if (!quoted && classes === 1 && v.length < 10) return false;
    const strength = passwordStrength(v);
    st.emit('GENERIC_PASSWORD', start, end, evidence({ context: 1, strength, ambiguity: 0 }), keyIsExact ? 0 : 0);
    return true;
  }
  // Secret-like keys: the value must look generated, not like an id, a hash or a word.
  if (isUuid(v) || isHex(v) || looksLikeDigest(v) || /^[\d\s:./-]+$/.test(v)) return false;
  const h = shannonEntropy(v);
  if (kind === STRONG_SECRET) {
    if (v.length < 8 || classes < 2 || h < 2.8) return false;
  } else {
    if (v.length < 12 || classes < 3 || h < 3.2 || !hasLower(v)) return false;
  }
  const strength = passwordStrength(v);
  st.emit('GENERIC_PASSWORD', start, end, evidence({ context: 1, strength }), kind === STRONG_SECRET ? -0.02 : -0.06);
  return true;
}

/**
 * Called for a word [s, e) whose next non-blank character assigns a value (`=`, `:`, `=>`, an XML `>`, a CLI
 * flag). Emits the value when the key names a password or secret. Returns the position to resume at, or -1.
 */
export function scanAssignment(st: ScanState, s: number, e: number): number {
  const t = st.text;
  const n = st.n;
  let k = e;
  let c = t.charCodeAt(k);
  // The key's closing quote: "password": / 'password' => / \"password\":
  if (c === 92 && t.charCodeAt(k + 1) === 34) k += 2;
  else if (c === 34 || c === 39 || c === 96) k++;
  const afterKey = k;
  while (k < n && k - afterKey < 4 && (t.charCodeAt(k) === 32 || t.charCodeAt(k) === 9)) k++;
  c = t.charCodeAt(k);
  const xml = c === 62 && s > 0 && t.charCodeAt(s - 1) === 60;
  let flag = false;
  if (c === 61) {
    if (t.charCodeAt(k + 1) === 61) return -1;
    k += t.charCodeAt(k + 1) === 62 ? 2 : 1;
  } else if (c === 58) {
    if (t.charCodeAt(k + 1) === 58) return -1;
    k += t.charCodeAt(k + 1) === 61 ? 2 : 1;
  } else if (xml) {
    k++;
  } else if (k > afterKey && s >= 2 && t.charCodeAt(s - 1) === 45 && t.charCodeAt(s - 2) === 45) {
    flag = true; // --password value
  } else if (k > afterKey && (c === 39 || c === 34)) {
    flag = true; // SQL: PASSWORD 'value', IDENTIFIED BY 'value'
  } else return -1;
  // Key name with its dotted or dashed prefix (db.password, x-api-key).
  let ks = s;
  while (ks > 0 && s - ks < 64 && isKeyChar(t.charCodeAt(ks - 1))) ks--;
  const kind = flag && c !== 39 && c !== 34 ? keyKind(t.slice(ks, e)) : keyKind(t.slice(ks, e));
  if (kind === 0) return -1;
  if (flag && kind !== PASSWORD) return -1;
  // Markdown emphasis and blanks between the operator and the value (**Password:** value).
  const opEnd = k;
  while (k < n && k - opEnd < 8) {
    const d = t.charCodeAt(k);
    if (d === 32 || d === 9 || d === 42) k++;
    else break;
  }
  if (!readValue(t, k)) return -1;
  let { start, end, quoted } = valueSpan;
  // Authorization: Bearer <token> / "Basic <base64>": the credential is what follows the scheme.
  const scheme = authSchemeLength(t, start, end);
  if (scheme > 0) {
    if (quoted) start += scheme;
    else {
      let v = end;
      while (v < n && (t.charCodeAt(v) === 32 || t.charCodeAt(v) === 9)) v++;
      if (!readValue(t, v)) return -1;
      ({ start, end, quoted } = valueSpan);
    }
    if (start >= end) return -1;
  }
  if (xml && t.charCodeAt(end) !== 60) return -1;
  if (!emitValue(st, kind, start, end, quoted || xml, true)) return -1;
  return quoted ? end + 1 : end;
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
  if (charClassCount(w) < 3) return false;
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
  const limit = Math.min(st.n, e + 80);
  let j = e;
  let words = 0;
  while (j < limit && words < 8) {
    while (j < limit && (t.charCodeAt(j) === 32 || t.charCodeAt(j) === 9)) j++;
    if (j >= limit || t.charCodeAt(j) === 10) return -1;
    const ws = j;
    while (j < st.n && t.charCodeAt(j) > 32 && j - ws < 80) j++;
    words++;
    let a = ws;
    let b = j;
    // Surrounding quotes and sentence punctuation are not part of the password.
    while (a < b && isWrapper(t.charCodeAt(a))) a++;
    while (b > a && (isWrapper(t.charCodeAt(b - 1)) || isSentenceEnd(t.charCodeAt(b - 1)))) b--;
    const w = t.slice(a, b);
    if (FREE_TEXT_STOP.has(w.toLowerCase())) continue;
    if (knownSecretPrefixAt(t, a)) return -1;
    if (passwordLike(w)) {
      st.emit('GENERIC_PASSWORD', a, b, evidence({ context: 1, strength: passwordStrength(w) }), -0.08);
      return b;
    }
  }
  return -1;
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
    if (c <= 32 || c === 34 || c === 39 || c === 60) return -1;
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
  'pwd',
  'contraseña',
  'contrasena',
  'senha',
  'wachtwoord',
  'kennwort',
  'passe',
  'parola',
  'пароль',
];

/** True for an ASCII letter or digit (re-exported for the scanner). */
export const isKeyAlnum = isAlnum;
