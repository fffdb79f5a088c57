// IBAN, triggered by a word starting with two capital letters and two digits; compact or in groups of four.
import { isAsciiWordCode, isDigit, isUpper } from './chars.ts';
import { checkIban } from './checksums.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { lexicon, polarityBefore } from './text-features.ts';

const IBAN_LEX = lexicon(
  [
    'iban',
    'bank',
    'account',
    'konto',
    'sepa',
    'transfer',
    'payout',
    'wire',
    'bic',
    'swift',
    'rib',
    'cuenta',
    'compte',
    'conto',
    '口座',
    '账户',
    '帐户',
    '帳戶',
    '계좌',
    'счёт',
    'счет',
  ],
  [],
);

function isIbanChar(c: number): boolean {
  return isUpper(c) || isDigit(c);
}

const MAX_PARTS = 10;
const partEnd = new Int32Array(MAX_PARTS);

/** Tries an IBAN at word [i, wordEnd). Emits and returns its end, or returns -1. */
export function scanIban(st: ScanState, i: number, wordEnd: number): number {
  const t = st.text;
  for (let k = i; k < wordEnd; k++) if (!isIbanChar(t.charCodeAt(k))) return -1;
  const len = wordEnd - i;
  let parts = 1;
  partEnd[0] = wordEnd;
  if (len === 4) {
    let j = wordEnd;
    // Groups are separated by one space, or by a line break where the IBAN wraps.
    while (parts < MAX_PARTS && (t.charCodeAt(j) === 32 || t.charCodeAt(j) === 10) && isIbanChar(t.charCodeAt(j + 1))) {
      const g0 = j + 1;
      let g = g0;
      while (g < st.n && isIbanChar(t.charCodeAt(g)) && g - g0 <= 4) g++;
      if (g - g0 > 4 || (g < st.n && isAsciiWordCode(t.charCodeAt(g)))) break;
      partEnd[parts++] = g;
      j = g;
      if (g - g0 < 4) break;
    }
  } else if (len < 15 || len > 34) return -1;
  let firstChecksumFail = -1;
  for (let p = parts; p >= 1; p--) {
    const end = partEnd[p - 1];
    const compact = parts === 1 ? t.slice(i, end) : t.slice(i, end).replace(/[ \n]/g, '');
    if (compact.length < 15) break;
    const verdict = checkIban(compact);
    if (verdict === 'valid') return emitIban(st, i, end, true);
    if (verdict === 'checksum' && firstChecksumFail < 0) firstChecksumFail = end;
  }
  if (firstChecksumFail > 0) return emitIban(st, i, firstChecksumFail, false);
  return -1;
}

function emitIban(st: ScanState, start: number, end: number, valid: boolean): number {
  const ctx = polarityBefore(st.text, start, 40, IBAN_LEX);
  st.emit('IBAN', start, end, evidence({ valid, context: ctx, strength: 1 }));
  return end;
}
