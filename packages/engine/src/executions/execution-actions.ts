import { createHash } from 'node:crypto';

/**
 * The id of an approval in URLs: `apr_` + 24 hex characters of SHA-256(execution id, wait id). The executor's wait
 * id is a step key (`/node#1`), which does not fit in a path segment; this one does, and stays the same for the
 * wait across restarts.
 */
export function approvalId(executionId: string, waitId: string): string {
  return `apr_${createHash('sha256').update(executionId).update('\n').update(waitId).digest('hex').slice(0, 24)}`;
}
