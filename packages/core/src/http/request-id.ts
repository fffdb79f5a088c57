import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Uses the caller's `x-request-id` when it is a short, plain token (so a trace continues across services);
 * anything else is replaced, so logs never carry attacker-shaped text.
 */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming)) return incoming;
  return randomUUID();
}
