// URL: web and service addresses (scheme://…, www.…, and bare host names under common top-level domains). A URL
// is contact-level data (masked, never blocking on its own); the credentials inside one (user:password@, a token
// in its path or query) are reported by their own detectors, and a URL that holds another detection yields to it
// (see overlaps.ts), so the secret keeps its own type and span.
import { isAlnum, isAsciiWordCode } from './chars.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { scanWebhookUrl } from './secret-catalogue.ts';

/** Characters a URL may hold after its scheme (RFC 3986 unreserved, reserved and `%`), ASCII only. */
const URL_CHAR = new Uint8Array(128);
for (let c = 33; c < 127; c++) URL_CHAR[c] = 1;
for (const ch of '"\'<>`{}|\\^') URL_CHAR[ch.charCodeAt(0)] = 0;

/** Schemes reported as URLs (others, like `c://` in a path or `std::`, are not). */
const SCHEMES = new Set([
  'http',
  'https',
  'ftp',
  'ftps',
  'sftp',
  'ws',
  'wss',
  'ssh',
  'git',
  'svn',
  'smb',
  'rtsp',
  'ldap',
  'ldaps',
  'mongodb',
  'mongodb+srv',
  'postgres',
  'postgresql',
  'mysql',
  'redis',
  'rediss',
  'amqp',
  'amqps',
  's3',
  'gs',
]);

/** Top-level domains taken without a scheme (microsoft.com, example.co.il); others need `www.` or a scheme. */
const BARE_TLDS = new Set([
  'com',
  'org',
  'net',
  'edu',
  'gov',
  'mil',
  'int',
  'io',
  'co',
  'uk',
  'de',
  'fr',
  'es',
  'it',
  'nl',
  'be',
  'ch',
  'at',
  'se',
  'no',
  'dk',
  'fi',
  'pl',
  'pt',
  'ie',
  'il',
  'in',
  'jp',
  'cn',
  'kr',
  'br',
  'mx',
  'ar',
  'au',
  'nz',
  'ca',
  'us',
  'ru',
  'tr',
  'za',
  'eu',
  'info',
  'biz',
  'app',
  'dev',
  'ai',
]);

/** The longest of BARE_TLDS. */
const MAX_BARE_TLD = Math.max(...[...BARE_TLDS].map((tld) => tld.length));

const SECOND_LEVEL = new Set(['co', 'com', 'org', 'net', 'ac', 'gov', 'edu', 'ne', 'or', 'gob', 'nic']);

/**
 * End of the URL whose authority starts at `from`: URL characters, minus trailing sentence punctuation. The span
 * stops before the first path segment or query that holds a digit (an id, a version, a token): those are left to
 * their own detectors, and the host and leading path identify the address.
 */
function urlEnd(t: string, from: number): number {
  let j = from;
  let parens = 0;
  let inPath = false;
  let segment = from;
  while (j < t.length && j - from < 2048) {
    const c = t.charCodeAt(j);
    if (c >= 128 || URL_CHAR[c] === 0) break;
    if (c === 40) parens++;
    else if (c === 41 && --parens < 0) break;
    if (c === 47 || c === 63 || c === 35) {
      if (!inPath && c === 47) inPath = true;
      segment = j + 1;
      if (c !== 47) inPath = true;
    } else if (inPath && c >= 48 && c <= 57) {
      j = segment;
      break;
    }
    j++;
  }
  // A closing ) ] or punctuation after the URL ends a sentence or a bracket, not the URL.
  while (j > from) {
    const c = t.charCodeAt(j - 1);
    if (c === 46 || c === 44 || c === 59 || c === 58 || c === 33 || c === 63 || c === 93 || c === 42) j--;
    else break;
  }
  return j;
}

