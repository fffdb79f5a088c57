import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError, CoreErrors, createError, registeredErrors } from '../src/index.ts';

test('the core error registry is pinned: codes and statuses', () => {
  const core = Object.fromEntries(Object.values(CoreErrors).map((f) => [f.code, f.statusCode]));
  assert.deepEqual(core, {
    BAD_REQUEST: 400,
    INVALID_JSON: 400,
    VALIDATION_FAILED: 400,
    UNAUTHORIZED: 401,
    FORBIDDEN: 403,
    NOT_FOUND: 404,
    ROUTE_NOT_FOUND: 404,
    METHOD_NOT_ALLOWED: 405,
    CONFLICT: 409,
    PAYLOAD_TOO_LARGE: 413,
    UNSUPPORTED_MEDIA_TYPE: 415,
    UNPROCESSABLE: 422,
    RATE_LIMITED: 429,
    INTERNAL: 500,
    BAD_GATEWAY: 502,
    UNAVAILABLE: 503,
    DATABASE_UNAVAILABLE: 503,
    TIMEOUT: 503,
  });
  for (const [code, factory] of registeredErrors()) assert.equal(factory.code, code);
});

test('a factory formats its template and carries code and status', () => {
  const error = CoreErrors.forbidden('detect:read');
  assert.ok(error instanceof AppError);
  assert.equal(error.code, 'FORBIDDEN');
  assert.equal(error.statusCode, 403);
  assert.equal(error.message, 'The credential lacks the permission detect:read');
});

test('registering a code twice is refused', () => {
  assert.throws(() => createError('BAD_REQUEST', 'again', 400), /registered twice/);
  assert.throws(() => createError('not-upper', 'x', 400), /UPPER_SNAKE_CASE/);
});
