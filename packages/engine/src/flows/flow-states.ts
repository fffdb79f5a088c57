import { createError } from '@keel/core';

/** The execution states of the spec. */
export const EXECUTION_STATES = [
  'queued',
  'running',
  'waiting_for_approval',
  'succeeded',
  'retryable_failure',
  'terminal_failure',
  'cancelled',
  'compensated',
] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

/**
 * Every legal move between execution states (the spec names the states, not the moves; this table is the
 * decision, documented in the flows README):
 * - queued → running (a worker claims it), cancelled.
 * - running → succeeded; waiting_for_approval (an approval node); queued (a delay or event wait, or a lease given
 *   up); retryable_failure; terminal_failure; cancelled.
 * - waiting_for_approval → running (approved or denied: the flow continues), cancelled.
 * - retryable_failure → queued (retry), terminal_failure (retries exhausted), cancelled, compensated.
 * - terminal_failure → compensated (its completed steps' compensations ran).
 * - cancelled → compensated (compensations ran after the cancel).
 * - succeeded and compensated are final.
 */
export const EXECUTION_TRANSITIONS: Readonly<Record<ExecutionState, readonly ExecutionState[]>> = Object.freeze({
  queued: Object.freeze(['running', 'cancelled'] as const),
  running: Object.freeze([
    'succeeded',
    'waiting_for_approval',
    'queued',
    'retryable_failure',
    'terminal_failure',
    'cancelled',
  ] as const),
  waiting_for_approval: Object.freeze(['running', 'cancelled'] as const),
  retryable_failure: Object.freeze(['queued', 'terminal_failure', 'cancelled', 'compensated'] as const),
  terminal_failure: Object.freeze(['compensated'] as const),
  cancelled: Object.freeze(['compensated'] as const),
  succeeded: Object.freeze([] as const),
  compensated: Object.freeze([] as const),
});

/** States an execution never leaves. */
export const FINAL_STATES: readonly ExecutionState[] = EXECUTION_STATES.filter(
  (state) => EXECUTION_TRANSITIONS[state].length === 0,
);

export const ExecutionErrors = {
  illegalTransition: createError('EXECUTION_ILLEGAL_TRANSITION', 'An execution cannot move from %s to %s', 409),
};

/** Whether `from → to` is a legal move (false for unknown states and for staying in place). */
export function canTransition(from: string, to: string): boolean {
  if (!Object.hasOwn(EXECUTION_TRANSITIONS, from)) return false;
  return (EXECUTION_TRANSITIONS[from as ExecutionState] as readonly string[]).includes(to);
}

/** Returns `to` when `from → to` is legal; throws 409 EXECUTION_ILLEGAL_TRANSITION otherwise. */
export function transition(from: ExecutionState, to: ExecutionState): ExecutionState {
  if (!canTransition(from, to)) throw ExecutionErrors.illegalTransition(from, to);
  return to;
}

/** Whether cancel applies: queued, running, waiting or retryable executions. */
export function isCancellable(state: ExecutionState): boolean {
  return canTransition(state, 'cancelled');
}
