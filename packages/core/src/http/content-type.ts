import type { FastifyInstance } from 'fastify';
import { CoreErrors } from '../errors.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType === 'application/json';
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Write requests must say `Content-Type: application/json`: routes that declare a body schema always, other
 * write routes whenever a body is sent. Anything else is a 415 before the body is read.
 */
export function requireJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', (request, _reply, done) => {
    if (!WRITE_METHODS.has(request.method)) return done();
    const declaresBody = request.routeOptions.schema?.body !== undefined;
    if ((declaresBody || hasBody(request.headers)) && !isJson(request.headers['content-type'])) {
      return done(CoreErrors.unsupportedMediaType());
    }
    done();
  });
}
