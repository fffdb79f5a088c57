// National identifiers and hardware addresses, each by its definition: structure, check character(s), date parts,
// and context words in the country's languages. One table of formats; a token is tried against the formats whose
// length and first character fit it, so prose costs nothing.
import { isAlnum, isDigit } from './chars.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { type Lexicon, lexicon, polarityBefore } from './text-features.ts';

/** Verhoeff check (Aadhaar): true when the digit string's last digit checks the rest. */
export function verhoeffValid(digits: string): boolean {
  const d = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
  ];
  const p = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
  ];
  let c = 0;
  for (let i = 0; i < digits.length; i++) c = d[c]![p[i % 8]![digits.charCodeAt(digits.length - 1 - i) - 48]!]!;
  return c === 0;
}

/** Spanish DNI/NIF (8 digits + letter) and NIE (X/Y/Z + 7 digits + letter): the letter is the number mod 23. */
export function spanishIdValid(v: string): boolean {
  const letters = 'TRWAGMYFPDXBNJZSQVHLCKE';
  let num = v.slice(0, 8);
  const lead = 'XYZ'.indexOf(num[0]!);
  if (lead >= 0) num = `${lead}${num.slice(1)}`;
  if (!/^\d{8}$/.test(num)) return false;
  return letters[Number(num) % 23] === v[8];
}

/** Italian codice fiscale: 16 characters, the last a check letter over the odd/even positions' tables. */
export function italianFiscalCodeValid(v: string): boolean {
  if (!/^[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$/.test(v)) return false;
  const odd = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const c = v.charCodeAt(i);
    const k = c <= 57 ? c - 48 : c - 65;
    sum += i % 2 === 0 ? odd[k]! : k;
  }
  return String.fromCharCode(65 + (sum % 26)) === v[15];
}

/** Singapore NRIC/FIN: prefix S/T/F/G/M, 7 digits, a check letter from weights 2,7,6,5,4,3,2. */
export function singaporeIdValid(v: string): boolean {
  const weights = [2, 7, 6, 5, 4, 3, 2];
  let sum = 0;
  for (let i = 0; i < 7; i++) sum += (v.charCodeAt(i + 1) - 48) * weights[i]!;
  const prefix = v[0]!;
  if (prefix === 'T' || prefix === 'G') sum += 4;
  if (prefix === 'M') sum += 3;
  const r = sum % 11;
  const table = prefix === 'S' || prefix === 'T' ? 'JZIHGFEDCBA' : prefix === 'M' ? 'KLJNPQRTUWX' : 'XWUTRQPNMLK';
  return table[prefix === 'M' ? 10 - r : r] === v[8];
}

/** Finnish henkilötunnus: DDMMYY, century sign, 3-digit individual number, check character (mod 31). */
export function finnishIdValid(v: string): boolean {
  const m = /^(\d{2})(\d{2})(\d{2})[-+A-FU-Y](\d{3})([0-9A-Y])$/.exec(v);
  if (!m) return false;
  const day = Number(m[1]);
  const month = Number(m[2]);
  if (day < 1 || day > 31 || month < 1 || month > 12) return false;
  return '0123456789ABCDEFHJKLMNPRSTUVWXY'[Number(`${m[1]}${m[2]}${m[3]}${m[4]}`) % 31] === m[5];
}

/** Turkish T.C. kimlik no: 11 digits, not starting with 0, two check digits. */
export function turkishIdValid(v: string): boolean {
  if (!/^[1-9]\d{10}$/.test(v)) return false;
  const d = [...v].map(Number);
  const odd = d[0]! + d[2]! + d[4]! + d[6]! + d[8]!;
  const even = d[1]! + d[3]! + d[5]! + d[7]!;
  if ((((odd * 7 - even) % 10) + 10) % 10 !== d[9]) return false;
  return d.slice(0, 10).reduce((a, b) => a + b, 0) % 10 === d[10];
}

/** UK National Insurance number: two prefix letters (not D, F, I, Q, U, V; second not O; not BG, GB, NK, KN, TN, NT, ZZ), six digits, suffix A–D. */
export function ukNinoValid(v: string): boolean {
  if (!/^[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]$/.test(v)) return false;
  return !['BG', 'GB', 'NK', 'KN', 'TN', 'NT', 'ZZ'].includes(v.slice(0, 2));
}

