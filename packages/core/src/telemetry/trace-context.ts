import { randomBytes } from 'node:crypto';

/** The W3C trace context of one span: what `traceparent` carries between services. */
export interface TraceContext {
  /** 32 lower-case hex digits, never all zero. */
  traceId: string;
  /** 16 lower-case hex digits, never all zero. */
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * Reads a W3C `traceparent` header (version 00, and later versions by their first four fields as the
 * recommendation asks); anything malformed, the invalid version ff or all-zero ids yield `undefined`.
 */
export function parseTraceparent(header: string | string[] | undefined): TraceContext | undefined {
  if (typeof header !== 'string' || header.length > 512) return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** The `traceparent` header value (version 00) for a span. */
export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
}

// Ids are cut from a pool of random bytes drawn 4 KiB at a time: one `randomBytes` call per span cost more than
// the rest of starting it. Each byte is used once.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}

/** A random 128-bit trace id as 32 hex digits. */
export function newTraceId(): string {
  return randomHex(16);
}

/** A random 64-bit span id as 16 hex digits. */
export function newSpanId(): string {
  return randomHex(8);
}

/** Whether a string is a W3C trace id (the form every Keel request id takes unless the caller chose its own). */
export function isTraceId(value: string): boolean {
  return /^[0-9a-f]{32}$/.test(value) && value !== ZERO_TRACE;
}
