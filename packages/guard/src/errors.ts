import { createError } from '@keel/core';

/** Guard's error codes; services throw these, the HTTP layer maps them (one registry, pinned by a test). */
export const GuardErrors = {
  invalidId: createError('GUARD_INVALID_ID', 'The id must be a positive integer (got %s)', 400),
  invalidRegex: createError('GUARD_INVALID_REGEX', 'Regex of %s is not accepted: %s', 400),
  invalidThresholds: createError(
    'GUARD_INVALID_THRESHOLDS',
    'AllowThreshold must not be greater than BlockThreshold',
    400,
  ),
  patternNotFound: createError('GUARD_PATTERN_NOT_FOUND', 'Pattern %d not found', 404),
  patternExists: createError('GUARD_PATTERN_EXISTS', 'A pattern named %s already exists', 409),
  listItemNotFound: createError('GUARD_LIST_ITEM_NOT_FOUND', '%s item %d not found', 404),
  listItemExists: createError('GUARD_LIST_ITEM_EXISTS', 'The %s already holds this value', 409),
  validatorNotFound: createError('GUARD_VALIDATOR_NOT_FOUND', 'Validator %d not found', 404),
  validatorExists: createError('GUARD_VALIDATOR_EXISTS', 'A validator named %s already exists', 409),
  invalidValidator: createError('GUARD_INVALID_VALIDATOR', 'Validator %s is invalid: %s', 400),
  unknownGuardrail: createError('GUARD_UNKNOWN_GUARDRAIL', 'Unknown guardrail: %s', 400),
  unknownFormat: createError('GUARD_UNKNOWN_FORMAT', 'Unknown expected_format: %s', 400),
  detectTimeout: createError('GUARD_DETECT_TIMEOUT', 'Detection did not finish within %d ms', 503),
  userDetectionFailed: createError(
    'GUARD_USER_DETECTION_FAILED',
    'A user pattern or validator could not be run (its worker stopped); try again',
    503,
  ),
  databaseFailure: createError('GUARD_DATABASE_FAILURE', 'Database failure', 500),
} as const;