/** Indian PAN: five letters (the fourth the holder's kind), four digits, a letter. */
export function indianPanValid(v: string): boolean {
  return /^[A-Z]{3}[ABCFGHLJPTK][A-Z]\d{4}[A-Z]$/.test(v);
}

const ID_LEX: Record<string, Lexicon> = {
  UK_NINO: lexicon(['ni', 'nino', 'national', 'insurance', 'nin'], []),
  IN_PAN: lexicon(['pan', 'permanent', 'account', 'income', 'tax'], []),
  IN_AADHAAR: lexicon(['aadhaar', 'aadhar', 'uidai', 'uid', 'आधार'], []),
  ES_NIF: lexicon(['dni', 'nif', 'nie', 'documento', 'identidad', 'fiscal'], []),
  IT_FISCAL_CODE: lexicon(['codice', 'fiscale', 'cf', 'tessera', 'sanitaria'], []),
  SG_NRIC_FIN: lexicon(['nric', 'fin', 'ic', 'identity'], []),
  FI_PERSONAL_ID: lexicon(['henkilötunnus', 'hetu', 'personbeteckning', 'henkilotunnus', 'sotu'], []),
  TR_NATIONAL_ID: lexicon(['tc', 'tckn', 'kimlik', 't.c.', 'vatandaşlık', 'vatandaslik'], []),
  MAC_ADDRESS: lexicon(['mac', 'ether', 'hwaddr', 'bssid', 'wifi', 'ethernet', 'adapter'], []),
};

/** Emits an identifier (context words before it raise it; one without a check character is ambiguous alone); returns its end. */
function emitId(st: ScanState, type: string, start: number, end: number, checksum: boolean | null): number {
  const context = polarityBefore(st.text, start, 40, ID_LEX[type]!);
  st.emit(type, start, end, evidence({ valid: checksum, context, strength: 1, ambiguity: checksum ? 0 : 0.2 }));
  return end;
}

/**
 * An upper-case alphanumeric token [i, j) starting with a letter (AB123456C, ABCPE1234F, RSSMRA85T10A562S,
 * S1234567D, X1234567L): tried against the letter-led formats. Returns the token's end when one matched, or -1.
 */
export function scanLetterLedId(st: ScanState, i: number, j: number): number {
  const len = j - i;
  if (len !== 9 && len !== 10 && len !== 16) return -1;
  const t = st.text;
  const v = t.slice(i, j);
  if (len === 9) {
    if (st.sel.enabled.has('UK_NINO') && ukNinoValid(v)) return emitId(st, 'UK_NINO', i, j, null);
    if (st.sel.enabled.has('SG_NRIC_FIN') && /^[STFGM]\d{7}[A-Z]$/.test(v) && singaporeIdValid(v))
      return emitId(st, 'SG_NRIC_FIN', i, j, true);
    if (st.sel.enabled.has('ES_NIF') && /^[XYZ]\d{7}[A-Z]$/.test(v) && spanishIdValid(v))
      return emitId(st, 'ES_NIF', i, j, true);
    return -1;
  }
  if (len === 10) {
    if (st.sel.enabled.has('IN_PAN') && indianPanValid(v)) return emitId(st, 'IN_PAN', i, j, null);
    return -1;
  }
  if (st.sel.enabled.has('IT_FISCAL_CODE') && italianFiscalCodeValid(v))
    return emitId(st, 'IT_FISCAL_CODE', i, j, true);
  return -1;
}

/** A digit-led token [i, …) with letters in it: Spanish DNI (12345678Z) and Finnish HETU (131052-308T). Returns its end or -1. */
export function scanDigitLedId(st: ScanState, i: number): number {
  const t = st.text;
  let j = i;
  while (j < st.n && j - i < 12 && (isAlnum(t.charCodeAt(j)) || t.charCodeAt(j) === 45 || t.charCodeAt(j) === 43)) j++;
  if (j < st.n && isAlnum(t.charCodeAt(j))) return -1;
  const v = t.slice(i, j);
  if (v.length === 9 && st.sel.enabled.has('ES_NIF') && /^\d{8}[A-Z]$/.test(v) && spanishIdValid(v))
    return emitId(st, 'ES_NIF', i, j, true);
  if (v.length === 11 && st.sel.enabled.has('FI_PERSONAL_ID') && finnishIdValid(v))
    return emitId(st, 'FI_PERSONAL_ID', i, j, true);
  return -1;
}

