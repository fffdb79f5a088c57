// Detectors for credentials with fixed shapes: the vendor catalogue's prefixed tokens (secret-catalogue.ts), the
// formats with more structure than a prefix and a body (Slack, OpenAI, Anthropic, Stripe, JWT) and PEM private
// key blocks.
import { isAlnum, isBase64Url, isDigit } from './chars.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { cataloguePrefixAt, fakeBody, randomness, scanCatalogueAt } from './secret-catalogue.ts';
import { isPlaceholderValue, shannonEntropy } from './text-features.ts';

/** Membership tables for the character sets of key bodies (ASCII only; a table lookup beats a callback per char). */
function charTable(accept: (c: number) => boolean): Uint8Array {
  const table = new Uint8Array(128);
  for (let c = 0; c < 128; c++) if (accept(c)) table[c] = 1;
  return table;
}

const ALNUM = charTable(isAlnum);
const BASE64URL = charTable(isBase64Url);
const ALNUM_UNDERSCORE = charTable((c) => isAlnum(c) || c === 95);
const ALNUM_DASH = charTable((c) => isAlnum(c) || c === 45);
const BASE64_ANY = charTable((c) => isBase64Url(c) || c === 43 || c === 47);

/** End of the run of characters from `table` starting at i (at most `max` long). */
function runEnd(t: string, i: number, table: Uint8Array, max: number): number {
  let j = i;
  const limit = Math.min(t.length, i + max);
  while (j < limit) {
    const c = t.charCodeAt(j);
    if (c >= 128 || table[c] === 0) break;
    j++;
  }
  return j;
}

function isAlnumUnderscore(c: number): boolean {
  return isAlnum(c) || c === 95;
}

function emitSecret(st: ScanState, type: string, start: number, end: number, body: string, baseAdjust = 0): number {
  const h = shannonEntropy(body);
  const placeholder = fakeBody(body, h);
  st.emit(type, start, end, evidence({ valid: true, placeholder, strength: randomness(h), context: 0 }), baseAdjust);
  return end;
}

/**
 * Tries the prefix-keyed secret detectors at a word start `i` whose first character is `c`: the structured
 * formats first, then the catalogue's rows. Returns the end of an emitted candidate, or -1.
 */
export function scanSecretAt(st: ScanState, i: number, c: number): number {
  const t = st.text;
  let r = -1;
  switch (c) {
    case 115: // s
    case 114: // r
      if (t.charCodeAt(i + 1) !== 107) break;
      if (c === 115 && t.charCodeAt(i + 2) === 45) r = skDashKey(st, i);
      else if (t.charCodeAt(i + 2) === 95) r = stripeKey(st, i);
      break;
    case 120: // x
      if (t.startsWith('xox', i) && t.charCodeAt(i + 4) === 45) r = slackToken(st, i);
      else if (t.startsWith('xoxe.xox', i) && t.charCodeAt(i + 9) === 45) r = slackToken(st, i);
      else if (t.startsWith('xapp-', i)) r = slackToken(st, i);
      break;
    case 101: // e
      if (t.charCodeAt(i + 1) === 121 && isAlnum(t.charCodeAt(i + 2)) && !t.startsWith('eyJrIjoi', i)) r = jwt(st, i);
      break;
  }
  return r > 0 ? r : scanCatalogueAt(st, i);
}

const OPENAI_SEGMENTS = ['proj-', 'svcacct-', 'admin-', 'None-'];

function skDashKey(st: ScanState, i: number): number {
  const t = st.text;
  const end = runEnd(t, i, BASE64URL, 400);
  if (t.startsWith('sk-ant-', i)) {
    if (!st.sel.enabled.has('ANTHROPIC_API_KEY') || end - i < 40) return -1;
    const dash = t.indexOf('-', i + 7);
    const bodyStart = dash > 0 && dash < end ? dash + 1 : i + 7;
    return emitSecret(st, 'ANTHROPIC_API_KEY', i, end, t.slice(bodyStart, end));
  }
  if (!st.sel.enabled.has('OPENAI_API_KEY')) return -1;
  let bodyStart = i + 3;
  for (const seg of OPENAI_SEGMENTS) {
    if (t.startsWith(seg, bodyStart)) {
      bodyStart += seg.length;
      break;
    }
  }
  const body = t.slice(bodyStart, end);
  const marker = body.indexOf('T3BlbkFJ');
  if (marker >= 0) return emitSecret(st, 'OPENAI_API_KEY', i, end, body);
  // Keys without the marker (old user keys, other OpenAI-compatible vendors): long, mixed, random.
  if (body.length < 32) {
    if (body.length >= 8 && isPlaceholderValue(body)) return emitSecret(st, 'OPENAI_API_KEY', i, end, body);
    return -1;
  }
  return emitSecret(st, 'OPENAI_API_KEY', i, end, body, -0.04);
}

