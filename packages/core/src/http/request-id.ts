import type { IncomingMessage } from 'node:http';
import type { ActiveSpan } from '../telemetry/telemetry.ts';
import { startServerSpan } from '../telemetry/telemetry.ts';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const serverSpans = new WeakMap<IncomingMessage, ActiveSpan>();

/**
 * Starts the request's server span (continuing the caller's W3C `traceparent` when valid) and returns the request
 * id: the trace id, so logs, error bodies and `x-request-id` correlate with the trace. A caller that sends its own
 * short, plain `x-request-id` and no `traceparent` keeps its id; anything else is replaced, so logs never carry
 * attacker-shaped text.
 */
export function requestIdFor(request: IncomingMessage): string {
  const traceparent = request.headers.traceparent;
  const span = startServerSpan(traceparent, request.method ?? 'HTTP');
  serverSpans.set(request, span);
  const incoming = request.headers['x-request-id'];
  if (traceparent === undefined && typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming)) return incoming;
  return span.traceId;
}

/** The server span `requestIdFor` started for a request. */
export function serverSpanOf(request: IncomingMessage): ActiveSpan | undefined {
  return serverSpans.get(request);
}
