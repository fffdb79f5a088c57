import { sha256Hex } from '../auth/secrets.ts';

/**
 * How a client-chosen identifier (a request id in a body or a header) appears in logs: `sha256:` and the first
 * 16 hex digits of its SHA-256. A known id can still be found (hash it the same way); nothing the client wrote
 * — which may be anything, a secret included — is repeated.
 */
export function idForLog(value: string): string {
  return `sha256:${sha256Hex(value).slice(0, 16)}`;
}
