import { type Static, type TSchema, Type } from 'typebox';
import { ACTION_TYPES } from '../runtime/actions.ts';
import { OneOf } from '../runtime/http-schemas.ts';

/**
 * The schema of a flow `config` (spec: Flow request fields and `config`, node types, `ai_decision`, output nodes).
 *
 * The graph: `nodes` is an array of `{id, type, ...}`; edges are the node's own pointers to other node ids —
 * `next` for a node with one successor, `on_true`/`on_false` on a condition, `branches` (choice key → node id) on an
 * `ai_decision`, `body` on a loop (the body's last node points back to the loop), `on_deny`, `on_timeout` and
 * `on_error` for the other outcomes, `compensation` from a tool to its compensation node, and member lists on
 * `parallel` (branch nodes) and `supervisor` (specialist nodes). Execution starts at `start` (default: the first
 * node) and ends at an `output` node, the only node without a successor.
 */

/** Bounds of a flow config. */
export const FLOW_LIMITS = {
  maxNodes: 200,
  maxConfigChars: 262_144,
  idMaxLength: 64,
  nameMaxLength: 200,
  instructionsMaxLength: 8_000,
  descriptionMaxLength: 1_000,
  minChoices: 2,
  maxChoices: 20,
  maxParallelBranches: 16,
  maxSupervisorSpecialists: 16,
  maxSupervisorRounds: 20,
  maxLoopIterations: 1_000,
  maxDelayMs: 30 * 24 * 3_600_000,
  maxContractFields: 64,
  maxListItems: 50,
  /** Subflows nested in subflows, counted from the flow itself. */
  maxSubflowDepth: 5,
  maxToolCalls: 50,
} as const;

export const NODE_TYPES = [
  'input',
  'ai',
  'ai_decision',
  'tool',
  'resource',
  'condition',
  'transform',
  'parallel',
  'loop',
  'approval',
  'delay',
  'event_wait',
  'subflow',
  'supervisor',
  'specialist',
  'compensation',
  'output',
] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const ORCHESTRATION_MODES = ['deterministic', 'adaptive', 'hybrid'] as const;
export const RISK_TIERS = ['low', 'medium', 'high', 'critical'] as const;
export const UNAVAILABLE_RESULT_MODES = ['offer_first', 'show_immediately', 'disabled'] as const;
export const CONTRACT_FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;

/** A node id, and every reference to one. */
export const NodeId = Type.String({
  pattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$',
  description: 'Node id: a letter, then letters, digits, "_" or "-" (at most 64)',
});

/** A key of the execution state a node writes its result to (`vars.<assign>`). */
const StateKey = Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' });

/** A JSON expression of flow-expressions.ts (data, not code); checked when the flow compiles. */
const Expression = Type.Unknown({ description: 'A JSON expression (see the flows README)' });

const Text = (maxLength: number, options: Record<string, unknown> = {}) => Type.String({ maxLength, ...options });
const Name = Type.String({ minLength: 1, maxLength: FLOW_LIMITS.nameMaxLength });
const Instructions = Text(FLOW_LIMITS.instructionsMaxLength);
const StringList = Type.Array(Text(FLOW_LIMITS.descriptionMaxLength), { maxItems: FLOW_LIMITS.maxListItems });
const Next = NodeId;
const node = <const T extends NodeType, P extends Record<string, TSchema>>(
  type: T,
  properties: P,
  description: string,
) =>
  Type.Object(
    { id: NodeId, type: Type.Literal(type), label: Type.Optional(Name), ...properties },
    { additionalProperties: false, description },
  );

export const InputNode = node(
  'input',
  { input: Type.Optional(Expression), assign: Type.Optional(StateKey), next: Next },
  'Takes the execution input (optionally reshaped by `input`) into `vars.<assign>` (default `vars.input`)',
);

export const AiNode = node(
  'ai',
  {
    instructions: Instructions,
    input: Type.Optional(Expression),
    assign: Type.Optional(StateKey),
    on_error: Type.Optional(NodeId),
    next: Next,
  },
  "Asks the agent's model; its text answer goes to `vars.<assign>`",
);

export const Choice = Type.Object(
  {
    key: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$' }),
    description: Type.String({ minLength: 1, maxLength: FLOW_LIMITS.descriptionMaxLength }),
  },
  { additionalProperties: false },
);

export const AiDecisionNode = node(
  'ai_decision',
  {
    instructions: Instructions,
    input: Type.Optional(Expression),
    choices: Type.Array(Choice, { minItems: FLOW_LIMITS.minChoices, maxItems: FLOW_LIMITS.maxChoices }),
    minimum_confidence: Type.Number({ minimum: 0, maximum: 1 }),
    fallback_choice: Type.String({ maxLength: 64 }),
    /** Choice key → the node that follows that choice (every choice is wired; nothing else is). */
    branches: Type.Record(Type.String({ maxLength: 64 }), NodeId, { maxProperties: FLOW_LIMITS.maxChoices }),
    assign: Type.Optional(StateKey),
    on_error: Type.Optional(NodeId),
  },
  'Lets the model pick one of 2–20 choices; below `minimum_confidence`, or an answer outside the choices, takes `fallback_choice`',
);

