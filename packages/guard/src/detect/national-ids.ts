// National identifiers and hardware addresses, each by its definition: structure, check character(s), date parts,
// and context words in the country's languages. One table of formats; a token is tried against the formats whose
// length and first character fit it, so prose costs nothing.
import { isAlnum, isDigit } from './chars.ts';
import { cardSchemeFits, luhnValid } from './checksums.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { type Lexicon, lexicon, polarityBefore } from './text-features.ts';

/** Verhoeff's multiplication (dihedral group D5) and permutation tables, built once. */
const VERHOEFF_D = [
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
const VERHOEFF_P = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
  [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
  [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
  [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
  [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
  [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];

/** Verhoeff check (Aadhaar): true when the digit string's last digit checks the rest. */
export function verhoeffValid(digits: string): boolean {
  let c = 0;
  for (let i = 0; i < digits.length; i++)
    c = VERHOEFF_D[c]![VERHOEFF_P[i % 8]![digits.charCodeAt(digits.length - 1 - i) - 48]!]!;
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

/** Naming words per identifier, in the languages of the country that issues it. */
const ID_WORDS: Record<string, readonly string[]> = {
  UK_NINO: ['ni', 'nino', 'national', 'insurance', 'nin'],
  IN_PAN: ['pan', 'permanent', 'account', 'income', 'tax'],
  IN_AADHAAR: ['aadhaar', 'aadhar', 'uidai', 'uid', 'आधार'],
  ES_NIF: ['dni', 'nif', 'nie', 'documento', 'identidad', 'fiscal'],
  IT_FISCAL_CODE: ['codice', 'fiscale', 'cf', 'tessera', 'sanitaria'],
  SG_NRIC_FIN: ['nric', 'fin', 'ic', 'identity'],
  FI_PERSONAL_ID: ['henkilötunnus', 'hetu', 'personbeteckning', 'henkilotunnus', 'sotu'],
  TR_NATIONAL_ID: ['tc', 'tckn', 'kimlik', 't.c.', 'vatandaşlık', 'vatandaslik'],
  MAC_ADDRESS: ['mac', 'ether', 'hwaddr', 'bssid', 'wifi', 'ethernet', 'adapter'],
  AU_TFN: ['tfn', 'tax', 'file'],
  AU_ABN: ['abn', 'business'],
  AU_ACN: ['acn', 'company'],
  AU_MEDICARE: ['medicare'],
  KR_RRN: ['rrn', '주민등록번호', '주민번호', '주민등록', 'resident', 'registration'],
  US_ITIN: ['itin', 'taxpayer'],
  US_PASSPORT: ['passport'],
  US_DRIVER_LICENSE: ['driver', 'drivers', 'license', 'licence', 'dl', 'dl#', 'dln'],
  US_BANK_NUMBER: ['bank', 'acct', 'account', 'checking', 'savings'],
  ABA_ROUTING_NUMBER: ['routing', 'aba', 'rtn', 'transit'],
  US_MBI: ['mbi', 'medicare', 'beneficiary'],
  US_NPI: ['npi', 'provider'],
  DE_TAX_ID: [
    'steuer',
    'steuerid',
    'steuernummer',
    'steueridentifikationsnummer',
    'identifikationsnummer',
    'idnr',
    'tin',
    'tax',
  ],
  TH_TNIN: ['thai', 'tnin', 'pid', 'เลขประจำตัวประชาชน', 'ประชาชน', 'บัตรประชาชน'],
};

/** Words that make a named number something else: a software licence key, a product serial, a number plate. */
const NOT_ID_WORDS: Record<string, readonly string[]> = {
  US_DRIVER_LICENSE: ['key', 'mit', 'apache', 'gpl', 'bsd', 'software', 'product', 'serial', 'plate', 'seat', 'seats'],
};

const ID_LEX: Record<string, Lexicon> = Object.fromEntries(
  Object.entries(ID_WORDS).map(([type, words]) => [type, lexicon(words, NOT_ID_WORDS[type] ?? [])]),
);

/** The identifiers a bare digit run can be: one look for any of their words says whether any may apply. */
const NUMERIC_ID_TYPES = [
  'IN_AADHAAR',
  'TR_NATIONAL_ID',
  'AU_TFN',
  'AU_ABN',
  'AU_ACN',
  'AU_MEDICARE',
  'KR_RRN',
  'US_ITIN',
  'US_PASSPORT',
  'US_DRIVER_LICENSE',
  'US_BANK_NUMBER',
  'ABA_ROUTING_NUMBER',
  'US_NPI',
  'DE_TAX_ID',
  'TH_TNIN',
];
const NUMERIC_ID_WORDS = lexicon(
  NUMERIC_ID_TYPES.flatMap((type) => ID_WORDS[type]!),
  [],
);

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

/**
 * A capital letter and 6–13 digits [i, j) (A12345678, D1234567): a US passport book number (a letter and eight
 * digits) or a driver licence number of the states that lead with a letter, only when a word names it (no check
 * digit). Returns the token's end when one matched, or -1.
 */
export function scanLetterDigitsId(st: ScanState, i: number, j: number): number {
  const len = j - i;
  if (len < 7 || len > 14) return -1;
  const t = st.text;
  for (let k = i + 1; k < j; k++) if (!isDigit(t.charCodeAt(k))) return -1;
  if (len === 9 && named(st, 'US_PASSPORT', i)) return emitId(st, 'US_PASSPORT', i, j, null);
  if (named(st, 'US_DRIVER_LICENSE', i)) return emitId(st, 'US_DRIVER_LICENSE', i, j, null);
  return -1;
}

/**
 * A digit-led token [i, …) with letters in it: Spanish DNI (12345678Z), Finnish HETU (131052-308T), US MBI
 * (1EG4-TE5-MK73). Returns its end or -1.
 */
export function scanDigitLedId(st: ScanState, i: number): number {
  const t = st.text;
  let j = i;
  while (j < st.n && j - i < 14 && (isAlnum(t.charCodeAt(j)) || t.charCodeAt(j) === 45 || t.charCodeAt(j) === 43)) j++;
  if (j < st.n && isAlnum(t.charCodeAt(j))) return -1;
  const v = t.slice(i, j);
  if (v.length === 9 && st.sel.enabled.has('ES_NIF') && /^\d{8}[A-Z]$/.test(v) && spanishIdValid(v))
    return emitId(st, 'ES_NIF', i, j, true);
  if (v.length === 11 && st.sel.enabled.has('FI_PERSONAL_ID') && finnishIdValid(v))
    return emitId(st, 'FI_PERSONAL_ID', i, j, true);
  // US Medicare Beneficiary Identifier: positional letters and digits, no check character.
  if ((v.length === 11 || v.length === 13) && st.sel.enabled.has('US_MBI') && mbiValid(v))
    return emitId(st, 'US_MBI', i, j, null);
  return -1;
}

/** True when the type is enabled and a word naming it stands before `start`. */
function named(st: ScanState, type: string, start: number): boolean {
  return st.sel.enabled.has(type) && polarityBefore(st.text, start, 40, ID_LEX[type]!) > 0;
}

/**
 * Whether a digit run of `len` digits at [start, end) may be an identifier: a layout only one identifier uses, or a
 * naming word before it. Decided before the run's digits are gathered, so most runs (phones, amounts, ids) cost one
 * look back and no allocation.
 */
export function digitIdMayApply(st: ScanState, start: number, end: number, len: number): boolean {
  if (end - start !== len) {
    // Written in groups: only the layouts an identifier is written in (an SSN's 3-2-4 or a phone's 3-3-4 are not).
    const layout = groupLayout(st.text, start, end);
    if (layout === 0x324) return st.text.charCodeAt(start) === 57; // an ITIN 9xx-xx-xxxx, not an SSN
    if (layout === 0x67 || layout === 0x14521) return true; // RRN, Thai id: their layout names them
    if (!ID_LAYOUTS.has(layout)) return false;
  } else if (!plainRunMayApply(st, start, len)) return false;
  return polarityBefore(st.text, start, 40, NUMERIC_ID_WORDS) > 0;
}

/**
 * A plain digit run's cheap structural test before any look back (10- and 13-digit runs are mostly phone numbers and
 * millisecond timestamps): a Medicare check digit, an RRN's month, a Thai check digit, an enabled bank-number type.
 */
function plainRunMayApply(st: ScanState, start: number, len: number): boolean {
  const t = st.text;
  const on = st.sel.enabled;
  switch (len) {
    case 10: {
      const d0 = t.charCodeAt(start);
      const medicare =
        d0 >= 50 && d0 <= 54 && weightedSum(t, [1, 3, 7, 9, 1, 3, 7, 9], start) % 10 === digitAt(t, start + 8);
      return medicare || on.has('US_NPI') || on.has('US_BANK_NUMBER');
    }
    case 13: {
      const month = digitAt(t, start + 2) * 10 + digitAt(t, start + 3);
      const thai =
        (11 - (weightedSum(t, [13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2], start) % 11)) % 10 === digitAt(t, start + 12);
      return (month >= 1 && month <= 12) || thai || on.has('US_BANK_NUMBER');
    }
    default:
      return len <= 12 || on.has('US_BANK_NUMBER');
  }
}

/** The digit-group lengths of [start, end) as hex digits, one per group (3-3-3 is 0x333); 0 past six groups. */
function groupLayout(t: string, start: number, end: number): number {
  let layout = 0;
  let run = 0;
  let groups = 0;
  for (let k = start; k < end; k++) {
    if (isDigit(t.charCodeAt(k))) run++;
    else if (run > 0) {
      if (++groups > 6 || run > 15) return 0;
      layout = layout * 16 + run;
      run = 0;
    }
  }
  return run > 0 && groups < 6 && run <= 15 ? layout * 16 + run : 0;
}

/**
 * The other layouts grouped identifiers are written in, which need a naming word: TFN/ACN 3-3-3, Medicare 4-5-1
 * (and 4-5-1-1), ABN and Steuer-ID 2-3-3-3, Aadhaar 4-4-4, an eight-digit TFN 2-3-3, and 11-digit ids split 3-4-4 or
 * 4-3-4 as people write them.
 */
const ID_LAYOUTS = new Set([0x333, 0x451, 0x4511, 0x2333, 0x444, 0x233, 0x344, 0x434]);

/**
 * A digit run of 8–17 digits (separators removed in `digits`, the run as written at [start, end)). Layouts that
 * only one identifier uses are taken by their structure and check digit: an ITIN 9xx-7x-xxxx, a Korean RRN
 * YYMMDD-NNNNNNN, a Thai id 1-2345-67890-12-3. Every other numeric identifier shares its shape with phone,
 * account and tracking numbers, so a naming word in the country's language is required before it (aadhaar,
 * kimlik, TFN, ABN, Medicare, routing, NPI, Steuer-ID, …), and the check digit, where the format has one.
 * Returns true when one was reported.
 */
export function scanDigitId(st: ScanState, start: number, end: number, digits: string): boolean {
  const len = digits.length;
  if (len < 8 || len > 17) return false;
  const t = st.text;
  const raw = end - start === len ? digits : t.slice(start, end);
  if (raw !== digits) {
    if (
      len === 9 &&
      raw.charCodeAt(0) === 57 &&
      st.sel.enabled.has('US_ITIN') &&
      /^9\d\d-\d\d-\d{4}$/.test(raw) &&
      itinValid(digits)
    ) {
      emitId(st, 'US_ITIN', start, end, true);
      return true;
    }
    if (len === 13 && st.sel.enabled.has('KR_RRN') && /^\d{6}-\d{7}$/.test(raw) && krRrnParts(digits).checked) {
      emitId(st, 'KR_RRN', start, end, true);
      return true;
    }
    if (len === 13 && st.sel.enabled.has('TH_TNIN') && /^\d-\d{4}-\d{5}-\d\d-\d$/.test(raw) && thaiIdValid(digits)) {
      emitId(st, 'TH_TNIN', start, end, true);
      return true;
    }
  }
  // The check digits first (arithmetic on the digits), then one look for a naming word, only when some type fits.
  const fits = FITS;
  fits.length = 0;
  const on = st.sel.enabled;
  switch (len) {
    case 8:
      if (on.has('AU_TFN') && auTfnValid(digits)) fits.push('AU_TFN', true);
      break;
    case 9:
      if (on.has('AU_TFN') && auTfnValid(digits)) fits.push('AU_TFN', true);
      if (on.has('AU_ACN') && auAcnValid(digits)) fits.push('AU_ACN', true);
      if (on.has('ABA_ROUTING_NUMBER') && abaRoutingValid(digits)) fits.push('ABA_ROUTING_NUMBER', true);
      if (on.has('US_ITIN') && itinValid(digits)) fits.push('US_ITIN', true);
      // Passport numbers are written as one run (123456789), never grouped like an SSN.
      if (raw === digits && on.has('US_PASSPORT')) fits.push('US_PASSPORT', null);
      break;
    case 10:
      if (on.has('AU_MEDICARE') && auMedicareValid(digits)) fits.push('AU_MEDICARE', true);
      if (on.has('US_NPI') && npiValid(digits)) fits.push('US_NPI', true);
      break;
    case 11:
      if (on.has('TR_NATIONAL_ID') && turkishIdValid(digits)) fits.push('TR_NATIONAL_ID', true);
      if (on.has('DE_TAX_ID') && deTaxIdValid(digits)) fits.push('DE_TAX_ID', true);
      if (on.has('AU_ABN') && auAbnValid(digits)) fits.push('AU_ABN', true);
      if (on.has('AU_MEDICARE') && auMedicareValid(digits)) fits.push('AU_MEDICARE', true);
      break;
    case 12:
      // Tracking and account numbers share the card's 4-4-4 grouping, and one in ten passes Verhoeff: the name decides.
      if (on.has('IN_AADHAAR') && digits.charCodeAt(0) >= 50 && verhoeffValid(digits)) fits.push('IN_AADHAAR', true);
      break;
    case 13: {
      const rrn = on.has('KR_RRN') ? krRrnParts(digits) : NO_RRN;
      if (rrn.date) fits.push('KR_RRN', rrn.checked ? true : null);
      if (on.has('TH_TNIN') && thaiIdValid(digits)) fits.push('TH_TNIN', true);
      break;
    }
  }
  // Driver licence numbers follow each state's own layout, none with a check digit: the all-digit ones (8–9 digits,
  // as in Texas, Pennsylvania, New York) as a plain run that the word names.
  if (raw === digits && len <= 9 && on.has('US_DRIVER_LICENSE')) fits.push('US_DRIVER_LICENSE', null);
  // A bank account number has no check digit of its own: a plain digit run that the word names, not a card.
  if (raw === digits && on.has('US_BANK_NUMBER') && !(cardSchemeFits(digits) && luhnValid(digits)))
    fits.push('US_BANK_NUMBER', null);
  if (fits.length === 0 || polarityBefore(t, start, 40, NUMERIC_ID_WORDS) <= 0) return false;
  for (let k = 0; k < fits.length; k += 2) {
    const type = fits[k] as string;
    if (polarityBefore(t, start, 40, ID_LEX[type]!) > 0) {
      emitId(st, type, start, end, fits[k + 1] as boolean | null);
      return true;
    }
  }
  return false;
}

/** Scratch list of (type, validity) pairs for scanDigitId. */
const FITS: (string | boolean | null)[] = [];

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

/** Σ digitₖ × weightₖ over the first weights.length digits of a digit string. */
function weightedSum(d: string, weights: readonly number[], from = 0): number {
  let sum = 0;
  for (let k = 0; k < weights.length; k++) sum += (d.charCodeAt(from + k) - 48) * weights[k]!;
  return sum;
}

/** The digit at position k. */
function digitAt(d: string, k: number): number {
  return d.charCodeAt(k) - 48;
}

/** Australian Tax File Number: 9 digits (weights 1,4,3,7,5,8,6,9,10) or 8 (10,7,8,4,6,3,5,1), the sum divisible by 11. */
export function auTfnValid(d: string): boolean {
  if (d.length === 9) return weightedSum(d, [1, 4, 3, 7, 5, 8, 6, 9, 10]) % 11 === 0;
  return d.length === 8 && weightedSum(d, [10, 7, 8, 4, 6, 3, 5, 1]) % 11 === 0;
}

/** Australian Business Number: 11 digits; minus 1 on the first, weights 10,1,3,…,19, the sum divisible by 89. */
export function auAbnValid(d: string): boolean {
  if (d.length !== 11 || d[0] === '0') return false;
  // Minus 1 on the first digit, whose weight is 10.
  return (weightedSum(d, [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19]) - 10) % 89 === 0;
}

/** Australian Company Number: 9 digits, the last (10 − weighted sum mod 10) mod 10 over weights 8…1. */
export function auAcnValid(d: string): boolean {
  if (d.length !== 9) return false;
  return (10 - (weightedSum(d, [8, 7, 6, 5, 4, 3, 2, 1]) % 10)) % 10 === digitAt(d, 8);
}

/** Australian Medicare card number: 10 digits (11 with the IRN), first 2–6, the 9th the weighted sum mod 10. */
export function auMedicareValid(d: string): boolean {
  if ((d.length !== 10 && d.length !== 11) || d[0]! < '2' || d[0]! > '6') return false;
  return weightedSum(d, [1, 3, 7, 9, 1, 3, 7, 9]) % 10 === digitAt(d, 8);
}

/** Days in a month (February 29 allowed: the year's century is not always known). */
function dayFits(month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/**
 * Korean resident registration number: YYMMDD, a century/sex digit (1–8, 9, 0), five digits and a check digit
 * (11 − Σ weights 2…9,2…5 mod 11) mod 10. Numbers issued since October 2020 drop the check digit: `checked` says
 * whether it passed, and the date part must be a real date either way.
 */
export function krRrnParts(d: string): { readonly date: boolean; readonly checked: boolean } {
  if (d.length !== 13) return NO_RRN;
  const date = dayFits(digitAt(d, 2) * 10 + digitAt(d, 3), digitAt(d, 4) * 10 + digitAt(d, 5));
  if (!date) return NO_RRN;
  const check = (11 - (weightedSum(d, [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5]) % 11)) % 10;
  return check === digitAt(d, 12) ? RRN_CHECKED : RRN_DATED;
}

const NO_RRN = Object.freeze({ date: false, checked: false });
const RRN_DATED = Object.freeze({ date: true, checked: false });
const RRN_CHECKED = Object.freeze({ date: true, checked: true });

/** US ABA routing transit number: 9 digits, a valid Federal Reserve prefix, 3-7-1 weighted sum divisible by 10. */
export function abaRoutingValid(d: string): boolean {
  if (d.length !== 9) return false;
  const p = Number(d.slice(0, 2));
  if (!(p <= 12 || (p >= 21 && p <= 32) || (p >= 61 && p <= 72) || p === 80)) return false;
  return weightedSum(d, [3, 7, 1, 3, 7, 1, 3, 7, 1]) % 10 === 0;
}

/** US National Provider Identifier: 10 digits starting 1 or 2, Luhn-valid behind the 80840 prefix. */
export function npiValid(d: string): boolean {
  if (d.length !== 10 || (d[0] !== '1' && d[0] !== '2')) return false;
  return luhnValid(`80840${d}`);
}

/** US ITIN: area 9xx, group 50–65, 70–88, 90–92 or 94–99, any serial. */
export function itinValid(d: string): boolean {
  if (d.length !== 9 || d[0] !== '9') return false;
  const g = Number(d.slice(3, 5));
  return (g >= 50 && g <= 65) || (g >= 70 && g <= 88) || (g >= 90 && g <= 92) || g >= 94;
}

/** US Medicare Beneficiary Identifier: 11 characters by position (no S, L, O, I, B, Z), dashes after 4 and 7 optional. */
export function mbiValid(v: string): boolean {
  return /^[1-9][AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]-?[AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]-?[AC-HJKMNP-RT-Y]{2}[0-9]{2}$/.test(
    v,
  );
}

/**
 * German tax identification number (Steuer-ID): 11 digits, not starting with 0; among the first ten one digit
 * occurs twice or three times and the rest at most once; the check digit is ISO 7064 MOD 11,10.
 */
export function deTaxIdValid(d: string): boolean {
  if (d.length !== 11 || d[0] === '0') return false;
  const counts = new Array<number>(10).fill(0);
  for (let k = 0; k < 10; k++) counts[digitAt(d, k)]!++;
  let repeated = 0;
  for (const c of counts) {
    if (c > 3) return false;
    if (c >= 2) repeated++;
  }
  if (repeated !== 1) return false;
  let product = 10;
  for (let k = 0; k < 10; k++) {
    let sum = (digitAt(d, k) + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  const check = 11 - product === 10 ? 0 : 11 - product;
  return check === digitAt(d, 10);
}

/** Thai national id: 13 digits, first 1–8, check digit (11 − Σ dᵢ·(13 − i) mod 11) mod 10. */
export function thaiIdValid(d: string): boolean {
  if (d.length !== 13 || d[0] === '0' || d[0] === '9') return false;
  return (11 - (weightedSum(d, [13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2]) % 11)) % 10 === digitAt(d, 12);
}
