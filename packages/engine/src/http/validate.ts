import { AppError } from '@keel/core';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from 'typebox';

// The same settings as the REST body validator: no coercion, unknown fields dropped, defaults applied.
const ajv = new Ajv({ removeAdditional: true, useDefaults: true, allErrors: false, strict: false, coerceTypes: false });
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
    const details = (validate.errors ?? []).slice(0, 20).map((e) => {
      const missing = (e.params as { missingProperty?: string }).missingProperty;
      return { path: `${path}${e.instancePath}${missing ? `/${missing}` : ''}`, message: e.message ?? 'is invalid' };
    });
    throw new AppError(
      'VALIDATION_FAILED',
      `Invalid request: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}`,
      400,
      { details },
    );
  }
  return value as Static<S>;
}
