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
  clientAction,
  createFlowExecutor,
  type DecideCall,
  type DecideResult,
  type FlowError,
  type FlowPort,
  FlowPortError,
  type FlowRunOutcome,
  type FlowRunRequest,
  type FlowStepRecord,
  type FlowUsage,
  type FlowWait,
  type GenerateCall,
  MAX_STEP_OUTCOME_CHARS,
  MAX_STEPS_PER_RUN,
  outcomeState,
  type PortCallBase,
  type PortResult,
  type ResourceCall,
  type ResumeSignal,
  resolveDecision,
  type SpecialistCall,
  stepIdempotencyKey,
  type ToolCall,
  waitAction,
} from './flow-executor.ts';
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
export {
  canaryBucket,
  DEFAULT_MINIMUM_CONFIDENCE,
  DEFAULT_POLICY,
  inCanary,
  type RouteDecision,
  type RoutingCandidate,
  type RoutingManifest,
  type RoutingPolicy,
  routeMessage,
  scoreCandidate,
  words,
} from './flow-router.ts';
export * from './flow-schemas.ts';
export {
  canTransition,
  EXECUTION_STATES,
  EXECUTION_TRANSITIONS,
  ExecutionErrors,
  type ExecutionState,
  FINAL_STATES,
  isCancellable,
  transition,
} from './flow-states.ts';
export { FLOW_TOOL_CONTROLS, FLOW_TOOL_NAME_MAX, flowToolName, flowToolSchemas } from './flow-tools.ts';