/**
 * A digit string of a number run (digits only, separators removed): Aadhaar (12 digits, first 2–9, Verhoeff)
 * and the Turkish id (11 digits, two check digits). Both share their shape with phone, tracking and account
 * numbers, so a context word (aadhaar, UID, kimlik, TCKN, …) is required.
 */
export function scanDigitId(st: ScanState, start: number, end: number, digits: string): boolean {
  if (digits.length === 12 && st.sel.enabled.has('IN_AADHAAR') && digits.charCodeAt(0) >= 50 && verhoeffValid(digits)) {
    const context = polarityBefore(st.text, start, 40, ID_LEX.IN_AADHAAR!);
    // Tracking and account numbers share the card's 4-4-4 grouping, and one in ten passes Verhoeff: the name decides.
    if (context > 0) {
      emitId(st, 'IN_AADHAAR', start, end, true);
      return true;
    }
  }
  if (digits.length === 11 && st.sel.enabled.has('TR_NATIONAL_ID') && turkishIdValid(digits)) {
    if (polarityBefore(st.text, start, 40, ID_LEX.TR_NATIONAL_ID!) > 0) {
      emitId(st, 'TR_NATIONAL_ID', start, end, true);
      return true;
    }
  }
  return false;
}

function hexAt(t: string, k: number): boolean {
  const c = t.charCodeAt(k);
  return isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/**
 * A MAC address at `i`: six hex pairs joined by `:` or `-` (00:1A:2B:3C:4D:5E), or three hex quads joined by `.`
 * (001a.2b3c.4d5e, Cisco). Returns its end, or -1. Broadcast and all-zero addresses are reported lower.
 */
export function scanMac(st: ScanState, i: number): number {
  if (!st.sel.enabled.has('MAC_ADDRESS')) return -1;
  const t = st.text;
  if (i > 0 && (isAlnum(t.charCodeAt(i - 1)) || t.charCodeAt(i - 1) === 58 || t.charCodeAt(i - 1) === 45)) return -1;
  let end = -1;
  const sep = t.charCodeAt(i + 2);
  if ((sep === 58 || sep === 45) && hexAt(t, i) && hexAt(t, i + 1)) {
    let k = i;
    let pairs = 0;
    while (pairs < 6 && hexAt(t, k) && hexAt(t, k + 1)) {
      pairs++;
      k += 2;
      if (pairs < 6) {
        if (t.charCodeAt(k) !== sep) break;
        k++;
      }
    }
    if (pairs === 6) end = k;
  } else if (t.charCodeAt(i + 4) === 46) {
    let k = i;
    let quads = 0;
    while (quads < 3 && hexAt(t, k) && hexAt(t, k + 1) && hexAt(t, k + 2) && hexAt(t, k + 3)) {
      quads++;
      k += 4;
      if (quads < 3) {
        if (t.charCodeAt(k) !== 46) break;
        k++;
      }
    }
    if (quads === 3) end = k;
  }
  if (end < 0) return -1;
  const after = end < st.n ? t.charCodeAt(end) : 32;
  if (isAlnum(after) || after === 58 || after === 45 || (after === 46 && hexAt(t, end + 1))) return -1;
  const v = t.slice(i, end);
  // Every letter-free address with a single repeated pair (00:00:…, ff:ff:…) is a placeholder or broadcast.
  const placeholder =
    /^(?:00[:.-]?)+00$|^(?:ff[:.-]?)+ff$/i.test(v) || /^(?:([0-9a-f]{2})[:-])\1(?:[:-]\1){4}$/i.test(v);
  const hasLetter = /[a-f]/i.test(v);
  const context = polarityBefore(t, i, 40, ID_LEX.MAC_ADDRESS!);
  // Six colon-joined decimal pairs are as often times or version tuples: they need a context word.
  if (!hasLetter && context <= 0) return -1;
  st.emit('MAC_ADDRESS', i, end, evidence({ valid: true, context, placeholder, strength: hasLetter ? 1 : 0.6 }));
  return end;
}
