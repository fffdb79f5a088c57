// IPv6 addresses: eight hex groups, or fewer with one `::`, optionally ending in a dotted IPv4.
import { isAsciiWordCode, isDigit } from './chars.ts';
import { ipContext } from './numeric-detectors.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { isHexCode } from './text-features.ts';

function dottedQuadEnd(t: string, i: number): number {
  let j = i;
  for (let part = 0; part < 4; part++) {
    const s = j;
    let v = 0;
    while (j < t.length && isDigit(t.charCodeAt(j)) && j - s < 3) {
      v = v * 10 + t.charCodeAt(j) - 48;
      j++;
    }
    if (j === s || v > 255) return -1;
    if (part < 3) {
      if (t.charCodeAt(j) !== 46) return -1;
      j++;
    }
  }
  return isDigit(t.charCodeAt(j)) ? -1 : j;
}

/**
 * Tries an IPv6 address at `start` (a hex digit or the first `:` of `::`). Emits it and returns its end, or
 * returns -1 (times like 12:30:45, MAC addresses, `std::vector` and other colon runs are not addresses).
 */
export function scanIpv6(st: ScanState, start: number): number {
  const t = st.text;
  const n = st.n;
  let j = start;
  let groups = 0;
  let compressed = false;
  let sawDigit = false;
  if (t.charCodeAt(j) === 58) {
    if (t.charCodeAt(j + 1) !== 58) return -1;
    compressed = true;
    j += 2;
  }
  for (;;) {
    const g0 = j;
    while (j < n && isHexCode(t.charCodeAt(j)) && j - g0 <= 4) j++;
    const len = j - g0;
    if (len === 0) break;
    if (len > 4) return -1;
    if (t.charCodeAt(j) === 46 && groups <= 6 && isDigit(t.charCodeAt(j + 1))) {
      const quadEnd = dottedQuadEnd(t, g0);
      if (quadEnd < 0) return -1;
      groups += 2;
      sawDigit = true;
      j = quadEnd;
      break;
    }
    for (let k = g0; k < j; k++) if (isDigit(t.charCodeAt(k))) sawDigit = true;
    groups++;
    if (groups > 8) return -1;
    if (t.charCodeAt(j) !== 58) break;
    if (t.charCodeAt(j + 1) === 58) {
      if (compressed) return -1;
      compressed = true;
      j += 2;
      if (!isHexCode(t.charCodeAt(j))) break;
    } else if (isHexCode(t.charCodeAt(j + 1))) j++;
    else break;
  }
  // `::` alone is the unspecified address (`src=::`, `:: /0`), written between blanks or delimiters.
  const unspecified =
    compressed &&
    groups === 0 &&
    j === start + 2 &&
    (start === 0 || (!isAsciiWordCode(t.charCodeAt(start - 1)) && t.charCodeAt(start - 1) !== 58));
  if (!unspecified && (compressed ? groups > 7 || groups === 0 : groups !== 8)) return -1;
  if (!sawDigit && !unspecified) return -1;
  // A zone index (fe80::1%eth0) and a prefix length (::1/128) belong to the address.
  const full = ipSuffixEnd(t, j, 128, true);
  const after = full < n ? t.charCodeAt(full) : 32;
  if ((isAsciiWordCode(after) && after !== 95) || (unspecified && after === 58)) return -1;
  if (!st.sel.ip) return full;
  const ctx = ipContext(st, start, j);
  st.emit('IP_ADDRESS', start, full, evidence({ valid: true, context: ctx, strength: unspecified ? 0.6 : 0.9 }));
  return full;
}

/** End of an address's `%zone` (IPv6 only) and `/prefix` (at most `maxPrefix`) suffixes after `j`, or `j`. */
export function ipSuffixEnd(t: string, j: number, maxPrefix: number, zone: boolean): number {
  let k = j;
  if (zone && t.charCodeAt(k) === 37) {
    let z = k + 1;
    while (z < t.length && z - k < 16 && (isAsciiWordCode(t.charCodeAt(z)) || t.charCodeAt(z) === 46)) z++;
    if (z > k + 1) k = z;
  }
  if (t.charCodeAt(k) === 47 && isDigit(t.charCodeAt(k + 1))) {
    let p = k + 1;
    let v = 0;
    while (p < t.length && p - k <= 3 && isDigit(t.charCodeAt(p))) v = v * 10 + t.charCodeAt(p++) - 48;
    if (v <= maxPrefix && !isDigit(t.charCodeAt(p)) && !isAsciiWordCode(t.charCodeAt(p)) && t.charCodeAt(p) !== 47)
      k = p;
  }
  return k;
}
