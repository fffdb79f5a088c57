/**
 * Errors that mean "the database cannot be reached right now" rather than "this query is wrong": the server
 * ended the session (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now), a connection
 * exception (SQLSTATE class 08), too many connections (53300), or the socket itself failed (refused, reset,
 * timed out, terminated). A request that meets one is answered 503 and may be retried; the pool reconnects.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EAI_AGAIN',
]);
const MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /not queryable/,
  /^Connection ended unexpectedly/,
  /Cannot use a pool after calling end on the pool/,
];

/** True when an error (or its cause, or one of an AggregateError's errors) is a lost or refused database connection. */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string') {
    if (SERVER_CODES.has(e.code) || SOCKET_CODES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code)) return true;
  }
  if (typeof e.message === 'string' && MESSAGES.some((pattern) => pattern.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return e.cause !== undefined && isDatabaseUnavailable(e.cause, depth + 1);
}
