// EMAIL, triggered by `@`: the local part is read backwards from it, the domain forwards.
import { isAlnum, isAsciiWordCode, isLatinWordCode } from './chars.ts';
import { scanPairAfterUser } from './credential-prose.ts';
import { evidence, type ScanState } from './scan-state.ts';

function isLocalChar(c: number): boolean {
  // RFC 5322 atext minus the rarely used characters that also delimit text (!#$&'*/=?^`{|}~).
  return isAlnum(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
}

const FILE_EXTENSIONS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'svg',
  'avif',
  'ico',
  'bmp',
  'tif',
  'tiff',
  'heic',
  'js',
  'css',
  'map',
  'mjs',
  'ts',
  'json',
  'pdf',
  'zip',
  'gz',
  'tgz',
  'whl',
  'jar',
  'txt',
  'csv',
  'mp4',
  'mov',
  'mp3',
  'wav',
  'woff',
  'woff2',
  'ttf',
]);

/** Characters that end an id token read backwards from its local part. */
const ID_TOKEN_END = new Uint8Array(128);
for (const ch of ' \t\r\n<>"\':,;()[]') ID_TOKEN_END[ch.charCodeAt(0)] = 1;

/** Header and key names (lower case, without `-` and `_`) whose values are message or part ids, not mailboxes. */
const ID_KEYS = new Set(['inreplyto', 'references', 'msgid', 'mid', 'cid', 'threadid', 'parentid']);

function isIdKey(t: string, s: number, e: number): boolean {
  // Every id key ends in "id", "references" or "in-reply-to": a cheap test before the lower-casing.
  const last = t.charCodeAt(e - 1) | 32;
  if (last !== 100 && last !== 115 && last !== 111) return false;
  const key = t.slice(s, e).toLowerCase().replace(/[-_.]/g, '');
  return ID_KEYS.has(key) || key.endsWith('messageid') || key.endsWith('contentid');
}

/** "the message id <…@…> bounced", "Message-ID <…>": id words right before a bracketed id, without a colon. */
function idWordsBefore(t: string, k: number): boolean {
  let e = k;
  let s = e;
  while (s > 0 && e - s < 24 && (isAlnum(t.charCodeAt(s - 1)) || t.charCodeAt(s - 1) === 45)) s--;
  if (s === e) return false;
  if (isIdKey(t, s, e)) return true;
  if (t.slice(s, e).toLowerCase() !== 'id' || t.charCodeAt(s - 1) !== 32) return false;
  e = s - 1;
  s = e;
  while (s > 0 && e - s < 12 && isAlnum(t.charCodeAt(s - 1))) s--;
  const word = t.slice(s, e).toLowerCase();
  return word === 'message' || word === 'msg' || word === 'content';
}

/**
 * True when the address-like text starting at `s` is a message or MIME part id: `cid:…@…`, or the value of a
 * Message-ID, In-Reply-To, References or Content-ID header or key (`"message_id": "<…@…>"`), including the later
 * ids of a References list and its folded continuation lines. From, To, Reply-To and Cc values are addresses.
 */
