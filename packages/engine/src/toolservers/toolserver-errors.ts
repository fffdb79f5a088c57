import { createError } from '@keel/core';

/** Error codes of the tool-server registry and tool execution. */
export const ToolErrors = {
  credentialTestFailed: createError(
    'TOOL_SERVER_CREDENTIAL_TEST_FAILED',
    'The credential did not pass the live initialize check (%s: %s); nothing was activated',
    409,
  ),
  serverDisabled: createError('TOOL_SERVER_DISABLED', 'Tool server %s is disabled', 409),
  upstream: createError('TOOL_SERVER_FAILED', 'The tool server failed (%s): %s', 502),
  contractFailing: createError(
    'TOOL_CONTRACT_FAILING',
    'Tool %s cannot be approved: its contract does not pass (see contract.problems)',
    409,
  ),
  resultTooLarge: createError('TOOL_RESULT_TOO_LARGE', 'The tool server answered with more than 1 MiB', 502),
  toolUnavailable: createError('TOOL_NOT_AVAILABLE', '%s', 404),
  notEnabled: createError('TOOL_NOT_ENABLED', '%s', 409),
  highImpact: createError(
    'TOOL_HIGH_IMPACT_DIRECT_CALL',
    'Tool %s is %s: it runs only inside a flow with an approval step, not as a direct call',
    403,
  ),
  invalidArguments: createError('TOOL_ARGUMENTS_INVALID', 'Invalid arguments: %s', 400),
  routeFailed: createError('TOOL_ROUTE_FAILED', 'No route: %s', 409),
  callFailed: createError('TOOL_CALL_FAILED', 'The tool call failed (%s): %s', 502),
} as const;
