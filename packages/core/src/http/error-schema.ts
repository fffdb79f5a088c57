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
