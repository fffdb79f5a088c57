import { createHash } from 'node:crypto';
import { type StepSpan, withStepSpan } from '@keel/core';
import type { AgentSettings } from '../agents/agent-settings.ts';
import { amountPicos } from '../providers/pricing.ts';
import {
  type ClientCapabilities,
  downgradeForClient,
  type NormalizedAction,
  sanitizeHandoff,
} from '../runtime/actions.ts';
import type { FlowPlan } from './flow-compiler.ts';
import { ExpressionError, evaluateExpression, jsonSize, truthy } from './flow-expressions.ts';
import type { FlowNode, NodeOf, NodeType } from './flow-schemas.ts';
import type { ExecutionState } from './flow-states.ts';

/**
 * The flow executor: runs a compiled plan step by step against a port (persistence and every external
 * capability), under the agent's settings bounds.
 *
 * Durability by replay: every node's result is saved through the port before the next node starts. A run (a first
 * run, a resume after a wait, or a restart after a crash) walks the plan from its start; a step whose record is
 * already saved is not executed again — its recorded outcome is applied instead — so completed side effects never
 * repeat. A step that was in flight when the process died runs again with the same idempotency key (derived from
 * the execution id and the step key), so the tool side can de-duplicate it.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One persisted record of an execution's log. */
export interface FlowStepRecord {
  /** `<frame>/<node id>#<visit>`; `~wait` marks a started wait, `~undo` a compensation that ran. */
  key: string;
  node_id: string;
  type: NodeType;
  phase: 'done' | 'wait' | 'undo';
  outcome: Json;
  /** A compensation to run if the execution is compensated later (tool steps with `compensation`). */
  compensation: { tool: string; arguments: Json } | null;
  tool_calls: number;
  cost_picos: string;
  attempts: number;
  started_at: string;
  finished_at: string;
  /** The span of the node's execution (trace timelines show the step under this id; absent in older records). */
  span_id?: string;
  parent_span_id?: string | null;
}

/**
 * Node types whose step is a pure function of the stored log and the input (no call, no wait, no choice): their
 * spans are not made current (they start none), and the store holds their records back until the next durable write.
 */
export const PURE_NODE_TYPES: ReadonlySet<NodeType> = new Set(['input', 'transform', 'condition', 'output']);

/** Attributes of a flow node's span (ids, type, outcome and codes only: never a payload). */
export const NODE_SPAN = {
  nodeId: 'keel.flow.node.id',
  nodeType: 'keel.flow.node.type',
  outcome: 'keel.flow.node.outcome',
  errorCode: 'keel.flow.node.error_code',
  attempts: 'keel.flow.node.attempts',
} as const;

/** A failure reported by a port call; `retryable` failures are retried within max_node_retries. */
export class FlowPortError extends Error {
  override name = 'FlowPortError';
  readonly code: string;
  readonly retryable: boolean;
  /**
   * A refusal that clears only at this time (a used-up realm quota, `QUOTA_EXCEEDED`): the node is not retried, no
   * `on_error` takes it, and the run stops as a retryable failure before anything of the step was applied.
   */
  readonly retryAt: string | undefined;
  constructor(code: string, message: string, retryable: boolean, retryAt?: string) {
    super(message);
    this.code = code;
    this.retryable = retryable;
    this.retryAt = retryAt;
  }
}

/** The code of a step refused because the realm quota is used up (see `FlowPortError.retryAt`). */
export const QUOTA_EXCEEDED = 'GOVERNANCE_QUOTA_EXCEEDED';

export interface PortCallBase {
  executionId: string;
  stepKey: string;
  nodeId: string;
  /** Aborts on the node deadline or on cancellation. */
  signal: AbortSignal;
  /** Nesting of subflows and handoffs at this step (0 at the top). */
  depth: number;
}

export interface ToolCall extends PortCallBase {
  tool: string;
  arguments: Json;
  effect: 'read' | 'write';
  /** Stable for this execution and step across retries, resumes and restarts. */
  idempotencyKey: string;
  compensating: boolean;
}
export interface ResourceCall extends PortCallBase {
  resource: string;
  arguments: Json;
}
export interface GenerateCall extends PortCallBase {
  instructions: string;
  input: Json;
}
export interface DecideCall extends PortCallBase {
  instructions: string;
  input: Json;
  choices: readonly { key: string; description: string }[];
}
export interface SpecialistCall extends PortCallBase {
  agentId: string;
  instructions: string;
  input: Json;
  idempotencyKey: string;
}

export interface PortResult {
  output: unknown;
  /** What the call cost, in picos of the provider currency. */
  costPicos?: bigint;
}
export interface DecideResult {
  choice: string;
  confidence: number;
  costPicos?: bigint;
}

