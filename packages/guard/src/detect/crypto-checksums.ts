// Checksums of encodings used by cryptocurrency addresses and keys: bech32/bech32m (BIP-173, BIP-350),
// base58check (Bitcoin P2PKH/P2SH) and EIP-55 mixed-case Ethereum addresses (Keccak-256 from @noble/hashes).
import { createHash } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_VALUE = new Int8Array(128).fill(-1);
for (let k = 0; k < 32; k++) BECH32_VALUE[BECH32_CHARSET.charCodeAt(k)] = k;

const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function polymod(values: readonly number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let k = 0; k < 5; k++) if ((top >>> k) & 1) chk ^= GENERATOR[k]!;
  }
  return chk >>> 0;
}

/** The bech32 variant a string's checksum matches (1 = bech32, 0x2bc830a3 = bech32m), or 0 when neither. */
export function bech32Constant(value: string): number {
  if (value !== value.toLowerCase() && value !== value.toUpperCase()) return 0;
  const s = value.toLowerCase();
  const sep = s.lastIndexOf('1');
  if (sep < 1 || s.length - sep - 1 < 6) return 0;
  const values: number[] = [];
  for (let k = 0; k < sep; k++) values.push(s.charCodeAt(k) >> 5);
  values.push(0);
  for (let k = 0; k < sep; k++) values.push(s.charCodeAt(k) & 31);
  for (let k = sep + 1; k < s.length; k++) {
    const c = s.charCodeAt(k);
    const v = c < 128 ? BECH32_VALUE[c]! : -1;
    if (v < 0) return 0;
    values.push(v);
  }
  const r = polymod(values);
  return r === 1 || r === 0x2bc830a3 ? r : 0;
}

/** True when the string is valid bech32 or bech32m. */
export function bech32Valid(value: string): boolean {
  return bech32Constant(value) !== 0;
}

/**
 * A Bitcoin segwit address (bc1…, tb1…): bech32 for witness version 0 (q), bech32m for versions 1–16, and a
 * program of the length its version allows (20 or 32 bytes for v0).
 */
export function segwitAddressValid(value: string): boolean {
  const constant = bech32Constant(value);
  if (constant === 0) return false;
  const s = value.toLowerCase();
  const sep = s.lastIndexOf('1');
  const version = BECH32_VALUE[s.charCodeAt(sep + 1)]!;
  if (version > 16 || (version === 0) !== (constant === 1)) return false;
  const bits = (s.length - sep - 2 - 6) * 5;
  const bytes = Math.floor(bits / 8);
  if (bytes < 2 || bytes > 40) return false;
  return version !== 0 || bytes === 20 || bytes === 32;
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Decodes base58 to bytes, or undefined when a character is outside the alphabet. */
function base58Decode(value: string): Uint8Array | undefined {
  const bytes: number[] = [];
  for (let k = 0; k < value.length; k++) {
    let carry = BASE58.indexOf(value[k]!);
    if (carry < 0) return undefined;
    for (let b = 0; b < bytes.length; b++) {
      carry += bytes[b]! * 58;
      bytes[b] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  for (let k = 0; k < value.length && value[k] === '1'; k++) bytes.push(0);
  return Uint8Array.from(bytes.reverse());
}

/**
 * A legacy Bitcoin address (P2PKH 1…, P2SH 3…, testnet m/n/2…): base58check of a version byte and a 20-byte hash,
 * the last 4 bytes the double SHA-256 of the rest.
 */
export function base58CheckAddressValid(value: string): boolean {
  const raw = base58Decode(value);
  if (raw?.length !== 25) return false;
  const version = raw[0];
  if (version !== 0x00 && version !== 0x05 && version !== 0x6f && version !== 0xc4) return false;
  const payload = raw.subarray(0, 21);
  const sum = createHash('sha256').update(createHash('sha256').update(payload).digest()).digest();
  return sum[0] === raw[21] && sum[1] === raw[22] && sum[2] === raw[23] && sum[3] === raw[24];
}

/**
 * EIP-55: in a mixed-case Ethereum address each letter is upper-case exactly when the matching nibble of the
 * Keccak-256 of the lower-case hex is 8 or more. `hex` is the 40 characters after 0x.
 */
export function eip55Valid(hex: string): boolean {
  const lower = hex.toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  for (let k = 0; k < 40; k++) {
    const c = hex.charCodeAt(k);
    if (c < 65) continue; // a digit
    const nibble = (hash[k >> 1]! >> (k % 2 === 0 ? 4 : 0)) & 15;
    const upper = c <= 70;
    if (upper !== nibble >= 8) return false;
  }
  return true;
}
