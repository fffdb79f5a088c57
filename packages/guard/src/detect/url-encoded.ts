// URL- and form-encoded values in query strings, form bodies and HTTP logs (`email=jane.doe%40example.com`,
// `phone=%2B33182066578`, `mobile=%2B39+051+1468442`). The token around the first escape is decoded once into a
// view that keeps the offset of every character in the text, the view is walked like any text, and what it finds
// is reported with its span as written: the whole encoded value.
import { ScanState } from './scan-state.ts';

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 32;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

function byteAt(t: string, i: number): number {
  if (t.charCodeAt(i) !== 37) return -1;
  const h = hexValue(t.charCodeAt(i + 1));
  const l = hexValue(t.charCodeAt(i + 2));
  return h < 0 || l < 0 ? -1 : h * 16 + l;
}

/** True for a `%XX` escape of a printable character or of a UTF-8 byte (not `%08x` format strings). */
export function isEscapeAt(t: string, i: number): boolean {
  const b = byteAt(t, i);
  return b >= 0x20 && b !== 0x7f;
}

/** Characters that end an encoded token: blanks, quotes and angle brackets (the text around a URL or a body). */
function endsToken(c: number): boolean {
  return c <= 32 || c === 34 || c === 39 || c === 96 || c === 60 || c === 62;
}

const MAX_BEFORE = 2048;
const MAX_AFTER = 4096;

/** A decoded view: its text and, for each of its characters (and its end), the offset in the original text. */
interface DecodedView {
  text: string;
  offsets: Int32Array;
}

/**
 * Decodes [s, e): `%XX` escapes (UTF-8 sequences as one character), and `+` as a blank once the query or form
 * part has begun (after `?` or `=`; a `+` in a path is itself).
 */
function decode(t: string, s: number, e: number): DecodedView {
  const codes: number[] = [];
  const offsets: number[] = [];
  let plusIsBlank = false;
  let k = s;
  while (k < e) {
    const c = t.charCodeAt(k);
    if (c === 37) {
      const b = byteAt(t, k);
      if (b >= 0 && b < 0x80) {
        codes.push(b);
        offsets.push(k);
        k += 3;
        continue;
      }
      const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
      let cp = len === 4 ? b & 0x07 : len === 3 ? b & 0x0f : b & 0x1f;
      let ok = len > 0 && k + 3 * len <= e;
      for (let m = 1; ok && m < len; m++) {
        const cont = byteAt(t, k + 3 * m);
        ok = cont >= 0x80 && cont < 0xc0;
        cp = (cp << 6) | (cont & 0x3f);
      }
      if (ok && cp >= 0x80 && cp <= 0x10ffff) {
        const ch = String.fromCodePoint(cp);
        for (let u = 0; u < ch.length; u++) {
          codes.push(ch.charCodeAt(u));
          offsets.push(k);
        }
        k += 3 * len;
        continue;
      }
    } else if (c === 43 && plusIsBlank) {
      codes.push(32);
      offsets.push(k);
      k++;
      continue;
    } else if (c === 63 || c === 61) plusIsBlank = true;
    codes.push(c);
    offsets.push(k);
    k++;
  }
  offsets.push(e);
  let text = '';
  for (let a = 0; a < codes.length; a += 4096) text += String.fromCharCode(...codes.slice(a, a + 4096));
  return { text, offsets: Int32Array.from(offsets) };
}

/**
 * Decodes the token around position `at` (an escape, or a `+` between digits of a form value), walks the view
 * with `walk`, and adds what it finds with spans mapped back onto the text. Each part of the text is decoded at
 * most once; the walk over the text itself goes on from `at` as usual (overlaps are resolved later).
 */
export function scanEncodedToken(st: ScanState, at: number, walk: (view: ScanState) => void): void {
  const t = st.text;
  let s = at;
  while (s > 0 && at - s < MAX_BEFORE && s > st.decodedUntil && !endsToken(t.charCodeAt(s - 1))) s--;
  let e = at;
  while (e < st.n && e - at < MAX_AFTER && !endsToken(t.charCodeAt(e))) e++;
  st.decodedUntil = e;
  const { text, offsets } = decode(t, s, e);
  const view = new ScanState(text, st.sel);
  view.decodedUntil = text.length;
  walk(view);
  for (const c of view.out) {
    const start = offsets[c.start];
    const end = offsets[c.end];
    if (end <= start) continue;
    st.out.push({ ...c, start, end, value: t.slice(start, end) });
    st.unordered = true;
  }
}