function isMessageId(t: string, s: number): boolean {
  const limit = s > 1024 ? s - 1024 : 0;
  // Ids use characters addresses rarely do (`CAF=x+y@mail.gmail.com`): go back to where the id token starts.
  let k = s;
  while (k > limit && s - k < 256) {
    const c = t.charCodeAt(k - 1);
    if (c >= 128 || ID_TOKEN_END[c] === 1) break;
    k--;
  }
  if (k >= 4 && t.charCodeAt(k - 1) === 58) {
    const scheme = t.slice(k - 4, k - 1).toLowerCase();
    if (scheme === 'cid' || scheme === 'mid') return true;
  }
  const bracketed = t.charCodeAt(k - 1) === 60;
  if (bracketed) k--;
  for (;;) {
    // Blanks and quotes; a line break only where the line after it is a folded continuation.
    while (k > limit) {
      const c = t.charCodeAt(k - 1);
      if (c === 32 || c === 9 || c === 34 || c === 39 || c === 13) k--;
      else if (c === 10 && (t.charCodeAt(k) === 32 || t.charCodeAt(k) === 9)) k--;
      else break;
    }
    if (k <= limit) return false;
    const c = t.charCodeAt(k - 1);
    if (c === 62) {
      // The id before this one in a list: <a@b> <c@d>
      const open = t.lastIndexOf('<', k - 2);
      if (open < limit || k - open > 256) return false;
      k = open;
      continue;
    }
    if (c !== 58 && c !== 61) return bracketed && idWordsBefore(t, k);
    k--;
    while (k > limit && (t.charCodeAt(k - 1) === 32 || t.charCodeAt(k - 1) === 34 || t.charCodeAt(k - 1) === 39)) k--;
    const keyEnd = k;
    while (keyEnd - k < 40 && k > 0) {
      const d = t.charCodeAt(k - 1);
      if (isAlnum(d) || d === 45 || d === 95 || d === 46) k--;
      else break;
    }
    if (k >= keyEnd) return false;
    // A bracketed value of any "…id" key is an id (smtp-id, sg_message_id, X-SES-Message-ID).
    return isIdKey(t, k, keyEnd) || (bracketed && /id$/i.test(t.slice(k, keyEnd)));
  }
}

/** Tries an e-mail address around the `@` at `at`. Emits it and returns its end, or returns -1. */
export function scanEmail(st: ScanState, at: number): number {
  const t = st.text;
  const n = st.n;
  let s = at;
  while (s > 0 && at - s < 64 && isLocalChar(t.charCodeAt(s - 1))) s--;
  while (s < at && (t.charCodeAt(s) === 46 || t.charCodeAt(s) === 45)) s++;
  if (s === at || t.charCodeAt(at - 1) === 46) return -1;
  // https://ghp_…@github.com/x: the user part of a URL's authority, not a mailbox.
  if (s >= 3 && t.charCodeAt(s - 1) === 47 && t.charCodeAt(s - 2) === 47 && t.charCodeAt(s - 3) === 58) return -1;
  // An accented Latin letter before the local part makes it an internationalized one we do not cut in two; a
  // letter of another script is a separator (`メールはnakamura_sota@…`).
  if (s > 0 && isLatinWordCode(t.charCodeAt(s - 1))) return -1;
  let j = at + 1;
  let labels = 0;
  let lastLabelStart = j;
  let end = -1;
  for (;;) {
    const l0 = j;
    while (j < n && j - l0 < 64 && (isAlnum(t.charCodeAt(j)) || t.charCodeAt(j) === 45)) j++;
    if (j === l0 || t.charCodeAt(l0) === 45 || t.charCodeAt(j - 1) === 45) break;
    labels++;
    lastLabelStart = l0;
    end = j;
    if (t.charCodeAt(j) === 46 && j + 1 < n && isAlnum(t.charCodeAt(j + 1))) j++;
    else break;
  }
  if (labels < 2 || end < 0) return -1;
  // The top-level domain is letters (or an IDN xn-- label).
  let tldOk = end - lastLabelStart >= 2;
  for (let k = lastLabelStart; k < end && tldOk; k++) {
    const c = t.charCodeAt(k);
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122))) tldOk = t.startsWith('xn--', lastLabelStart);
  }
  if (!tldOk) return -1;
  const after = end < n ? t.charCodeAt(end) : 32;
  if (isAsciiWordCode(after) || after === 64) return -1;
  // git@github.com:org/repo.git is an SSH remote (scp syntax), not a mailbox.
  if (after === 58 && end + 1 < n && (isAlnum(t.charCodeAt(end + 1)) || t.charCodeAt(end + 1) === 126)) return -1;
  // icon@2x.png: retina asset names, not addresses.
  if (FILE_EXTENSIONS.has(t.slice(lastLabelStart, end).toLowerCase())) return -1;
  if (isMessageId(t, s)) return end;
  if (st.sel.email) st.emit('EMAIL', s, end, evidence({ valid: true, strength: 1 }));
  // airbnb login jane@example.org / Plasma1994
  if (st.sel.password) {
    const r = scanPairAfterUser(st, s, end, false);
    if (r > 0) return r;
  }
  return end;
}
