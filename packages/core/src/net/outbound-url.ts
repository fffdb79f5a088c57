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

/** True when an IP address is a public unicast address (no private, loopback, link-local, CGNAT, multicast, reserved or v4-mapped range). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  // ipaddr.js names every special-purpose block; only plain global unicast is public.
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
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
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
