import { AppError, readableIssues, type SchemaIssue } from '@keel/core';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from 'typebox';

// The same settings as the REST body validator: no coercion, unknown fields dropped, defaults applied.
const ajv = new Ajv({
  removeAdditional: true,
  useDefaults: true,
  allErrors: false,
  strict: false,
  coerceTypes: false,
  verbose: true,
});
addFormats.default(ajv);
const compiled = new WeakMap<TSchema, ValidateFunction>();

/** Validates a nested part of a request (an event's product, cart …) against its schema; 400 with the path otherwise. */
export function validatePart<S extends TSchema>(schema: S, value: unknown, path: string): Static<S> {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema as object);
    compiled.set(schema, validate);
  }
  if (value === undefined || value === null || typeof value !== 'object') {
    throw new AppError('VALIDATION_FAILED', `Invalid request: ${path} must be an object`, 400, {
      details: [{ path, message: 'must be an object' }],
    });
  }
  if (!validate(value)) {
    // One readable message per field, from core (the part is the event/body path, e.g. `body/product`).
    const issues = readableIssues((validate.errors ?? []) as SchemaIssue[], path, value);
    const details = issues.map((issue) => ({ path: issue.path, message: issue.message }));
    throw new AppError('VALIDATION_FAILED', `Invalid request: ${issues.map((i) => i.text).join('; ')}`, 400, {
      details,
    });
  }
  return value as Static<S>;
}