/** Everything the executor needs from the outside: the durable-execution layer and the tests implement it. */
export interface FlowPort {
  /** The saved records of an execution, in the order they were saved. */
  loadSteps(executionId: string): Promise<readonly FlowStepRecord[]>;
  /**
   * Saves one record durably; the executor starts no later step of the same path before it resolves. Branches of a
   * parallel node save concurrently, each under its own key.
   */
  saveStep(executionId: string, record: FlowStepRecord): Promise<void>;
  callTool(call: ToolCall): Promise<PortResult>;
  readResource(call: ResourceCall): Promise<PortResult>;
  /** A model answer for an `ai` node. */
  generate(call: GenerateCall): Promise<PortResult>;
  /** A model choice with its confidence (ai_decision, adaptive supervisor). */
  decide(call: DecideCall): Promise<DecideResult>;
  runSpecialist(call: SpecialistCall): Promise<PortResult>;
  /** A published plan by pinned version (subflows); undefined when it is not available. */
  loadPlan(flowId: string, version: number): Promise<FlowPlan | undefined>;
  now(): number;
  /** Waits `ms` (retry backoff); rejects when the signal aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** What a wait needs to continue: an approval decision, an event, or nothing (a delay or a timeout). */
export type ResumeSignal = { kind: 'approval'; approved: boolean; reason?: string } | { kind: 'event'; payload: Json };

export type FlowWait =
  | { kind: 'approval'; wait_id: string; node_id: string; message: string; details: Json }
  | { kind: 'delay'; wait_id: string; node_id: string; resume_at: string }
  | { kind: 'event'; wait_id: string; node_id: string; event: string; expires_at: string | null };

export interface FlowRunRequest {
  executionId: string;
  plan: FlowPlan;
  /** The execution's input (pinned to it). */
  input: Json;
  settings: AgentSettings;
  /** Continuations for waits, by wait id. */
  signals?: Readonly<Record<string, ResumeSignal>>;
  /** Run the completed steps' compensations (in reverse order) when the run fails or is cancelled. */
  compensate?: boolean;
  /** Cancels the run: checked before each step and passed to each port call. */
  signal?: AbortSignal;
  /**
   * The governance rule on the answer (the pinned policy version's `allowed_actions`): an output node of the
   * execution's own plan whose action it refuses fails the run with POLICY_ACTION_BLOCKED (no subflow's output).
   */
  actionAllowed?: (actionType: string) => boolean;
}

export interface FlowUsage {
  tool_calls: number;
  cost_picos: string;
  /** Steps executed by this run (not replayed). */
  steps_executed: number;
  /** Steps replayed from the log. */
  steps_replayed: number;
}

export interface FlowError {
  code: string;
  message: string;
  node_id: string | null;
}

export type FlowRunOutcome =
  | { status: 'succeeded'; state: 'succeeded'; action: NormalizedAction; usage: FlowUsage }
  | {
      status: 'waiting';
      state: 'waiting_for_approval' | 'queued';
      wait: FlowWait;
      action: NormalizedAction;
      usage: FlowUsage;
    }
  | {
      status: 'retryable_failure' | 'terminal_failure';
      state: 'retryable_failure' | 'terminal_failure';
      error: FlowError;
      action: NormalizedAction;
      usage: FlowUsage;
    }
  | { status: 'cancelled'; state: 'cancelled'; usage: FlowUsage }
  | { status: 'compensated'; state: 'compensated'; error: FlowError; compensated: string[]; usage: FlowUsage };

/** Steps one run may take in all (loops × bodies included): a bound beside the per-loop ones. */
export const MAX_STEPS_PER_RUN = 10_000;
/** Serialized size of one step's outcome. */
export const MAX_STEP_OUTCOME_CHARS = 262_144;

/** The idempotency key of a step: the same for every retry, resume and restart of that step. */
export function stepIdempotencyKey(executionId: string, stepKey: string): string {
  return `flow_${createHash('sha256').update(executionId).update('\n').update(stepKey).digest('hex')}`;
}

/** The action a client receives: handoff fields stripped, then the client downgrade rules applied. */
export function clientAction(action: NormalizedAction, capabilities: ClientCapabilities | undefined): NormalizedAction {
  return downgradeForClient(sanitizeHandoff(action), capabilities);
}

/** A run stopped by a failure (after retries) that no `on_error` handles. */
class FlowFailure extends Error {
  readonly code: string;
  readonly nodeId: string | null;
  readonly retryable: boolean;
  constructor(code: string, message: string, nodeId: string | null, retryable: boolean) {
    super(message);
    this.code = code;
    this.nodeId = nodeId;
    this.retryable = retryable;
  }
}

/** A JSON copy of a step result (a value JSON cannot hold, such as a BigInt or a cycle, fails the step). */
function toJson(value: unknown, nodeId: string | null = null): Json {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value)) as Json;
  } catch {
    throw new FlowFailure('STEP_OUTPUT_INVALID', 'a step result is not JSON', nodeId, false);
  }
}

class Cancelled extends Error {}

/** saveStep failed: the run cannot go on and has no outcome (it resumes from its log later); never a node failure. */
class PersistenceFailure extends Error {}

/** A node failure an `on_error` may handle (as opposed to a budget or plan failure, which ends the run). */
function nodeFailure(error: unknown, nodeId: string | null): FlowFailure {
  if (error instanceof Cancelled || error instanceof PersistenceFailure) throw error;
  if (error instanceof FlowFailure) return error;
  if (error instanceof FlowPortError) return new FlowFailure(error.code, error.message, nodeId, error.retryable);
  if (error instanceof ExpressionError) return new FlowFailure(error.code, error.message, nodeId, false);
  return new FlowFailure('NODE_FAILED', 'the node failed', nodeId, false);
}

interface LoopFrame {
  item: Json;
  index: number;
  items: Json[] | null;
}
type Scope = { input: Json; vars: Record<string, Json>; loop: Record<string, LoopFrame> };

/** A frame's scope: `vars` and `loop` have no prototype, so a node id such as `constructor` is plain data. */
function newScope(input: Json): Scope {
  return { input, vars: Object.create(null), loop: Object.create(null) };
}

interface Frame {
  plan: FlowPlan;
  prefix: string;
  depth: number;
  scope: Scope;
  visits: Map<string, number>;
}

type GraphEnd = { kind: 'output'; action: NormalizedAction } | { kind: 'wait'; wait: FlowWait };

