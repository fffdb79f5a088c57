// The flow engine's pure core: config schema, compiler, expressions and executor (no I/O; see README.md).
export {
  ACTION_TYPES,
  type ActionType,
  type ClientCapabilities,
  downgradeForClient,
  type NormalizedAction,
  sanitizeHandoff,
} from '../runtime/actions.ts';
export {
  type CompileOptions,
  compareContracts,
  compileFlow,
  type Edge,
  type EdgeKind,
  edgesOf,
  type FlowPlan,
} from './flow-compiler.ts';
export { FlowErrors, type FlowProblem, type FlowProblemCode, FlowRejected } from './flow-errors.ts';
export {
  type EvaluateOptions,
  EXPRESSION_LIMITS,
  EXPRESSION_OPERATORS,
  ExpressionError,
  type ExpressionErrorCode,
  evaluateExpression,
  isSafeKey,
  jsonSize,
  prepareExpression,
  truthy,
  validateExpression,
} from './flow-expressions.ts';
export * from './flow-schemas.ts';
