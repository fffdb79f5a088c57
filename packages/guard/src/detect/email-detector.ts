// EMAIL, triggered by `@`: the local part is read backwards from it, the domain forwards.
import { isAlnum, isWordCode } from './chars.ts';
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

/** Tries an e-mail address around the `@` at `at`. Emits it and returns its end, or returns -1. */
export function scanEmail(st: ScanState, at: number): number {
  const t = st.text;
  const n = st.n;
  let s = at;
  while (s > 0 && at - s < 64 && isLocalChar(t.charCodeAt(s - 1))) s--;
  while (s < at && (t.charCodeAt(s) === 46 || t.charCodeAt(s) === 45)) s++;
  if (s === at || t.charCodeAt(at - 1) === 46) return -1;
  if (s > 0 && isWordCode(t.charCodeAt(s - 1))) return -1;
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
  if (isWordCode(after) || after === 64) return -1;
  // git@github.com:org/repo.git is an SSH remote (scp syntax), not a mailbox.
  if (after === 58 && end + 1 < n && (isAlnum(t.charCodeAt(end + 1)) || t.charCodeAt(end + 1) === 126)) return -1;
  // icon@2x.png: retina asset names, not addresses.
  if (FILE_EXTENSIONS.has(t.slice(lastLabelStart, end).toLowerCase())) return -1;
  if (!st.sel.email) return end;
  st.emit('EMAIL', s, end, evidence({ valid: true, strength: 1 }));
  return end;
}
