import { format } from 'node:util';

export interface ErrorDetail {
  path?: string;
  message: string;
}

/**
 * The one error type services throw. It carries a stable code and the HTTP status it maps to; transports
 * (the HTTP error handler, the JSON-RPC adapter) turn it into their own shape in exactly one place.
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: string;
  readonly statusCode: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: string,
    message: string,
    statusCode: number,
    extra: { details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: extra.cause });
    this.code = code;
    this.statusCode = statusCode;
    this.details = extra.details;
    this.headers = extra.headers;
  }
}

export interface ErrorFactory {
  (...args: unknown[]): AppError;
  readonly code: string;
  readonly statusCode: number;
  readonly template: string;
}

const registry = new Map<string, ErrorFactory>();

/**
 * Registers an error code once, with its status and a printf-style message template, and returns a factory.
 * Registering the same code twice is a programming error.
 */
export function createError(code: string, template: string, statusCode: number): ErrorFactory {
  if (registry.has(code)) throw new Error(`error code ${code} is registered twice`);
  if (!/^[A-Z][A-Z0-9_]+$/.test(code)) throw new Error(`error code ${code} is not UPPER_SNAKE_CASE`);
  const factory = ((...args: unknown[]) =>
    new AppError(code, args.length > 0 ? format(template, ...args) : template, statusCode)) as ErrorFactory;
  Object.defineProperties(factory, {
    code: { value: code },
    statusCode: { value: statusCode },
    template: { value: template },
  });
  registry.set(code, factory);
  return factory;
}

/** Every registered code, for documentation and for the test that pins the registry. */
export function registeredErrors(): ReadonlyMap<string, ErrorFactory> {
  return registry;
}

export const CoreErrors = {
  badRequest: createError('BAD_REQUEST', '%s', 400),
  invalidJson: createError('INVALID_JSON', 'The request body is not valid JSON', 400),
  validation: createError('VALIDATION_FAILED', '%s', 400),
  unauthorized: createError('UNAUTHORIZED', 'Authentication is required', 401),
  forbidden: createError('FORBIDDEN', 'The credential lacks the permission %s', 403),
  notFound: createError('NOT_FOUND', '%s', 404),
  routeNotFound: createError('ROUTE_NOT_FOUND', 'No route %s %s', 404),
  methodNotAllowed: createError('METHOD_NOT_ALLOWED', 'Method %s is not allowed on %s', 405),
  conflict: createError('CONFLICT', '%s', 409),
  payloadTooLarge: createError('PAYLOAD_TOO_LARGE', 'The request body exceeds the limit of %d bytes', 413),
  unsupportedMediaType: createError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json', 415),
  unprocessable: createError('UNPROCESSABLE', '%s', 422),
  rateLimited: createError('RATE_LIMITED', 'Rate limit exceeded: retry in %d seconds', 429),
  internal: createError('INTERNAL', 'Internal Server Error', 500),
  badGateway: createError('BAD_GATEWAY', '%s', 502),
  unavailable: createError('UNAVAILABLE', '%s', 503),
  databaseUnavailable: createError(
    'DATABASE_UNAVAILABLE',
    'The database cannot be reached at the moment; retry in a few seconds',
    503,
  ),
  timeout: createError('TIMEOUT', 'The request took longer than %d ms', 503),
} as const;
