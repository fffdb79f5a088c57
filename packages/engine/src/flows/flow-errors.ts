import { AppError, createError } from '@keel/core';

/** Why a flow config or a contract change was rejected (a precise, stable code per rule). */
export type FlowProblemCode =
  | 'FLOW_CONFIG_INVALID'
  | 'FLOW_CONFIG_TOO_LARGE'
  | 'FLOW_NODE_TYPE_UNKNOWN'
  | 'FLOW_NODE_INVALID'
  | 'FLOW_NODE_DUPLICATE'
  | 'FLOW_NODE_UNREACHABLE'
  | 'FLOW_REFERENCE_DANGLING'
  | 'FLOW_REFERENCE_INVALID'
  | 'FLOW_MEMBER_INVALID'
  | 'FLOW_NEXT_MISSING'
  | 'FLOW_CHOICE_DUPLICATE'
  | 'FLOW_CHOICE_NOT_WIRED'
  | 'FLOW_CHOICE_UNKNOWN'
  | 'FLOW_FALLBACK_UNKNOWN'
  | 'FLOW_ACTION_NOT_NORMALIZED'
  | 'FLOW_ACTION_NOT_ALLOWED'
  | 'FLOW_CYCLE_UNBOUNDED'
  | 'FLOW_LOOP_BODY_OPEN'
  | 'FLOW_EXPRESSION_INVALID'
  | 'FLOW_SUBFLOW_UNRESOLVED'
  | 'FLOW_SUBFLOW_CYCLE'
  | 'FLOW_SUBFLOW_TOO_DEEP'
  | 'FLOW_CONTRACT_INVALID'
  | 'FLOW_CONTRACT_INCOMPATIBLE';

/** One rejected rule: its code, the node it concerns (null for the config as a whole), where, and why. */
export interface FlowProblem {
  code: FlowProblemCode;
  node_id: string | null;
  /** JSON pointer into the config. */
  path: string;
  message: string;
}

export const FlowErrors = {
  invalid: createError('FLOW_INVALID', 'The flow config is invalid: %s', 400),
  incompatible: createError('FLOW_INCOMPATIBLE', 'The flow contract changed incompatibly: %s', 409),
  archived: createError('FLOW_ARCHIVED', 'Flow %s is archived: it is read-only', 409),
  notTested: createError(
    'FLOW_NOT_TESTED',
    'Flow version %s has not passed a test over every fixture of the flow: add fixtures and POST …/test first',
    409,
  ),
  notPublished: createError('FLOW_NOT_PUBLISHED', 'Flow version %s is not published', 409),
  notActive: createError(
    'FLOW_NOT_ACTIVE',
    'Flow %s is not active: rollback reactivates a prior version of an active flow',
    409,
  ),
  noPriorVersion: createError('FLOW_NO_PRIOR_VERSION', 'No prior version to reactivate: %s', 409),
  noFixtures: createError('FLOW_NO_FIXTURES', 'Flow %s has no fixtures to replay: POST …/fixtures first', 409),
  active: createError(
    'FLOW_ACTIVE',
    'Flow %s is active: deactivate (PUT with is_active false) or archive it first',
    409,
  ),
};

/** A config that does not compile (400 FLOW_INVALID), or an incompatible contract change (409 FLOW_INCOMPATIBLE). */
export class FlowRejected extends AppError {
  override name = 'FlowRejected';
  readonly problems: readonly FlowProblem[];
  constructor(problems: FlowProblem[], incompatible = false) {
    const factory = incompatible ? FlowErrors.incompatible : FlowErrors.invalid;
    const first = problems[0]!;
    const summary = `${first.code}${first.node_id ? ` (node ${first.node_id})` : ''}: ${first.message}${
      problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''
    }`;
    super(factory.code, factory.template.replace('%s', summary), factory.statusCode, {
      details: problems.map((problem) => ({
        path: problem.path,
        message: `${problem.code}${problem.node_id ? ` (node ${problem.node_id})` : ''}: ${problem.message}`,
      })),
    });
    this.problems = problems;
  }
}
