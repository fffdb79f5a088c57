import { retryWithBackoff } from '@keel/models';
import type { AgentSettings } from '../agents/agent-settings.ts';
import { amountPicos } from '../providers/pricing.ts';

export type BudgetLimit = 'latency' | 'tool_calls' | 'orchestration_depth' | 'execution_cost';

/** A settings bound that stopped an execution. */
export class BudgetExceeded extends Error {
  override name = 'BudgetExceeded';
  readonly limit: BudgetLimit;
  constructor(limit: BudgetLimit, message: string) {
    super(message);
    this.limit = limit;
  }
}

/**
 * The agent settings of one execution, enforced: an overall deadline (max_latency_ms) with an abort signal,
 * per-node deadlines (node_timeout_ms), retries with exponential backoff (max_node_retries, retry_base_ms),
 * tool calls (max_tool_calls), bounded parallelism (max_dependency_concurrency), nesting
 * (max_orchestration_depth) and cost (max_execution_cost). Flows and tool loops use the same object.
 */
export interface RunBudget {
  readonly settings: AgentSettings;
  /** Aborts when the execution's deadline passes. */
  readonly signal: AbortSignal;
  remainingMs(): number;
  /** The deadline for the next node: node_timeout_ms, never beyond the execution's deadline. */
  nodeTimeoutMs(): number;
  /** Counts one tool call; throws when max_tool_calls is reached. */
  useToolCall(): void;
  /** Enters a nested subflow or handoff; returns the function that leaves it. */
  enter(): () => void;
  /** Runs tasks with at most max_dependency_concurrency in flight, results in order. */
  parallel<T>(tasks: (() => Promise<T>)[]): Promise<T[]>;
  /** Throws when spending `picos` more would pass max_execution_cost. */
  checkCost(picos: bigint): void;
  addCost(picos: bigint): void;
  readonly spentPicos: bigint;
  readonly toolCalls: number;
  /** Runs a node, retrying transient failures with backoff while the deadline allows. */
  retry<T>(node: (attempt: number) => Promise<T>, retryable: (error: unknown) => boolean): Promise<T>;
  readonly attempts: number;
  dispose(): void;
}

export function createRunBudget(settings: AgentSettings, clock: () => number = Date.now): RunBudget {
  const started = clock();
  const deadline = started + settings.max_latency_ms;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new BudgetExceeded('latency', `max_latency_ms ${settings.max_latency_ms}`)),
    settings.max_latency_ms,
  );
  timer.unref?.();
  const cap = settings.max_execution_cost === null ? null : amountPicos(settings.max_execution_cost);
  let spent = 0n;
  let toolCalls = 0;
  let depth = 0;
  let attempts = 0;
  const remaining = () => Math.max(0, deadline - clock());

  return {
    settings,
    signal: controller.signal,
    remainingMs: remaining,
    nodeTimeoutMs: () => Math.max(1, Math.min(settings.node_timeout_ms, remaining())),
    useToolCall() {
      if (toolCalls >= settings.max_tool_calls)
        throw new BudgetExceeded('tool_calls', `max_tool_calls ${settings.max_tool_calls} reached`);
      toolCalls++;
    },
    enter() {
      if (depth >= settings.max_orchestration_depth)
        throw new BudgetExceeded(
          'orchestration_depth',
          `max_orchestration_depth ${settings.max_orchestration_depth} reached`,
        );
      depth++;
      let left = false;
      return () => {
        if (!left) depth--;
        left = true;
      };
    },
    async parallel<T>(tasks: (() => Promise<T>)[]) {
      const results = new Array<T>(tasks.length);
      let next = 0;
      const worker = async () => {
        while (next < tasks.length) {
          const index = next++;
          results[index] = await tasks[index]!();
        }
      };
      const lanes = Math.min(settings.max_dependency_concurrency, tasks.length);
      await Promise.all(Array.from({ length: lanes }, worker));
      return results;
    },
    checkCost(picos) {
      if (cap !== null && spent + picos > cap)
        throw new BudgetExceeded(
          'execution_cost',
          `max_execution_cost ${settings.max_execution_cost} would be exceeded`,
        );
    },
    addCost(picos) {
      spent += picos;
    },
    get spentPicos() {
      return spent;
    },
    get toolCalls() {
      return toolCalls;
    },
    get attempts() {
      return attempts;
    },
    retry<T>(node: (attempt: number) => Promise<T>, retryable: (error: unknown) => boolean): Promise<T> {
      return retryWithBackoff(node, {
        maxRetries: settings.max_node_retries,
        baseDelayMs: settings.retry_base_ms,
        retryable,
        remainingMs: remaining,
        beforeAttempt: () => {
          if (remaining() <= 0) throw new BudgetExceeded('latency', `max_latency_ms ${settings.max_latency_ms}`);
          attempts++;
        },
      });
    },
    dispose() {
      clearTimeout(timer);
    },
  };
}