function stripeKey(st: ScanState, i: number): number {
  const t = st.text;
  const live = t.startsWith('live_', i + 3) || t.startsWith('prod_', i + 3);
  if (!live && !t.startsWith('test_', i + 3)) return -1;
  if (!st.sel.enabled.has('STRIPE_KEY')) return -1;
  const end = runEnd(t, i + 8, ALNUM, 300);
  if (isAlnumUnderscore(t.charCodeAt(end))) {
    // sk_test_PLACEHOLDER_VALUE and similar
    const longer = runEnd(t, i + 8, ALNUM_UNDERSCORE, 300);
    return emitSecret(st, 'STRIPE_KEY', i, longer, t.slice(i + 8, longer));
  }
  const body = t.slice(i + 8, end);
  if (body.length < 16) {
    if (body.length >= 4 && isPlaceholderValue(body)) return emitSecret(st, 'STRIPE_KEY', i, end, body);
    return -1;
  }
  // Test-mode keys reach no money; they are still credentials, one notch lower.
  return emitSecret(st, 'STRIPE_KEY', i, end, body, live ? 0 : -0.04);
}

/**
 * Slack tokens: xoxb-/xoxp-/xoxa-/xoxr-/xoxs-/xoxo-/xoxe- and xapp-, and the xoxe.xoxb-/xoxe.xoxp- configuration
 * tokens. Real ones carry numeric team/user ids (at least 8 digits in all) in a body of at least 20 characters;
 * configuration tokens are over 100; legacy workspace tokens (xoxa-, xoxr-) are 8-48 characters mixing letters and
 * digits. Shorter or digit-less bodies (xoxb-abcdef-abcdef, xoxp-1-RANDOMSTRING) and
 * bodies cut off by a mask (…-####) are stand-ins.
 */
function slackToken(st: ScanState, i: number): number {
  if (!st.sel.enabled.has('SLACK_TOKEN')) return -1;
  const t = st.text;
  const config = t.charCodeAt(i + 4) === 46;
  const bodyStart = config ? i + 10 : i + 5; // after xoxb- / xapp- / xoxe.xoxp-
  const end = runEnd(t, bodyStart, ALNUM_DASH, 400);
  let trimmed = end;
  while (trimmed > bodyStart && t.charCodeAt(trimmed - 1) === 45) trimmed--;
  const body = t.slice(bodyStart, trimmed);
  let digits = 0;
  for (let k = 0; k < body.length; k++) if (isDigit(body.charCodeAt(k))) digits++;
  if (isAlnumUnderscore(t.charCodeAt(end))) return -1;
  // Legacy workspace and refresh tokens (xoxa-, xoxr-): an optional digit group and 8-48 mixed characters.
  const kind = t.charCodeAt(i + 3);
  const legacy = !config && (kind === 97 || kind === 114) && /^(?:\d-)?[0-9A-Za-z]{8,48}$/.test(body);
  if (legacy ? digits < 2 || !/[a-z]/i.test(body) : body.length < (config ? 100 : 20) || digits < 8) return -1;
  const masked = t.charCodeAt(end) === 35 || t.charCodeAt(end) === 42;
  if (masked) {
    st.emit('SLACK_TOKEN', i, trimmed, evidence({ valid: true, placeholder: true }));
    return end;
  }
  return emitSecret(st, 'SLACK_TOKEN', i, trimmed, body);
}

/**
 * JWTs: three base64url segments, the header decoding to a JOSE header (eyJ…). Tokens whose header and payload
 * both start with `ey` (a JSON object's first byte) but do not decode are taken by their structure alone, each
 * segment at least 17 characters; the payload and signature may use the standard base64 alphabet (+ /).
 */
function jwt(st: ScanState, i: number): number {
  if (!st.sel.jwt) return -1;
  const t = st.text;
  const canonical = t.charCodeAt(i + 2) === 74;
  const minSegment = canonical ? 10 : 17;
  const h = runEnd(t, i, BASE64URL, 2000);
  if (h - i < minSegment || t.charCodeAt(h) !== 46) return -1;
  if (!canonical && (t.charCodeAt(h + 1) !== 101 || t.charCodeAt(h + 2) !== 121)) return -1;
  const p = runEnd(t, h + 1, canonical ? BASE64URL : BASE64_ANY, 8000);
  if (p - h - 1 < minSegment || t.charCodeAt(p) !== 46) return -1;
  const s = runEnd(t, p + 1, canonical ? BASE64URL : BASE64_ANY, 4000);
  if (!canonical && s > p + 1 && s - p - 1 < 10) return -1;
  let end = s;
  while (end < t.length && t.charCodeAt(end) === 61 && end - s < 2) end++;
  const valid = canonical ? joseHeader(t, i, h) : null;
  const sig = t.slice(p + 1, s);
  const sigEntropy = shannonEntropy(sig);
  const placeholder = sig.length > 0 && fakeBody(sig, sigEntropy);
  st.emit(
    'JWT',
    i,
    end,
    evidence({ valid, placeholder, strength: sig.length >= 16 ? randomness(sigEntropy) : 0.3, context: 0 }),
  );
  return end;
}

