// Password and secret keywords of scripts written without blanks between words (Japanese, Chinese, Korean,
// Thai): they sit inside longer runs (`パスワードは「…」です`, `密码是Abc12345`, `비밀번호는 …`), so they are
// found by a first-character table inside any word with such letters, not by looking words up.
import { isCjkCode } from './chars.ts';
import { emitValue, PASSWORD, STRONG_SECRET } from './password-detectors.ts';
import type { ScanState } from './scan-state.ts';
import { knownSecretPrefixAt } from './secret-detectors.ts';

const KEYWORDS: readonly (readonly [string, number])[] = [
  ['パスワード', PASSWORD],
  ['パスコード', PASSWORD],
  ['暗証番号', PASSWORD],
  ['密码', PASSWORD],
  ['密碼', PASSWORD],
  ['口令', PASSWORD],
  ['비밀번호', PASSWORD],
  ['비번', PASSWORD],
  ['암호', PASSWORD],
  ['รหัสผ่าน', PASSWORD],
  ['密钥', STRONG_SECRET],
  ['密鑰', STRONG_SECRET],
  ['秘密鍵', STRONG_SECRET],
  ['シークレット', STRONG_SECRET],
  ['トークン', STRONG_SECRET],
  ['アクセスキー', STRONG_SECRET],
  ['APIキー', STRONG_SECRET],
  ['令牌', STRONG_SECRET],
  ['토큰', STRONG_SECRET],
  ['시크릿', STRONG_SECRET],
];

const FIRST = new Uint8Array(65536);
for (const [w] of KEYWORDS) FIRST[w.charCodeAt(0)] = 1;

/**
 * What may stand between a keyword and its value: particles and copulas (は が を も 是 为 는 은 이 가 을 를 로, Thai คือ),
 * "changed/set to" (改为 设置为 更改为 变更为 改成), colons, equals signs and blanks. Anything else (a verb such as
 * 忘れ "forgot", a noun) means the keyword is not followed by its value.
 */
const GAP = new Set(
  [...'はがをもにで是为為는은이가을를로으改设設置更变變新重成คือ：:=＝ \u3000'].map((ch) => ch.charCodeAt(0)),
);
const MAX_GAP = 6;

const CLOSING = new Map<number, number>([
  [0x300c, 0x300d], // 「」
  [0x300e, 0x300f], // 『』
  [0x201c, 0x201d], // “”
  [0x2018, 0x2019], // ‘’
  [34, 34],
  [39, 39],
  [96, 96],
]);

/** True for characters that end an unquoted ASCII value written among CJK text. */
function endsValue(c: number): boolean {
  return c <= 32 || c >= 0x2e80 || c === 34 || c === 39 || c === 96 || c === 41 || c === 93 || c === 62;
}

/**
 * Looks for a keyword inside the word [i, j) and reports the value after it. Returns the resume position, or -1.
 */
export function scanCjkKeywords(st: ScanState, i: number, j: number): number {
  const t = st.text;
  for (let k = i; k < j; k++) {
    const c = t.charCodeAt(k);
    if (FIRST[c] === 0) continue;
    for (const [w, kind] of KEYWORDS) {
      if (w.charCodeAt(0) !== c || !t.startsWith(w, k)) continue;
      const r = valueAfter(st, k + w.length, kind);
      if (r > 0) return r;
    }
  }
  return -1;
}

function valueAfter(st: ScanState, from: number, kind: number): number {
  const t = st.text;
  const n = st.n;
  let p = from;
  while (p < n && p - from < MAX_GAP && GAP.has(t.charCodeAt(p))) p++;
  if (p >= n) return -1;
  const c = t.charCodeAt(p);
  const close = CLOSING.get(c);
  let s: number;
  let e: number;
  let quoted = false;
  if (close !== undefined) {
    s = p + 1;
    e = s;
    while (e < n && e - s < 256 && t.charCodeAt(e) !== close && t.charCodeAt(e) !== 10) e++;
    if (t.charCodeAt(e) !== close) return -1;
    quoted = true;
  } else {
    if (c <= 32 || c >= 127 || isCjkCode(c)) return -1;
    s = p;
    e = s;
    while (e < n && e - s < 256 && !endsValue(t.charCodeAt(e))) e++;
    // Sentence punctuation closing the value is not part of it.
    while (e > s + 1) {
      const last = t.charCodeAt(e - 1);
      if (last === 46 || last === 44 || last === 59 || last === 58) e--;
      else break;
    }
  }
  if (e <= s || knownSecretPrefixAt(t, s)) return -1;
  // "密码是123456": after a keyword and its copula, six or more digits are a password too.
  const digitsOnly = kind === PASSWORD && e - s >= 6 && /^\d+$/.test(t.slice(s, e));
  if (!emitValue(st, kind, s, e, quoted || digitsOnly)) return -1;
  return quoted ? e + 1 : e;
}
