import type dns from 'node:dns';
import { Agent, request } from 'undici';
import { checkOutboundUrl, createSafeLookup, type OutboundUrlPolicy } from './outbound-url.ts';

export interface SafeAgentOptions extends OutboundUrlPolicy {
  /** Deadline for the TCP + TLS handshake. */
  connectTimeoutMs?: number;
  /** Keep-alive connections per origin. */
  connections?: number;
  /** The resolver (tests pass a double); `dns.lookup` by default. */
  resolve?: typeof dns.lookup;
}

/**
 * An undici Agent whose connector resolves names itself and connects only to vetted public addresses
 * (see `createSafeLookup`). TLS certificates are verified as usual (self-signed ones fail).
 */
export function createSafeAgent(options: SafeAgentOptions): Agent {
  return new Agent({
    connect: { lookup: createSafeLookup(options, options.resolve) as never, timeout: options.connectTimeoutMs ?? 5000 },
    connections: options.connections ?? 64,
    keepAliveTimeout: 10_000,
    pipelining: 1,
  });
}

export interface SafePostResult {
  statusCode: number;
  /** The first bytes of the answer, for a delivery log; never more than 1 KiB. */
  bodyExcerpt: string;
}

/**
 * POSTs a body to a user-supplied URL: the URL is checked again (IP literals, scheme), the connection goes
 * only to vetted addresses, redirects are not followed (a 3xx is just a status), and the whole exchange has a
 * deadline. Network, DNS, TLS and URL-policy failures reject with an Error whose `code` says which.
 */
export async function safePost(
  agent: Agent,
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  options: OutboundUrlPolicy & { timeoutMs: number },
): Promise<SafePostResult> {
  const url = checkOutboundUrl(rawUrl, options);
  const response = await request(url, {
    method: 'POST',
    body,
    headers,
    dispatcher: agent,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  let excerpt = '';
  for await (const chunk of response.body) {
    if (excerpt.length < 1024) excerpt += Buffer.from(chunk as Uint8Array).toString('utf8');
  }
  return { statusCode: response.statusCode, bodyExcerpt: excerpt.slice(0, 1024) };
}