const B64URL = new Int8Array(128).fill(-1);
for (let k = 0; k < 64; k++)
  B64URL['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.charCodeAt(k)] = k;

/** True when the base64url text [s, e) decodes to a JSON object naming "alg" or "typ" (a JOSE header). */
function joseHeader(t: string, s: number, e: number): boolean {
  let bits = 0;
  let nbits = 0;
  let decoded = '';
  for (let k = s; k < e && decoded.length < 512; k++) {
    const v = B64URL[t.charCodeAt(k)];
    if (v < 0) return false;
    bits = (bits << 6) | v;
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      decoded += String.fromCharCode((bits >> nbits) & 0xff);
      bits &= (1 << nbits) - 1;
    }
  }
  return decoded.charCodeAt(0) === 123 && (decoded.includes('"alg"') || decoded.includes('"typ"'));
}

const BEGIN = '-----BEGIN ';

/** Tries a PEM/OpenSSH private key block at `i` (a `-`). Returns its end, or -1. */
export function scanPrivateKey(st: ScanState, i: number): number {
  const t = st.text;
  if (!t.startsWith(BEGIN, i) || !st.sel.privateKey) return -1;
  const labelEnd = t.indexOf('-----', i + BEGIN.length);
  if (labelEnd < 0 || labelEnd - i > 64) return -1;
  const label = t.slice(i + BEGIN.length, labelEnd);
  if (!label.endsWith('PRIVATE KEY') && !label.endsWith('PRIVATE KEY BLOCK')) return -1;
  const bodyStart = labelEnd + 5;
  const endMarker = `-----END ${label}-----`;
  const endAt = st.findEndMarker(endMarker, bodyStart, 64_000);
  let end: number;
  let bodyEnd: number;
  if (endAt >= 0) {
    bodyEnd = endAt;
    end = endAt + endMarker.length;
  } else {
    // A truncated paste: the key is the base64 that follows, across line breaks (real or JSON-escaped).
    let j = bodyStart;
    while (j < t.length && j - bodyStart < 64_000) {
      const c = t.charCodeAt(j);
      if (isAlnum(c) || c === 43 || c === 47 || c === 61 || c === 10 || c === 13 || c === 32) j++;
      else if (c === 92 && (t.charCodeAt(j + 1) === 110 || t.charCodeAt(j + 1) === 114)) j += 2;
      else break;
    }
    bodyEnd = j;
    end = j;
    while (end > bodyStart && (t.charCodeAt(end - 1) === 10 || t.charCodeAt(end - 1) === 32)) end--;
  }
  // A real key body is hundreds of base64 characters; "...", "<your key>" or a few characters are stand-ins.
  const head = t.slice(bodyStart, Math.min(bodyEnd, bodyStart + 96));
  const placeholder =
    bodyEnd - bodyStart < 40 ||
    /\.\.\.|…|your|here|redacted|insert|paste/i.test(head) ||
    /\.\.\.|…/.test(t.slice(Math.max(bodyStart, bodyEnd - 96), bodyEnd));
  st.emit('PRIVATE_KEY', i, end, evidence({ valid: endAt >= 0, placeholder, strength: 1, context: 0 }));
  return end;
}

/**
 * True when a secret format with an owner starts at `i` (the catalogue's rows, Slack, OpenAI/Anthropic, Stripe,
 * JWT, PEM): the generic password detector leaves such values to their owner.
 */
export function knownSecretPrefixAt(t: string, i: number): boolean {
  const c = t.charCodeAt(i);
  switch (c) {
    case 115:
      if (t.startsWith('sk-', i) || /^sk_(?:live|test|prod)_/.test(t.slice(i, i + 8))) return true;
      break;
    case 114:
      if (/^rk_(?:live|test|prod)_/.test(t.slice(i, i + 8))) return true;
      break;
    case 120:
      if (
        (t.startsWith('xox', i) && t.charCodeAt(i + 4) === 45) ||
        t.startsWith('xapp-', i) ||
        t.startsWith('xoxe.xox', i)
      )
        return true;
      break;
    case 101:
      if (/^ey[A-Za-z0-9_-]{15,}\.[A-Za-z0-9_-]/.test(t.slice(i, i + 200))) return true;
      break;
    case 45:
      return t.startsWith(BEGIN, i);
  }
  return c < 128 && cataloguePrefixAt(t, i);
}