/** Creates an executor over a port. It keeps no state between runs: everything durable goes through the port. */
export function createFlowExecutor(port: FlowPort) {
  return { run: (request: FlowRunRequest) => runExecution(port, request) };
}

async function runExecution(port: FlowPort, request: FlowRunRequest): Promise<FlowRunOutcome> {
  const { executionId, settings } = request;
  const log = [...(await port.loadSteps(executionId))];
  const records = new Map(log.map((record) => [record.key, record]));
  let deadline = port.now() + settings.max_latency_ms;
  const toolCap = Math.min(settings.max_tool_calls, request.plan.maxToolCalls ?? Number.POSITIVE_INFINITY);
  const costCap = settings.max_execution_cost === null ? null : amountPicos(settings.max_execution_cost);
  // Usage counts the whole log (a subflow replayed as one step still counts its inner calls).
  // toolsInFlight: calls started but not yet saved, so parallel branches cannot pass max_tool_calls together.
  const usage = { toolCalls: 0, toolsInFlight: 0, cost: 0n, executed: 0, replayed: 0, steps: 0 };
  for (const record of log) account(record);
  let cancelSignal = request.signal;
  const signals = request.signals ?? {};

  const remaining = () => deadline - port.now();
  const checkRunnable = (nodeId: string | null) => {
    if (cancelSignal?.aborted) throw new Cancelled();
    if (remaining() <= 0)
      throw new FlowFailure('LATENCY_LIMIT', `max_latency_ms ${settings.max_latency_ms} reached`, nodeId, true);
  };
  const iso = (ms: number) => new Date(ms).toISOString();
  function account(record: FlowStepRecord) {
    usage.toolCalls += record.tool_calls;
    usage.cost += BigInt(record.cost_picos);
  }

  const save = async (record: FlowStepRecord) => {
    try {
      await port.saveStep(executionId, record);
    } catch (error) {
      throw new PersistenceFailure('saveStep failed', { cause: error });
    }
    records.set(record.key, record);
    log.push(record);
  };

  const checkCost = (nodeId: string) => {
    if (costCap !== null && usage.cost >= costCap)
      throw new FlowFailure('COST_LIMIT', `max_execution_cost ${settings.max_execution_cost} reached`, nodeId, false);
  };

  /** One port call under the node deadline, retried with backoff while transient failures allow. */
  const attempt = async <T>(nodeId: string, call: (signal: AbortSignal) => Promise<T>) => {
    let attempts = 0;
    for (let retry = 0; ; retry++) {
      checkRunnable(nodeId);
      attempts++;
      const timeoutMs = Math.max(1, Math.min(settings.node_timeout_ms, remaining()));
      const controller = new AbortController();
      const onCancel = () => controller.abort(new Cancelled());
      cancelSignal?.addEventListener('abort', onCancel, { once: true });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const error = new FlowPortError('NODE_TIMEOUT', `the node took longer than ${timeoutMs} ms`, true);
          controller.abort(error);
          reject(error);
        }, timeoutMs);
      });
      try {
        const value = await Promise.race([call(controller.signal), timeout]);
        return { value, attempts };
      } catch (error) {
        if (cancelSignal?.aborted) throw new Cancelled();
        const retryable = error instanceof FlowPortError && error.retryable && error.retryAt === undefined;
        const delay = settings.retry_base_ms * 2 ** retry;
        if (!retryable || retry >= settings.max_node_retries || delay >= remaining()) throw error;
        await port.sleep(delay, cancelSignal ?? new AbortController().signal).catch(() => {
          throw new Cancelled();
        });
      } finally {
        clearTimeout(timer);
        cancelSignal?.removeEventListener('abort', onCancel);
      }
    }
  };

  const evaluate = (expression: unknown, scope: unknown, nodeId: string): Json => {
    try {
      return evaluateExpression(expression, scope);
    } catch (error) {
      if (error instanceof ExpressionError) throw new FlowFailure(error.code, error.message, nodeId, false);
      throw error;
    }
  };

  /** Runs a step once: replays its saved record, or executes it and saves the record before returning. */
  const step = async (
    key: string,
    node: FlowNode,
    execute: () => Promise<{
      outcome: unknown;
      toolCalls?: number;
      cost?: bigint;
      attempts?: number;
      compensation?: FlowStepRecord['compensation'];
    }>,
  ): Promise<Json> => {
    const saved = records.get(key);
    if (saved) {
      usage.replayed++;
      return saved.outcome;
    }
    if (++usage.steps > MAX_STEPS_PER_RUN)
      throw new FlowFailure('STEP_LIMIT', `a run takes at most ${MAX_STEPS_PER_RUN} steps`, node.id, false);
    checkRunnable(node.id);
    return nodeSpan(node, async (span) => {
      const startedAt = port.now();
      const result = await execute();
      const outcome = toJson(result.outcome, node.id);
      if (jsonSize(outcome, MAX_STEP_OUTCOME_CHARS) > MAX_STEP_OUTCOME_CHARS)
        throw new FlowFailure(
          'STEP_OUTPUT_TOO_LARGE',
          `a step result exceeds ${MAX_STEP_OUTCOME_CHARS} characters`,
          node.id,
          false,
        );
      const error = (outcome as { error?: { code?: unknown } } | null)?.error;
      span.set({
        [NODE_SPAN.outcome]: error ? 'error' : 'succeeded',
        [NODE_SPAN.attempts]: result.attempts ?? 0,
        ...(error && typeof error.code === 'string' ? { [NODE_SPAN.errorCode]: error.code } : {}),
      });
      const record: FlowStepRecord = {
        key,
        node_id: node.id,
        type: node.type,
        phase: 'done',
        outcome,
        compensation: result.compensation ?? null,
        tool_calls: result.toolCalls ?? 0,
        cost_picos: String(result.cost ?? 0n),
        attempts: result.attempts ?? 0,
        started_at: iso(startedAt),
        finished_at: iso(port.now()),
        span_id: span.spanId,
        parent_span_id: span.parentSpanId ?? null,
      };
      await save(record);
      account(record);
      usage.executed++;
      return outcome;
    });
  };

  /**
   * Runs one execution of a node as a span (`flow.node <type>`) under the run's span: node id, type and outcome
   * attributes, no payloads. A step that throws ends its span failed with outcome `failed` (or `cancelled`) and
   * the failure's code.
   */
  const nodeSpan = <T>(node: FlowNode, work: (span: StepSpan) => Promise<T>): Promise<T> =>
    withStepSpan(
      `flow.node ${node.type}`,
      { [NODE_SPAN.nodeId]: node.id, [NODE_SPAN.nodeType]: node.type, 'keel.execution.id': executionId },
      async (span) => {
        try {
          return await work(span);
        } catch (error) {
          const code =
            error instanceof FlowFailure || error instanceof FlowPortError || error instanceof ExpressionError
              ? error.code
              : undefined;
          span.set({
            [NODE_SPAN.outcome]: error instanceof Cancelled ? 'cancelled' : 'failed',
            ...(code ? { [NODE_SPAN.errorCode]: code } : {}),
          });
          throw error;
        }
      },
      { activate: !PURE_NODE_TYPES.has(node.type) },
    );

  /** Reserves one tool call within max_tool_calls (released by the caller once the step is saved or failed). */
  const useToolCall = (nodeId: string) => {
    if (usage.toolCalls + usage.toolsInFlight >= toolCap)
      throw new FlowFailure('TOOL_CALL_LIMIT', `max_tool_calls ${toolCap} reached`, nodeId, false);
    usage.toolsInFlight++;
  };
  const enter = (depth: number, nodeId: string) => {
    if (depth + 1 > settings.max_orchestration_depth)
      throw new FlowFailure(
        'ORCHESTRATION_DEPTH_LIMIT',
        `max_orchestration_depth ${settings.max_orchestration_depth} reached`,
        nodeId,
        false,
      );
    return depth + 1;
  };
  const afterCost = (nodeId: string) => {
    if (costCap !== null && usage.cost > costCap)
      throw new FlowFailure('COST_LIMIT', `max_execution_cost ${settings.max_execution_cost} exceeded`, nodeId, false);
  };
  const base = (frame: Frame, key: string, nodeId: string, signal: AbortSignal): PortCallBase => ({
    executionId,
    stepKey: key,
    nodeId,
    signal,
    depth: frame.depth,
  });
  const resultKey = (node: { id: string; assign?: string | undefined }) => node.assign ?? node.id;

  /** Executes a node that calls out (ai, tool, resource, subflow-free members); returns its result or an error outcome. */
  const callNode = async (frame: Frame, key: string, node: FlowNode): Promise<Json> => {
    const scope = frame.scope;
    let reserved = false;
    return step(key, node, async () => {
      try {
        switch (node.type) {
          case 'tool': {
            useToolCall(node.id);
            reserved = true;
            checkCost(node.id);
            const args = node.arguments === undefined ? {} : evaluate(node.arguments, scope, node.id);
            const idempotencyKey = stepIdempotencyKey(executionId, key);
            const { value, attempts } = await attempt(node.id, (signal) =>
              port.callTool({
                ...base(frame, key, node.id, signal),
                tool: node.tool,
                arguments: args,
                effect: node.effect ?? 'write',
                idempotencyKey,
                compensating: false,
              }),
            );
            const result = toJson(value.output, node.id);
            let compensation: FlowStepRecord['compensation'] = null;
            if (node.compensation) {
              const undo = frame.plan.nodes[node.compensation] as NodeOf<'compensation'>;
              compensation = {
                tool: undo.tool,
                arguments:
                  undo.arguments === undefined
                    ? {}
                    : evaluate(undo.arguments, { ...scope, result, arguments: args }, undo.id),
              };
            }
            return { outcome: { result }, toolCalls: 1, cost: value.costPicos ?? 0n, attempts, compensation };
          }
          case 'resource': {
            const args = node.arguments === undefined ? {} : evaluate(node.arguments, scope, node.id);
            const { value, attempts } = await attempt(node.id, (signal) =>
              port.readResource({ ...base(frame, key, node.id, signal), resource: node.resource, arguments: args }),
            );
            return { outcome: { result: toJson(value.output, node.id) }, cost: value.costPicos ?? 0n, attempts };
          }
          case 'ai': {
            checkCost(node.id);
            const input = node.input === undefined ? scope.input : evaluate(node.input, scope, node.id);
            const { value, attempts } = await attempt(node.id, (signal) =>
              port.generate({ ...base(frame, key, node.id, signal), instructions: node.instructions, input }),
            );
            return { outcome: { result: toJson(value.output, node.id) }, cost: value.costPicos ?? 0n, attempts };
          }
          case 'specialist': {
            const depth = enter(frame.depth, node.id);
            checkCost(node.id);
            const input = node.input === undefined ? scope.input : evaluate(node.input, scope, node.id);
            const { value, attempts } = await attempt(node.id, (signal) =>
              port.runSpecialist({
                ...base(frame, key, node.id, signal),
                depth,
                agentId: node.agent_id,
                instructions: node.instructions,
                input,
                idempotencyKey: stepIdempotencyKey(executionId, key),
              }),
            );
            return { outcome: { result: toJson(value.output, node.id) }, cost: value.costPicos ?? 0n, attempts };
          }
          case 'transform':
            return { outcome: { result: evaluate(node.expression, scope, node.id) } };
          default:
            throw new FlowFailure('PLAN_INVALID', `${node.type} is not a call node`, node.id, false);
        }
      } catch (error) {
        const failure = nodeFailure(error, node.id);
        const handled = 'on_error' in node && node.on_error !== undefined;
        if (!handled || isBudgetFailure(failure)) throw failure;
        return { outcome: { error: { code: failure.code, message: failure.message } } };
      }
    })
      .finally(() => {
        if (reserved) usage.toolsInFlight--;
      })
      .then((outcome) => {
        afterCost(node.id);
        return outcome;
      });
  };

  const nextKey = (frame: Frame, nodeId: string) => {
    const visit = (frame.visits.get(nodeId) ?? 0) + 1;
    frame.visits.set(nodeId, visit);
    return `${frame.prefix}${nodeId}#${visit}`;
  };

  /** Applies a call node's outcome to the scope; returns the node to go to (on_error for an error outcome). */
  const applyCall = (frame: Frame, node: FlowNode & { assign?: string }, outcome: Json): string | undefined => {
    const record = outcome as { result?: Json; error?: { code: string; message: string } };
    if (record.error) {
      frame.scope.vars[resultKey(node)] = { error: record.error };
      return (node as { on_error?: string }).on_error;
    }
    frame.scope.vars[resultKey(node)] = record.result ?? null;
    return (node as { next?: string }).next;
  };

  const runGraph = async (frame: Frame): Promise<GraphEnd> => {
    const { plan, scope } = frame;
    let current = plan.start;
    let previous: string | null = null;
    for (;;) {
      const node = plan.nodes[current]!;
      const key = nextKey(frame, node.id);
      let next: string | undefined;
      switch (node.type) {
        case 'input': {
          const outcome = await step(key, node, async () => ({
            outcome: { result: node.input === undefined ? scope.input : evaluate(node.input, scope, node.id) },
          }));
          scope.vars[node.assign ?? 'input'] = (outcome as { result: Json }).result;
          next = node.next;
          break;
        }
        case 'ai':
        case 'tool':
        case 'resource':
        case 'transform':
        case 'specialist':
          next = applyCall(frame, node, await callNode(frame, key, node));
          break;
        case 'ai_decision': {
          const outcome = (await step(key, node, async () => {
            try {
              checkCost(node.id);
              const input = node.input === undefined ? scope.input : evaluate(node.input, scope, node.id);
              const { value, attempts } = await attempt(node.id, (signal) =>
                port.decide({
                  ...base(frame, key, node.id, signal),
                  instructions: node.instructions,
                  input,
                  choices: node.choices,
                }),
              );
              return { outcome: resolveDecision(node, value), cost: value.costPicos ?? 0n, attempts };
            } catch (error) {
              const failure = nodeFailure(error, node.id);
              if (node.on_error === undefined || isBudgetFailure(failure)) throw failure;
              return { outcome: { error: { code: failure.code, message: failure.message } } };
            }
          })) as { choice?: string; error?: { code: string; message: string } };
          afterCost(node.id);
          if (outcome.error) {
            scope.vars[resultKey(node)] = { error: outcome.error };
            next = node.on_error;
          } else {
            scope.vars[resultKey(node)] = outcome as Json;
            next = node.branches[outcome.choice!];
          }
          break;
        }
        case 'condition': {
          const outcome = await step(key, node, async () => ({
            outcome: { value: truthy(evaluate(node.when, scope, node.id)) },
          }));
          next = (outcome as { value: boolean }).value ? node.on_true : node.on_false;
          break;
        }
        case 'parallel': {
          const members = node.branches.map((id) => ({ node: plan.nodes[id]!, key: nextKey(frame, id) }));
          const lanes = Math.min(settings.max_dependency_concurrency, members.length);
          const results = new Array<Json>(members.length);
          const failures: { index: number; error: unknown }[] = [];
          let cursor = 0;
          const lane = async () => {
            while (cursor < members.length && failures.length === 0) {
              const index = cursor++;
              const member = members[index]!;
              try {
                results[index] =
                  member.node.type === 'subflow'
                    ? await runSubflow(frame, member.key, member.node)
                    : await callNode(frame, member.key, member.node);
              } catch (error) {
                failures.push({ index, error });
              }
            }
          };
          await Promise.all(Array.from({ length: lanes }, lane));
          if (failures.length > 0) throw failures.sort((a, b) => a.index - b.index)[0]!.error;
          members.forEach((member, index) => {
            applyCall(frame, member.node, results[index]!);
          });
          await step(key, node, async () => ({ outcome: { branches: node.branches.length } }));
          next = node.next;
          break;
        }
        case 'loop': {
          const body = plan.loopBodies[node.id] ?? [];
          const continuing = previous !== null && body.includes(previous) && Object.hasOwn(scope.loop, node.id);
          const outcome = (await step(key, node, async () => {
            let items: Json[] | null = null;
            let index = 0;
            if (continuing) {
              index = scope.loop[node.id]!.index + 1;
            } else if (node.over !== undefined) {
              const value = evaluate(node.over, scope, node.id);
              if (value !== null && !Array.isArray(value))
                throw new FlowFailure('LOOP_OVER_INVALID', '`over` must give an array', node.id, false);
              items = value ?? [];
              if (items.length > node.max_iterations)
                throw new FlowFailure(
                  'LOOP_BOUND_EXCEEDED',
                  `${items.length} items exceed max_iterations ${node.max_iterations}`,
                  node.id,
                  false,
                );
            }
            const list = items ?? (continuing ? scope.loop[node.id]!.items : null);
            let iterate = index < node.max_iterations && (list === null || index < list.length);
            const item = list === null ? null : (list[index] ?? null);
            if (iterate && node.while !== undefined)
              iterate = truthy(
                evaluate(node.while, { ...scope, loop: { ...scope.loop, [node.id]: { item, index } } }, node.id),
              );
            return { outcome: { iterate, index, ...(continuing ? {} : { items }) } };
          })) as { iterate: boolean; index: number; items?: Json[] | null };
          const items = continuing ? scope.loop[node.id]!.items : (outcome.items ?? null);
          if (outcome.iterate) {
            scope.loop[node.id] = {
              item: items === null ? null : (items[outcome.index] ?? null),
              index: outcome.index,
              items,
            };
            next = node.body;
          } else {
            delete scope.loop[node.id];
            next = node.next;
          }
          break;
        }
        case 'approval': {
          const resolved = await waitStep(key, node, () => ({
            kind: 'approval',
            wait_id: key,
            node_id: node.id,
            message: node.message,
            details: node.details === undefined ? null : evaluate(node.details, scope, node.id),
          }));
          if (resolved.kind === 'wait') return resolved;
          const decision = resolved.outcome as { approved: boolean };
          if (decision.approved) next = node.next;
          else if (node.on_deny !== undefined) next = node.on_deny;
          else throw new FlowFailure('APPROVAL_DENIED', 'the approval was denied', node.id, false);
          break;
        }
        case 'delay': {
          const resolved = await waitStep(key, node, () => ({
            kind: 'delay',
            wait_id: key,
            node_id: node.id,
            resume_at: iso(port.now() + node.duration_ms),
          }));
          if (resolved.kind === 'wait') return resolved;
          next = node.next;
          break;
        }
        case 'event_wait': {
          const resolved = await waitStep(key, node, () => ({
            kind: 'event',
            wait_id: key,
            node_id: node.id,
            event: node.event,
            expires_at: node.timeout_ms === undefined ? null : iso(port.now() + node.timeout_ms),
          }));
          if (resolved.kind === 'wait') return resolved;
          const received = resolved.outcome as { timed_out: boolean; payload: Json };
          scope.vars[resultKey(node)] = received.timed_out ? null : received.payload;
          if (!received.timed_out) next = node.next;
          else if (node.on_timeout !== undefined) next = node.on_timeout;
          else throw new FlowFailure('EVENT_TIMEOUT', `no ${node.event} event before the timeout`, node.id, false);
          break;
        }
        case 'subflow': {
          const outcome = await runSubflowOrWait(frame, key, node);
          if ('wait' in outcome) return outcome.wait;
          next = applyCall(frame, node, outcome.value);
          break;
        }
        case 'supervisor': {
          const results: Record<string, Json> = {};
          const specialists = node.specialists.map((id) => plan.nodes[id] as NodeOf<'specialist'>);
          const runOne = async (specialist: NodeOf<'specialist'>) => {
            const outcome = (await callNode(frame, nextKey(frame, specialist.id), specialist)) as { result?: Json };
            results[specialist.id] = outcome.result ?? null;
            scope.vars[resultKey(specialist)] = outcome.result ?? null;
          };
          let finishedBy = 'plan';
          if (node.mode === 'deterministic') {
            for (const specialist of specialists) await runOne(specialist);
          } else {
            const choices = [
              ...specialists.map((specialist) => ({
                key: specialist.id,
                description: specialist.description ?? specialist.instructions.slice(0, 1_000),
              })),
              { key: 'finish', description: 'The task is complete' },
            ];
            finishedBy = 'max_rounds';
            for (let round = 1; round <= node.max_rounds; round++) {
              const roundKey = `${key}@round${round}`;
              const pick = (await step(roundKey, node, async () => {
                checkCost(node.id);
                const { value, attempts } = await attempt(node.id, (signal) =>
                  port.decide({
                    ...base(frame, roundKey, node.id, signal),
                    instructions: node.instructions,
                    input: { input: scope.input, results } as Json,
                    choices,
                  }),
                ).catch((error: unknown) => {
                  throw nodeFailure(error, node.id);
                });
                const known = choices.some((choice) => choice.key === value.choice);
                return { outcome: { choice: known ? value.choice : 'finish' }, cost: value.costPicos ?? 0n, attempts };
              })) as { choice: string };
              afterCost(node.id);
              if (pick.choice === 'finish') {
                finishedBy = 'supervisor';
                break;
              }
              await runOne(specialists.find((specialist) => specialist.id === pick.choice)!);
            }
          }
          await step(key, node, async () => ({ outcome: { results, finished_by: finishedBy } }));
          scope.vars[resultKey(node)] = results;
          next = node.next;
          break;
        }
        case 'output': {
          const outcome = (await step(key, node, async () => ({ outcome: buildAction(frame, node) }))) as unknown;
          return { kind: 'output', action: outcome as NormalizedAction };
        }
        case 'compensation':
          throw new FlowFailure('PLAN_INVALID', 'a compensation node is not a step', node.id, false);
      }
      if (next === undefined) throw new FlowFailure('PLAN_INVALID', `${node.id} has no successor`, node.id, false);
      previous = node.id;
      current = next;
    }
  };

  const buildAction = (frame: Frame, node: NodeOf<'output'>): NormalizedAction => {
    if (!frame.plan.allowedActions.includes(node.action))
      throw new FlowFailure('ACTION_NOT_ALLOWED', `${node.action} is not an allowed action`, node.id, false);
    if (frame.depth === 0 && request.actionAllowed && !request.actionAllowed(node.action))
      throw new FlowFailure(
        'POLICY_ACTION_BLOCKED',
        `${node.action} is not allowed by the realm policy`,
        node.id,
        false,
      );
    const content = node.content === undefined ? null : evaluate(node.content, frame.scope, node.id);
    const data = node.data === undefined ? null : evaluate(node.data, frame.scope, node.id);
    if (content !== null && typeof content !== 'string')
      throw new FlowFailure('OUTPUT_INVALID', 'content must give a string or null', node.id, false);
    if (data !== null && (typeof data !== 'object' || Array.isArray(data)))
      throw new FlowFailure('OUTPUT_INVALID', 'data must give an object or null', node.id, false);
    return sanitizeHandoff({
      type: node.action,
      content,
      data,
      metadata: { node_id: node.id, flow_id: frame.plan.flowId, flow_version: frame.plan.version },
    });
  };

  /** A wait: resolved from the log or a signal, or still waiting (its start is saved once, so times stay fixed). */
  const waitStep = async (
    key: string,
    node: FlowNode,
    describe: () => FlowWait,
  ): Promise<{ kind: 'resolved'; outcome: Json } | { kind: 'wait'; wait: FlowWait }> => {
    const done = records.get(key);
    if (done) {
      usage.replayed++;
      return { kind: 'resolved', outcome: done.outcome };
    }
    checkRunnable(node.id);
    let marker = records.get(`${key}~wait`);
    if (!marker)
      marker = await nodeSpan(node, async (span) => {
        const now = port.now();
        span.set({ [NODE_SPAN.outcome]: 'waiting' });
        const started: FlowStepRecord = {
          key: `${key}~wait`,
          node_id: node.id,
          type: node.type,
          phase: 'wait',
          outcome: toJson(describe()),
          compensation: null,
          tool_calls: 0,
          cost_picos: '0',
          attempts: 0,
          started_at: iso(now),
          finished_at: iso(now),
          span_id: span.spanId,
          parent_span_id: span.parentSpanId ?? null,
        };
        await save(started);
        return started;
      });
    const wait = marker.outcome as unknown as FlowWait;
    const signal = signals[key];
    let outcome: Json | undefined;
    if (wait.kind === 'approval' && signal?.kind === 'approval')
      outcome = { approved: signal.approved, reason: signal.reason ?? null };
    else if (wait.kind === 'event' && signal?.kind === 'event') outcome = { timed_out: false, payload: signal.payload };
    else if (wait.kind === 'event' && wait.expires_at !== null && port.now() >= Date.parse(wait.expires_at))
      outcome = { timed_out: true, payload: null };
    else if (wait.kind === 'delay' && port.now() >= Date.parse(wait.resume_at)) outcome = { waited: true };
    if (outcome === undefined) return { kind: 'wait', wait };
    const resolved = outcome;
    await step(key, node, async () => ({ outcome: resolved }));
    return { kind: 'resolved', outcome: resolved };
  };

  const runSubflowOrWait = async (
    frame: Frame,
    key: string,
    node: NodeOf<'subflow'>,
  ): Promise<{ value: Json } | { wait: GraphEnd }> => {
    const saved = records.get(key);
    if (saved) {
      usage.replayed++;
      return { value: saved.outcome };
    }
    try {
      const depth = enter(frame.depth, node.id);
      checkRunnable(node.id);
      const plan = await port.loadPlan(node.flow_id, node.version);
      if (!plan || (plan.flowId !== null && (plan.flowId !== node.flow_id || plan.version !== node.version)))
        throw new FlowFailure(
          'SUBFLOW_UNAVAILABLE',
          `subflow ${node.flow_id}@${node.version} is not available`,
          node.id,
          false,
        );
      const input = node.input === undefined ? frame.scope.input : evaluate(node.input, frame.scope, node.id);
      const end = await runGraph({
        plan,
        prefix: `${key}/`,
        depth,
        scope: newScope(input),
        visits: new Map(),
      });
      if (end.kind === 'wait') return { wait: end };
      const { type, content, data } = end.action;
      return { value: await step(key, node, async () => ({ outcome: { result: { type, content, data } } })) };
    } catch (error) {
      const failure = nodeFailure(error, node.id);
      if (node.on_error === undefined || isBudgetFailure(failure)) throw failure;
      return {
        value: await step(key, node, async () => ({
          outcome: { error: { code: failure.code, message: failure.message } },
        })),
      };
    }
  };

  const runSubflow = async (frame: Frame, key: string, node: NodeOf<'subflow'>): Promise<Json> => {
    const outcome = await runSubflowOrWait(frame, key, node);
    if ('wait' in outcome) throw new FlowFailure('PLAN_INVALID', 'a parallel branch cannot wait', node.id, false);
    return outcome.value;
  };

  /** Runs the saved compensations of completed steps, newest first, each at most once. */
  const compensate = async (): Promise<string[]> => {
    const undone: string[] = [];
    const pending = log.filter((record) => record.phase === 'done' && record.compensation !== null).reverse();
    for (const record of pending) {
      const undoKey = `${record.key}~undo`;
      if (records.has(undoKey)) {
        undone.push(record.key);
        continue;
      }
      const compensation = record.compensation!;
      const startedAt = port.now();
      const called = attempt(record.node_id, (signal) =>
        port.callTool({
          executionId,
          stepKey: undoKey,
          nodeId: record.node_id,
          signal,
          depth: 0,
          tool: compensation.tool,
          arguments: compensation.arguments,
          effect: 'write',
          idempotencyKey: stepIdempotencyKey(executionId, undoKey),
          compensating: true,
        }),
      ).catch((error: unknown) => {
        const failure = nodeFailure(error, record.node_id);
        throw new FlowFailure(
          'COMPENSATION_FAILED',
          `compensating ${record.key} failed: ${failure.code}`,
          record.node_id,
          false,
        );
      });
      const { attempts } = await called;
      await save({
        key: undoKey,
        node_id: record.node_id,
        type: record.type,
        phase: 'undo',
        outcome: { compensated: record.key },
        compensation: null,
        tool_calls: 0,
        cost_picos: '0',
        attempts,
        started_at: iso(startedAt),
        finished_at: iso(port.now()),
      });
      undone.push(record.key);
    }
    return undone;
  };

  const usageOut = (): FlowUsage => ({
    tool_calls: usage.toolCalls,
    cost_picos: String(usage.cost),
    steps_executed: usage.executed,
    steps_replayed: usage.replayed,
  });

  const { plan } = request;
  try {
    const end = await runGraph({
      plan,
      prefix: '',
      depth: 0,
      scope: newScope(request.input),
      visits: new Map(),
    });
    if (end.kind === 'output')
      return { status: 'succeeded', state: 'succeeded', action: end.action, usage: usageOut() };
    return {
      status: 'waiting',
      state: end.wait.kind === 'approval' ? 'waiting_for_approval' : 'queued',
      wait: end.wait,
      action: waitAction(end.wait),
      usage: usageOut(),
    };
  } catch (thrown) {
    // A failed saveStep (or a bug) propagates: the run has no outcome and resumes from its log later.
    if (thrown instanceof PersistenceFailure) throw thrown.cause;
    const stopped = thrown instanceof FlowPortError ? nodeFailure(thrown, null) : thrown;
    if (!(stopped instanceof FlowFailure || stopped instanceof Cancelled)) throw stopped;
    const cancelled = stopped instanceof Cancelled;
    const failure =
      stopped instanceof FlowFailure
        ? stopped
        : new FlowFailure('CANCELLED', 'the execution was cancelled', null, false);
    const error: FlowError = { code: failure.code, message: failure.message, node_id: failure.nodeId };
    if (request.compensate) {
      try {
        // Compensation runs even after a cancel or a spent deadline: it gets its own deadline and no cancel signal.
        cancelSignal = undefined;
        deadline = port.now() + settings.max_latency_ms;
        const compensated = await compensate();
        return { status: 'compensated', state: 'compensated', error, compensated, usage: usageOut() };
      } catch (compensationError) {
        if (compensationError instanceof PersistenceFailure) throw compensationError.cause;
        if (!(compensationError instanceof FlowFailure)) throw compensationError;
        return failed('terminal_failure', {
          code: compensationError.code,
          message: `${compensationError.message} (after ${error.code})`,
          node_id: compensationError.nodeId,
        });
      }
    }
    if (cancelled) return { status: 'cancelled', state: 'cancelled', usage: usageOut() };
    return failed(failure.retryable ? 'retryable_failure' : 'terminal_failure', error);
  }

  function failed(state: 'retryable_failure' | 'terminal_failure', error: FlowError): FlowRunOutcome {
    return {
      status: state,
      state,
      error,
      action: {
        type: 'ERROR',
        content: null,
        data: { code: error.code, retryable: state === 'retryable_failure' },
        metadata: { node_id: error.node_id },
      },
      usage: usageOut(),
    };
  }
}

