import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({
    removeAdditional: true,
    useDefaults: true,
    allErrors: false,
    strict: false,
    ...options,
  });
  addFormats.default(ajv);
  return ajv;
}

/**
 * Two validators: path, query and header values arrive as text, so they are coerced to the declared type
 * (`?limit=20` is the number 20); JSON bodies are not coerced, so `"1"` is not accepted where a number is due.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<any> {
  const coercing = makeAjv({ coerceTypes: 'array' });
  const strict = makeAjv({ coerceTypes: false });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(schema as object);
  };
}