export const ToolNode = node(
  'tool',
  {
    tool: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' }),
    arguments: Type.Optional(Expression),
    /** `write` calls carry an idempotency key derived from the execution and the step. */
    effect: Type.Optional(OneOf(['read', 'write'], { default: 'write' })),
    compensation: Type.Optional(NodeId),
    assign: Type.Optional(StateKey),
    on_error: Type.Optional(NodeId),
    next: Type.Optional(Next),
  },
  'Calls a registered MCP tool on a server attached to the execution agent (routed and gated like `POST /runtime/mcp/tools/execute`; a high-impact tool only after a granted approval); `next` may be absent only for a parallel branch',
);

export const ResourceNode = node(
  'resource',
  {
    resource: Type.String({ minLength: 1, maxLength: 256 }),
    arguments: Type.Optional(Expression),
    assign: Type.Optional(StateKey),
    on_error: Type.Optional(NodeId),
    next: Type.Optional(Next),
  },
  'Reads a resource (read-only); `next` may be absent only for a parallel branch',
);

export const ConditionNode = node(
  'condition',
  { when: Expression, on_true: NodeId, on_false: NodeId },
  'Goes to `on_true` when the expression is truthy, else to `on_false`',
);

export const TransformNode = node(
  'transform',
  { expression: Expression, assign: StateKey, next: Type.Optional(Next) },
  'Evaluates the expression into `vars.<assign>`',
);

export const ParallelNode = node(
  'parallel',
  {
    branches: Type.Array(NodeId, { minItems: 2, maxItems: FLOW_LIMITS.maxParallelBranches }),
    next: Next,
  },
  'Runs the branch nodes (tool, resource, transform, ai, specialist or subflow nodes without `next`) concurrently, then `next`',
);

export const LoopNode = node(
  'loop',
  {
    max_iterations: Type.Integer({ minimum: 1, maximum: FLOW_LIMITS.maxLoopIterations }),
    over: Type.Optional(Expression),
    while: Type.Optional(Expression),
    body: NodeId,
    next: Next,
  },
  'Runs `body` (whose last node points back here) at most `max_iterations` times, over the items of `over` and while `while` holds; `vars.loop.<id>` holds item and index',
);

export const ApprovalNode = node(
  'approval',
  {
    message: Text(FLOW_LIMITS.descriptionMaxLength),
    details: Type.Optional(Expression),
    on_deny: Type.Optional(NodeId),
    next: Next,
  },
  'Waits for an approval (execution state waiting_for_approval); approved → `next`, denied → `on_deny` or a terminal failure',
);

export const DelayNode = node(
  'delay',
  { duration_ms: Type.Integer({ minimum: 1, maximum: FLOW_LIMITS.maxDelayMs }), next: Next },
  'Waits for a duration (the execution is queued with a resume time)',
);

export const EventWaitNode = node(
  'event_wait',
  {
    event: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' }),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: FLOW_LIMITS.maxDelayMs })),
    assign: Type.Optional(StateKey),
    on_timeout: Type.Optional(NodeId),
    next: Next,
  },
  'Waits for a named event (resume); its payload goes to `vars.<assign>`',
);

export const SubflowNode = node(
  'subflow',
  {
    flow_id: Type.String({ minLength: 1, maxLength: 64 }),
    version: Type.Integer({ minimum: 1, description: 'Pinned version of the subflow' }),
    input: Type.Optional(Expression),
    assign: Type.Optional(StateKey),
    on_error: Type.Optional(NodeId),
    next: Type.Optional(Next),
  },
  'Runs a pinned version of another flow inline; its output goes to `vars.<assign>`',
);

export const SupervisorNode = node(
  'supervisor',
  {
    mode: OneOf(['adaptive', 'deterministic']),
    instructions: Instructions,
    specialists: Type.Array(NodeId, { minItems: 1, maxItems: FLOW_LIMITS.maxSupervisorSpecialists }),
    max_rounds: Type.Integer({ minimum: 1, maximum: FLOW_LIMITS.maxSupervisorRounds }),
    assign: Type.Optional(StateKey),
    next: Next,
  },
  'Coordinates specialist nodes: deterministic runs each once in order; adaptive lets the model pick the next one (or finish) each round',
);

export const SpecialistNode = node(
  'specialist',
  {
    agent_id: Type.String({ minLength: 1, maxLength: 64 }),
    instructions: Instructions,
    input: Type.Optional(Expression),
    description: Type.Optional(Text(FLOW_LIMITS.descriptionMaxLength)),
    assign: Type.Optional(StateKey),
    on_error: Type.Optional(NodeId),
    next: Type.Optional(Next),
  },
  'Hands a task to a specialist agent; `next` is absent when it belongs to a supervisor or a parallel node',
);

