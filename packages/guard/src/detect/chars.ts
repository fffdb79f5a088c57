// Character classes for the scanner's hot loop (UTF-16 code units).

/** 0-9 */
export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** A-Z */
export function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}

/** A-Z, a-z, 0-9 */
export function isAlnum(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/**
 * Characters that continue a word: ASCII letters, digits, `_`, and non-ASCII letters (approximated as code
 * units from U+00C0 up, minus punctuation, symbol and surrogate blocks), so `café` and `пароль` are one word.
 */
export function isWordCode(c: number): boolean {
  if (c < 128) return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
  if (c < 0xc0 || c === 0xd7 || c === 0xf7) return false;
  if (c >= 0x2000 && c <= 0x2bff) return false;
  if (c >= 0x3000 && c <= 0x303f) return false;
  if (c >= 0xd800 && c <= 0xdfff) return false;
  return c < 0xfe00;
}

/** WORD_TABLE[c] is 1 exactly when isWordCode(c): one load instead of a chain of comparisons in the hot loop. */
export const WORD_TABLE: Uint8Array = (() => {
  const table = new Uint8Array(65536);
  for (let c = 0; c < 65536; c++) if (isWordCode(c)) table[c] = 1;
  return table;
})();

/**
 * WORD_KIND[c]: 0 outside words, 1 for ASCII word characters (A-Z a-z 0-9 _), 2 for the non-ASCII ones. The walk
 * ORs the kinds over a word: a word mixing both (`カード番号4686`, `IPは192`) has its ASCII runs looked at as
 * entities of their own, since entities are written in ASCII and scripts such as Japanese, Chinese and Korean
 * put no blank between them and the words around them.
 */
export const WORD_KIND: Uint8Array = (() => {
  const table = new Uint8Array(65536);
  for (let c = 0; c < 65536; c++) if (isWordCode(c)) table[c] = c < 128 ? 1 : 2;
  return table;
})();

/** A-Z, a-z, 0-9, `_`: the characters that continue an ASCII-shaped entity (a non-ASCII letter ends one). */
export function isAsciiWordCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** ASCII word characters and the accented Latin letters (U+00C0–U+024F, U+1E00–U+1EFF) that extend them. */
export function isLatinWordCode(c: number): boolean {
  if (c < 128) return isAsciiWordCode(c);
  return (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7) || (c >= 0x1e00 && c <= 0x1eff);
}

/**
 * Scripts written without blanks between words, and their punctuation: Thai, Hangul, CJK (kana, ideographs,
 * CJK punctuation) and the full-width forms (`：`, `，`). Keywords in them are found inside longer runs.
 */
export function isCjkCode(c: number): boolean {
  if (c < 0x0e00) return false;
  return (
    c <= 0x0e7f ||
    (c >= 0x1100 && c <= 0x11ff) ||
    (c >= 0x2e80 && c <= 0x9fff) ||
    (c >= 0xa960 && c <= 0xa97f) ||
    (c >= 0xac00 && c <= 0xd7af) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xff00 && c <= 0xffef)
  );
}

/** Characters of base64url bodies (A-Z a-z 0-9 _ -). */
export function isBase64Url(c: number): boolean {
  return isAlnum(c) || c === 95 || c === 45;
}

function foldCode(c: number): number {
  if (c >= 65 && c <= 90) return c + 32;
  if (c >= 0xc0 && c <= 0xde && c !== 0xd7) return c + 32;
  if (c >= 0x410 && c <= 0x42f) return c + 32; // А–Я
  if (c >= 0x400 && c <= 0x40f) return c + 80; // Ѐ–Џ
  if (c >= 0x391 && c <= 0x3a9 && c !== 0x3a2) return c + 32; // Α–Ω
  return c;
}

/** FOLD[c] is foldCase(c): one load in the hashing loops. */
const FOLD: Uint16Array = (() => {
  const table = new Uint16Array(65536);
  for (let c = 0; c < 65536; c++) table[c] = foldCode(c);
  return table;
})();

/** Folds ASCII, Latin-1, Greek and Cyrillic upper-case letters to lower case; other code units pass through. */
export function foldCase(c: number): number {
  return FOLD[c];
}

/** The scanner's case-insensitive word hash; `hashWord` over a keyword equals the loop's running hash over its token. */
export function hashStep(h: number, c: number): number {
  return (Math.imul(h, 31) + foldCase(c)) | 0;
}

/** hashStep over every code unit of `word`. */
export function hashWord(word: string): number {
  let h = 0;
  for (let i = 0; i < word.length; i++) h = hashStep(h, word.charCodeAt(i));
  return h;
}
