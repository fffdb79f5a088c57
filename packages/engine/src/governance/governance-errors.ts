import { createError } from '@keel/core';

/** Error codes of the governance area (policies, allowlists, quotas, evaluations, records). */
export const GovernanceErrors = {
  quotaExceeded: createError(
    'GOVERNANCE_QUOTA_EXCEEDED',
    'The realm quota of %s per %d s is used up (%s of %s): retry in %d seconds',
    429,
  ),
  policyDenied: createError('GOVERNANCE_POLICY_DENIED', '%s is not allowed by the realm policy (version %d)', 403),
  policyState: createError('GOVERNANCE_POLICY_STATE', 'Policy version %s is %s', 409),
  ownRequest: createError(
    'GOVERNANCE_MAKER_CANNOT_DECIDE',
    'Allowlist request %s was made by the caller: another member (admin or owner) must decide it',
    403,
  ),
  alreadyDecided: createError(
    'GOVERNANCE_ALREADY_DECIDED',
    'Allowlist request %s is already %s: decisions are final',
    409,
  ),
  rawPii: createError(
    'GOVERNANCE_RAW_PII',
    'Evaluation data must be synthetic or redacted: personal data found (%s at %s)',
    400,
  ),
} as const;
