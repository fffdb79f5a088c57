import type { FastifyInstance } from 'fastify';
import { CoreErrors } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Also take a JSON document sent as `text/plain` (what `navigator.sendBeacon(url, string)` sends). */
    textPlainJson?: boolean;
  }
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function mediaTypeOf(contentType: string | undefined): string | undefined {
  return contentType?.split(';', 1)[0]?.trim().toLowerCase();
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Write requests must say `Content-Type: application/json`: routes that declare a body schema always, other
 * write routes whenever a body is sent. Anything else is a 415 before the body is read. A route with
 * `config: { textPlainJson: true }` also takes JSON sent as `text/plain` (beacons), parsed by the same JSON parser.
 */
export function requireJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (request, body, done) => {
    if (request.routeOptions.config?.textPlainJson !== true) return done(CoreErrors.unsupportedMediaType(), undefined);
    parseJson(request, body as string, done);
  });
  app.addHook('onRequest', (request, _reply, done) => {
    if (!WRITE_METHODS.has(request.method)) return done();
    const declaresBody = request.routeOptions.schema?.body !== undefined;
    const mediaType = mediaTypeOf(request.headers['content-type']);
    const accepted =
      mediaType === 'application/json' || (mediaType === 'text/plain' && request.routeOptions.config?.textPlainJson);
    if ((declaresBody || hasBody(request.headers)) && !accepted) return done(CoreErrors.unsupportedMediaType());
    done();
  });
}
