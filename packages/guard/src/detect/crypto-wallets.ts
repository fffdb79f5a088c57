// Cryptocurrency wallet addresses by their encodings: Bitcoin legacy (base58check P2PKH 1…, P2SH 3…), Bitcoin
// segwit (bech32 bc1q…, bech32m bc1p…) and Ethereum (0x + 40 hex, EIP-55 checksummed when mixed-case).
import { base58CheckAddressValid, eip55Valid, segwitAddressValid } from './crypto-checksums.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { lexicon, polarityBefore } from './text-features.ts';

const WALLET_WORDS = lexicon(
  [
    'bitcoin',
    'btc',
    'wallet',
    'address',
    'ethereum',
    'eth',
    'crypto',
    'usdt',
    'send',
    'deposit',
    'monedero',
    'carteira',
  ],
  [],
);

function hasLetter(t: string, i: number, j: number): boolean {
  for (let k = i; k < j; k++) if (t.charCodeAt(k) >= 65) return true;
  return false;
}

function emitWallet(st: ScanState, i: number, j: number, valid: boolean | null): number {
  const context = polarityBefore(st.text, i, 40, WALLET_WORDS);
  st.emit('CRYPTO_WALLET', i, j, evidence({ valid, context, strength: 1, ambiguity: valid ? 0 : 0.2 }));
  return j;
}

/**
 * A wallet address at the ASCII run [i, j) (the walk calls this for runs that start 1/3 with 26–35 characters,
 * bc1/tb1 with 42 or more, or 0x with 42). Returns its end, or -1.
 */
export function scanWallet(st: ScanState, i: number, j: number): number {
  if (!st.sel.enabled.has('CRYPTO_WALLET')) return -1;
  const t = st.text;
  const c0 = t.charCodeAt(i);
  const len = j - i;
  if (c0 === 48) {
    if (len !== 42 || t.charCodeAt(i + 1) !== 120) return -1;
    const hex = t.slice(i + 2, j);
    if (!/^[0-9a-fA-F]{40}$/.test(hex) || /^0+$/.test(hex)) return -1;
    const mixed = /[a-f]/.test(hex) && /[A-F]/.test(hex);
    if (mixed && !eip55Valid(hex)) return -1;
    return emitWallet(st, i, j, mixed ? true : null);
  }
  if (c0 === 49 || c0 === 51) {
    // A base58 address mixes letters in; a long run of digits (an id, a timestamp) is not one.
    if (len < 26 || len > 35 || !hasLetter(t, i, j)) return -1;
    return base58CheckAddressValid(t.slice(i, j)) ? emitWallet(st, i, j, true) : -1;
  }
  if (len < 42 || len > 62 || !/^(?:bc|tb)1/.test(t.slice(i, i + 3))) return -1;
  return segwitAddressValid(t.slice(i, j)) ? emitWallet(st, i, j, true) : -1;
}
