import { createError } from '@keel/core';

/** The agent runtime's error codes; services throw these, the HTTP error handler maps them in one place. */
export const RuntimeErrors = {
  invalidCredentials: createError(
    'AUTH_INVALID_CREDENTIALS',
    'The access key and secret key do not match an active credential',
    401,
  ),
  tokenInvalid: createError('AUTH_TOKEN_INVALID', 'A valid runtime bearer token is required', 401),
  tokenExpired: createError('AUTH_TOKEN_EXPIRED', 'The bearer token expired: exchange the key pair again', 401),
  registrationDisabled: createError('AUTH_REGISTRATION_DISABLED', 'Registration is not enabled on this engine', 403),
  usernameTaken: createError('AUTH_USERNAME_TAKEN', 'The username %s is taken', 409),
  forbidden: createError('RUNTIME_FORBIDDEN', 'The role %s does not allow %s', 403),
  noRealm: createError(
    'RUNTIME_NO_REALM',
    'The token carries no realm: create a realm or ask to be added to one, then create a key pair for it',
    403,
  ),
  realmMismatch: createError('RUNTIME_REALM_MISMATCH', "realm_id does not match the token's realm", 403),
  invalid: createError('RUNTIME_INVALID_REQUEST', '%s', 400),
  notFound: createError('RUNTIME_NOT_FOUND', '%s %s not found', 404),
  nameTaken: createError('RUNTIME_NAME_TAKEN', '%s', 409),
  inUse: createError('RUNTIME_IN_USE', '%s', 409),
  conflict: createError('RUNTIME_CONFLICT', '%s', 409),
  promptImmutable: createError(
    'RUNTIME_PROMPT_VERSION_IMMUTABLE',
    'Prompt version %s has been active: its content and variables are immutable; create a new version with the same key',
    409,
  ),
  sessionNotActive: createError('RUNTIME_SESSION_NOT_ACTIVE', 'Session %s is %s', 409),
  resumeTokenInvalid: createError(
    'RUNTIME_RESUME_TOKEN_INVALID',
    'This session needs its current resume token (X-Resume-Token header or resume_token field)',
    403,
  ),
  stateTypeMismatch: createError(
    'RUNTIME_STATE_TYPE_MISMATCH',
    'State key %s holds a %s; forget it before storing a %s',
    409,
  ),
  limit: createError('RUNTIME_LIMIT_REACHED', '%s', 409),
  sensitiveData: createError(
    'RUNTIME_SENSITIVE_DATA_REJECTED',
    'Chat never accepts card numbers, CVV/CVC codes, payment authentication secrets, raw tokens, passwords or full addresses (found %s at %s)',
    400,
  ),
  unsupportedVersion: createError(
    'RUNTIME_UNSUPPORTED_VERSION',
    'version %s is not supported: send 2026-08-22 or omit it for the current contract',
    400,
  ),
  modeUnsupported: createError(
    'RUNTIME_MODE_UNSUPPORTED',
    'mode async queues a flow as a durable execution, and no flow was selected: send flow_id, continue a session pinned to a flow, or use mode sync',
    400,
  ),
  agentNotResolved: createError(
    'RUNTIME_AGENT_NOT_RESOLVED',
    'No agent profile rule matches the request and the realm has no default agent: send agent_id',
    409,
  ),
  agentNotReady: createError('RUNTIME_AGENT_NOT_READY', 'Agent %s cannot run: %s', 409),
  concurrency: createError('RUNTIME_CONCURRENCY_LIMIT', 'Agent %s already runs %d executions (max_concurrency)', 429),
  providerFailed: createError('RUNTIME_PROVIDER_FAILED', 'The model provider failed: %s', 502),
  latencyExceeded: createError(
    'RUNTIME_LATENCY_BUDGET_EXCEEDED',
    'The execution did not finish within its latency budget (%s)',
    503,
  ),
  lastOwner: createError('RUNTIME_LAST_OWNER', 'A realm keeps at least one owner', 409),
} as const;