export const CompensationNode = node(
  'compensation',
  {
    tool: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' }),
    arguments: Type.Optional(Expression),
  },
  'Undoes a completed tool step (referenced by the tool node’s `compensation`); runs in reverse order on failure',
);

export const OutputNode = node(
  'output',
  {
    action: OneOf(ACTION_TYPES),
    content: Type.Optional(Expression),
    data: Type.Optional(Expression),
  },
  'Ends the execution with a normalized action (which must be in `permissions.allowed_actions`)',
);

/** The schema of each node type. */
export const NODE_SCHEMAS: Readonly<Record<NodeType, TSchema>> = {
  input: InputNode,
  ai: AiNode,
  ai_decision: AiDecisionNode,
  tool: ToolNode,
  resource: ResourceNode,
  condition: ConditionNode,
  transform: TransformNode,
  parallel: ParallelNode,
  loop: LoopNode,
  approval: ApprovalNode,
  delay: DelayNode,
  event_wait: EventWaitNode,
  subflow: SubflowNode,
  supervisor: SupervisorNode,
  specialist: SpecialistNode,
  compensation: CompensationNode,
  output: OutputNode,
};

export const FlowNode = Type.Union([
  InputNode,
  AiNode,
  AiDecisionNode,
  ToolNode,
  ResourceNode,
  ConditionNode,
  TransformNode,
  ParallelNode,
  LoopNode,
  ApprovalNode,
  DelayNode,
  EventWaitNode,
  SubflowNode,
  SupervisorNode,
  SpecialistNode,
  CompensationNode,
  OutputNode,
]);
export type FlowNode = Static<typeof FlowNode>;
export type NodeOf<T extends NodeType> = Extract<FlowNode, { type: T }>;

/** A field of the flow's input or output contract (a bounded JSON Schema subset). */
export const ContractField = Type.Object(
  {
    type: OneOf(CONTRACT_FIELD_TYPES),
    description: Type.Optional(Text(FLOW_LIMITS.descriptionMaxLength)),
  },
  { additionalProperties: false },
);

/** The input or output contract of a flow: what callers send, and what they get back. */
export const Contract = Type.Object(
  {
    type: Type.Literal('object'),
    properties: Type.Record(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' }), ContractField, {
      maxProperties: FLOW_LIMITS.maxContractFields,
    }),
    required: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: FLOW_LIMITS.maxContractFields })),
  },
  { additionalProperties: false },
);
export type Contract = Static<typeof Contract>;

const Common = {
  schema_version: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A date string, e.g. 2026-08-22' }),
  orchestration_mode: OneOf(ORCHESTRATION_MODES),
  routing: Type.Optional(
    Type.Object(
      {
        enabled: Type.Optional(Type.Boolean({ default: true })),
        when_to_use: Type.Optional(Text(FLOW_LIMITS.descriptionMaxLength)),
        when_not_to_use: Type.Optional(Text(FLOW_LIMITS.descriptionMaxLength)),
        capabilities: Type.Optional(StringList),
        allowed_handoffs: Type.Optional(StringList),
        minimum_confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
      },
      { additionalProperties: false },
    ),
  ),
  behavior: Type.Optional(
    Type.Object(
      {
        instructions: Type.Optional(Instructions),
        completion_criteria: Type.Optional(StringList),
        unavailable_result: Type.Optional(OneOf(UNAVAILABLE_RESULT_MODES, { default: 'offer_first' })),
      },
      { additionalProperties: false },
    ),
  ),
  permissions: Type.Object(
    {
      allowed_actions: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: ACTION_TYPES.length }),
      risk_tier: Type.Optional(OneOf(RISK_TIERS, { default: 'low' })),
    },
    { additionalProperties: false },
  ),
  runtime: Type.Optional(
    Type.Object(
      { max_tool_calls: Type.Optional(Type.Integer({ minimum: 0, maximum: FLOW_LIMITS.maxToolCalls })) },
      { additionalProperties: false },
    ),
  ),
  contract: Type.Optional(
    Type.Object({ input: Type.Optional(Contract), output: Type.Optional(Contract) }, { additionalProperties: false }),
  ),
  start: Type.Optional(NodeId),
};

/** A flow `config`, with every node type (the published shape of the API). */
export const FlowConfigSchema = Type.Object(
  { ...Common, nodes: Type.Array(FlowNode, { minItems: 1, maxItems: FLOW_LIMITS.maxNodes }) },
  { additionalProperties: false },
);
export type FlowConfig = Static<typeof FlowConfigSchema>;

/** The config with nodes checked only as `{id, type}` objects: the compiler then checks each node by its type. */
export const FlowConfigShell = Type.Object(
  {
    ...Common,
    nodes: Type.Array(Type.Object({ id: Type.Unknown(), type: Type.Unknown() }), {
      minItems: 1,
      maxItems: FLOW_LIMITS.maxNodes,
    }),
  },
  { additionalProperties: false },
);