function isBudgetFailure(failure: FlowFailure): boolean {
  return [
    'TOOL_CALL_LIMIT',
    'COST_LIMIT',
    'ORCHESTRATION_DEPTH_LIMIT',
    'LATENCY_LIMIT',
    'STEP_LIMIT',
    'PLAN_INVALID',
    QUOTA_EXCEEDED,
  ].includes(failure.code);
}

/** The ai_decision rule: an answer outside the choices, or below minimum_confidence, takes the fallback choice. */
export function resolveDecision(
  node: Pick<NodeOf<'ai_decision'>, 'choices' | 'minimum_confidence' | 'fallback_choice'>,
  answer: { choice: unknown; confidence: unknown },
): { choice: string; confidence: number; fallback: boolean; reason: 'chosen' | 'unknown_choice' | 'low_confidence' } {
  const confidence =
    typeof answer.confidence === 'number' && answer.confidence >= 0 && answer.confidence <= 1 ? answer.confidence : 0;
  const known = typeof answer.choice === 'string' && node.choices.some((choice) => choice.key === answer.choice);
  if (!known) return { choice: node.fallback_choice, confidence, fallback: true, reason: 'unknown_choice' };
  if (!(confidence >= node.minimum_confidence))
    return { choice: node.fallback_choice, confidence, fallback: true, reason: 'low_confidence' };
  return { choice: answer.choice as string, confidence, fallback: false, reason: 'chosen' };
}

/** The action a waiting execution shows: APPROVAL_REQUIRED for an approval, DATA_RESULT describing other waits. */
export function waitAction(wait: FlowWait): NormalizedAction {
  if (wait.kind === 'approval')
    return {
      type: 'APPROVAL_REQUIRED',
      content: wait.message,
      data: { approval_id: wait.wait_id, details: wait.details },
      metadata: { node_id: wait.node_id },
    };
  return {
    type: 'DATA_RESULT',
    content: null,
    data: { waiting: wait as unknown as Json },
    metadata: { node_id: wait.node_id },
  } as NormalizedAction;
}

/** The execution state an outcome leaves the execution in. */
export function outcomeState(outcome: FlowRunOutcome): ExecutionState {
  return outcome.state;
}