/** Tries `scheme://…` at the `:` at `colon`. Emits the URL and returns -1: the walk goes on inside it. */
export function scanSchemeUrl(st: ScanState, colon: number): number {
  const t = st.text;
  let s = colon;
  while (s > 0 && colon - s < 12) {
    const c = t.charCodeAt(s - 1);
    if (isAlnum(c) || c === 43 || c === 45 || c === 46) s--;
    else break;
  }
  if (s === colon || (s > 0 && isAsciiWordCode(t.charCodeAt(s - 1)))) return -1;
  if (!SCHEMES.has(t.slice(s, colon).toLowerCase())) return -1;
  const end = urlEnd(t, colon + 3);
  // A host with a dot (or localhost): https://x and http://microsoft are not addresses.
  const authority = t.slice(colon + 3, end);
  const hostEnd = authority.search(/[/?#]/);
  const host = hostEnd < 0 ? authority : authority.slice(0, hostEnd);
  if (host.length < 3 || (!host.includes('.') && !host.toLowerCase().startsWith('localhost') && !host.includes('@')))
    return -1;
  // A vendor's webhook address is a credential as a whole (see secret-catalogue.ts).
  if (hostEnd > 0 && scanWebhookUrl(st, s, colon + 3, colon + 3 + hostEnd) > 0) return -1;
  st.emit('URL', s, end, evidence({ valid: true, strength: 1 }));
  return -1;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

/**
 * Tries a scheme-less host name starting at the word [i, …): `www.` names, or two or more labels ending in a
 * common top-level domain (microsoft.com, example.co.il), optionally with a path. Returns the URL's end, or -1.
 */
export function scanBareHost(st: ScanState, i: number): number {
  const t = st.text;
  if (i > 0) {
    const p = t.charCodeAt(i - 1);
    // Part of a longer token: an e-mail (jane@example.com), a path (/a.com), a key (x.example.com=…), a URL.
    if (isAsciiWordCode(p) || p === 64 || p === 47 || p === 46 || p === 45 || p === 58 || p === 92) return -1;
  }
  let j = i;
  let labels = 0;
  let lastStart = i;
  for (;;) {
    const l0 = j;
    while (j < t.length && j - l0 < 63 && (isAlnum(t.charCodeAt(j)) || t.charCodeAt(j) === 45)) j++;
    if (j === l0) return -1;
    labels++;
    lastStart = l0;
    if (t.charCodeAt(j) === 46 && isAlnum(t.charCodeAt(j + 1))) j++;
    else break;
  }
  const www = t.startsWith('www.', i) || t.startsWith('WWW.', i);
  if (labels < (www ? 3 : 2)) return -1;
  // Every bare TLD starts with a letter and is two to MAX_BARE_TLD long: decimals, versions and addresses (954.15,
  // 10.0.0.1) and most dotted names (oscar.wittingbalistreri@…) end here.
  if (!www && (!isAsciiLetter(t.charCodeAt(lastStart)) || j - lastStart < 2 || j - lastStart > MAX_BARE_TLD)) return -1;
  const tld = t.slice(lastStart, j).toLowerCase();
  if (!www && !BARE_TLDS.has(tld)) return -1;
  const after = j < t.length ? t.charCodeAt(j) : 32;
  if (after === 64 || after === 95 || after === 61 || (after === 46 && isAlnum(t.charCodeAt(j + 1)))) return -1;
  // The label before the TLD names the site: letters, at least three (not a file name such as a.co or v1.io).
  // Under a country's second level (example.co.il, site.com.br) the name is the label before it.
  const parts = t.slice(i, lastStart - 1).split('.');
  let name = parts[parts.length - 1];
  if (parts.length >= 2 && tld.length === 2 && SECOND_LEVEL.has(name.toLowerCase())) name = parts[parts.length - 2];
  if (!www && (name.length < 3 || !/^[a-z][a-z0-9-]*$/i.test(name))) return -1;
  const end = after === 47 ? urlEnd(t, j) : j;
  st.emit('URL', i, end, evidence({ valid: www ? true : null, strength: 0.7 }));
  return end;
}
