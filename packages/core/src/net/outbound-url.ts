import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { createError } from '../errors.ts';

/** Why an outbound URL was refused; the message never echoes resolved addresses of internal hosts. */
export const OutboundUrlErrors = {
  rejected: createError('OUTBOUND_URL_REJECTED', 'The URL is not allowed: %s', 400),
};

export interface OutboundUrlPolicy {
  /** The development switch KEEL_ALLOW_PRIVATE_URLS: loopback, private targets and plain http are allowed. */
  allowPrivate: boolean;
}

/** Host names that only ever mean "this machine" or "this network". */
const INTERNAL_SUFFIXES = [
  '.localhost',
  '.local',
  '.localdomain',
  '.internal',
  '.intranet',
  '.lan',
  '.home.arpa',
  '.corp',
];

/**
 * IPv6 blocks that carry an IPv4 address (or are otherwise special) and that ipaddr.js does not name in every
 * spelling: `::/96` (IPv4-compatible, deprecated: `[::127.0.0.1]` is `::7f00:1`), `::ffff:0:0/96` (v4-mapped)
 * and `64:ff9b:1::/48` (local-use NAT64). The well-known NAT64 prefix 64:ff9b::/96, 6to4 2002::/16, Teredo
 * 2001::/32 and SIIT ::ffff:0:0:0/96 are named by ipaddr.js and refused as whole blocks too: the IPv4 address
 * they carry (or hide, XOR-ed, in Teredo's case) would be reached through a gateway we cannot vet.
 */
function isEmbeddingIpv6(parts: readonly number[]): boolean {
  const zeros = (count: number) => parts.slice(0, count).every((part) => part === 0);
  if (zeros(6)) return true; // ::/96
  if (zeros(5) && parts[5] === 0xffff) return true; // ::ffff:0:0/96
  return parts[0] === 0x64 && parts[1] === 0xff9b && parts[2] === 1; // 64:ff9b:1::/48
}

/**
 * True when an IP address is a public unicast address: no private, loopback, link-local, CGNAT, multicast,
 * reserved or documentation range, and no IPv6 address that embeds an IPv4 one (v4-compatible `::/96`,
 * v4-mapped, NAT64, 6to4, Teredo), whatever IPv4 address it embeds.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && isEmbeddingIpv6((parsed as ipaddr.IPv6).parts)) return false;
  // ipaddr.js names every other special-purpose block; only plain global unicast is public.
  return parsed.range() === 'unicast';
}

function stripBrackets(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Checks everything about an outbound URL that can be checked without the network: absolute, `https:`
 * (plain `http:` only with the development switch), no credentials, no IP literal outside public unicast,
 * no `localhost`, single-label or internal-suffix names. Throws OUTBOUND_URL_REJECTED (400); returns the
 * parsed URL. IP-literal hosts are decided here because a resolver hook never sees them.
 */
export function checkOutboundUrl(raw: string, policy: OutboundUrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw OutboundUrlErrors.rejected('it is not an absolute URL');
  }
  const allowedProtocols = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!allowedProtocols.includes(url.protocol)) throw OutboundUrlErrors.rejected('only https:// URLs are accepted');
  if (url.username || url.password) throw OutboundUrlErrors.rejected('URLs with credentials are not accepted');
  if (policy.allowPrivate) return url;
  const host = stripBrackets(url.hostname).toLowerCase();
  if (net.isIP(host)) {
    if (!isPublicAddress(host))
      throw OutboundUrlErrors.rejected('the address is private, loopback, link-local or reserved');
    return url;
  }
  // Fully qualified spellings (`localhost.`, `printer.local..`) name the same hosts.
  const name = host.replace(/\.+$/, '');
  if (name === 'localhost' || INTERNAL_SUFFIXES.some((suffix) => name.endsWith(suffix))) {
    throw OutboundUrlErrors.rejected('the host is a local or internal name');
  }
  if (!name.includes('.')) throw OutboundUrlErrors.rejected('the host must be a public, fully qualified domain name');
  return url;
}

export type LookupFunction = (
  hostname: string,
  options: dns.LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect` that resolves the name itself and hands back only vetted public
 * addresses: when any address of the name is not public the connection is refused, so there is no window
 * between checking a name and connecting to it (DNS rebinding).
 */
export function createSafeLookup(policy: OutboundUrlPolicy, resolve: typeof dns.lookup = dns.lookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as dns.LookupAddress[];
      if (list.length === 0)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      if (!policy.allowPrivate && list.some((entry) => !isPublicAddress(entry.address))) {
        const refused = Object.assign(new Error('the host resolves to a private, loopback or reserved address'), {
          code: 'EADDRNOTPUBLIC',
        });
        return callback(refused, '', 0);
      }
      if (options.all) return callback(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/** Resolves a URL's host and checks every address it resolves to (the save-time check); throws OUTBOUND_URL_REJECTED. */
export async function checkOutboundUrlResolves(
  raw: string,
  policy: OutboundUrlPolicy,
  resolve: typeof dns.lookup = dns.lookup,
): Promise<URL> {
  const url = checkOutboundUrl(raw, policy);
  const host = stripBrackets(url.hostname);
  if (policy.allowPrivate || net.isIP(host)) return url;
  const lookup = createSafeLookup(policy, resolve);
  await new Promise<void>((ok, fail) => {
    lookup(host, { all: true }, (error) => {
      if (!error) return ok();
      const code = (error as NodeJS.ErrnoException).code;
      fail(
        OutboundUrlErrors.rejected(
          code === 'EADDRNOTPUBLIC'
            ? 'the host resolves to a private, loopback or reserved address'
            : 'the host name does not resolve',
        ),
      );
    });
  });
  return url;
}
