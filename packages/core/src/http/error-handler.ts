import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/connection-errors.ts';
import { AppError, CoreErrors, type ErrorDetail } from '../errors.ts';
import { readableIssues, type SchemaIssue } from './validation.ts';

export interface ErrorBody {
  error: { code: string; message: string; traceId: string; details?: ErrorDetail[] };
}

/** Shapes an AppError as the REST error body; a 5xx says only "Internal Server Error". */
export function errorBody(error: AppError, traceId: string): ErrorBody {
  const exposed = error.statusCode < 500 || error.statusCode === 502 || error.statusCode === 503;
  return {
    error: {
      code: exposed ? error.code : 'INTERNAL',
      message: exposed ? error.message : 'Internal Server Error',
      traceId,
      ...(exposed && error.details ? { details: error.details } : {}),
    },
  };
}

/** DATABASE_UNAVAILABLE (503) with `Retry-After: 1`: the pool reconnects on the next query. */
export function databaseUnavailable(): AppError {
  return Object.assign(CoreErrors.databaseUnavailable(), { headers: { 'retry-after': '1' } });
}

/** Maps anything thrown inside a handler to an AppError: the one place where errors meet status codes. */
export function toAppError(error: unknown, bodyLimit: number): AppError {
  if (error instanceof AppError) return error;
  const e = error as FastifyError & { type?: string };
  if (e?.validation) {
    const issues = readableIssues(e.validation as SchemaIssue[], e.validationContext ?? 'body');
    const details = issues.map(({ path, message }) => ({ path, message }));
    const summary = issues.map((issue) => issue.text).join('; ');
    return new AppError('VALIDATION_FAILED', `Invalid request: ${summary}`, 400, { details });
  }
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return CoreErrors.payloadTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? CoreErrors.unsupportedMediaType()
        : CoreErrors.badRequest('Content-Length does not match the body');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return CoreErrors.badRequest('The request body is empty; send a JSON document');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return CoreErrors.invalidJson();
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return CoreErrors.badRequest('The request URL is malformed');
  }
  // A client's own aborted request (a 4xx with ECONNRESET) is not the database going away.
  if (typeof e?.statusCode !== 'number' && isDatabaseUnavailable(e)) return databaseUnavailable();
  if (e instanceof SyntaxError || e?.statusCode === 400) {
    // Fastify's JSON parser raises SyntaxError-like errors with status 400; never echo the parser's text.
    return CoreErrors.invalidJson();
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new AppError('BAD_REQUEST', 'The request could not be processed', e.statusCode);
  }
  return CoreErrors.internal();
}

/** Installs the error and not-found handlers that give every error the same body and the trace id. */
export function installErrorHandlers(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error, bodyLimit);
    if (appError.statusCode >= 500 && appError.code === 'INTERNAL') {
      request.log.error({ err: error }, 'unhandled error');
    }
    if (appError.headers) reply.headers(appError.headers);
    return reply.status(appError.statusCode).send(errorBody(appError, request.id));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const error = CoreErrors.routeNotFound(request.method, path.length > 200 ? `${path.slice(0, 200)}…` : path);
    return reply.status(404).send(errorBody(error, request.id));
  });
}
