import { Type } from 'typebox';

/** Fresh schema objects per call: a schema registered on one app is never shared with another. */
const errorBodyProperties = () => ({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    traceId: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.Optional(Type.String()), message: Type.String() }))),
  }),
});

/**
 * The one REST error body of every service: `{"error":{"code","message","traceId","details"?}}` (the shape core's
 * error handler writes). `options` carries a service's `$id`, title or description for its OpenAPI document.
 */
export function errorBodySchema(options: { $id?: string; title?: string; description?: string } = {}) {
  return Type.Object(errorBodyProperties(), options);
}

/** The error responses every authenticated route declares (400, 401, 403, 413, 415, 429, 500), each with `schema`. */
export function commonErrorResponses<S>(schema: S) {
  return { 400: schema, 401: schema, 403: schema, 413: schema, 415: schema, 429: schema, 500: schema };
}
