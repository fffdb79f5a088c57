import { AppError, type Executor, fromJsonColumn } from '@keel/core';
import { ModelCallError } from '@keel/models';
import type { Insertable } from 'kysely';
import { loadAgent } from '../agents/agent-service.ts';
import type { EngineDb } from '../db/schema.ts';
import {
  type DecideCall,
  type FlowPlan,
  type FlowPort,
  FlowPortError,
  type FlowStepRecord,
  type GenerateCall,
  type PortResult,
  PURE_NODE_TYPES,
  QUOTA_EXCEEDED,
  type ResourceCall,
  type SpecialistCall,
  type ToolCall,
} from '../flows/index.ts';
import {
  admitModelCall,
  chargeRun,
  checkProviderAllowed,
  pinnedPolicy,
  quotaRetryAfter,
} from '../governance/governance-enforcement.ts';
import type { ChatTurn } from '../providers/model-clients.ts';
import { costPicos } from '../providers/pricing.ts';
import { loadProvider } from '../providers/provider-service.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { type MeteredUse, recordMetered } from '../usage/usage-service.ts';
import { inTransaction } from '../write.ts';
import { insertEvent, insertSteps, listSteps } from './execution-store.ts';
import type { FlowExecutionEventTable } from './execution-tables.ts';

/** Who an execution runs for: its realm and (optionally) the agent whose provider serves its model nodes. */
export interface ExecutionScope {
  executionId: string;
  realmId: string;
  agentId: string | null;
  /**
   * Nodes of the execution's own plan that run only after a granted approval (`approvalGatedNodes`): the invoker
   * lets a high-impact tool run only from one of them (never from a subflow's node).
   */
  approvalGated: ReadonlySet<string>;
  /** The governance policy version pinned to the execution at creation (its tool rules apply to every step). */
  policyVersionId: string | null;
  /** Who created the execution and its chat session (usage records of its steps name them). */
  createdBy: string;
  sessionId: string | null;
  /**
   * Set by the store port for the invoker: a tool call made for the step `stepKey` (its usage record is written
   * with that step, or with the execution's final state when the step failed).
   */
  meter?: ((stepKey: string, use: MeteredUse) => void) | undefined;
}

/**
 * Where a flow's tool and resource nodes go. The tool-server registry plugs in here (registered MCP tools); with
 * nothing registered, every tool and resource is unknown and its node fails closed (TOOL_UNAVAILABLE, not
 * retryable). A write call carries `call.idempotencyKey`, stable for the execution and step across retries and
 * restarts: the invoker must pass it on so the tool side applies the effect once.
 */
export interface FlowToolInvoker {
  callTool(scope: ExecutionScope, call: ToolCall): Promise<PortResult>;
  readResource(scope: ExecutionScope, call: ResourceCall): Promise<PortResult>;
}

const unavailable = (what: string) =>
  new FlowPortError('TOOL_UNAVAILABLE', `${what} is not available to this realm's flows`, false);

function modelFailure(error: unknown): FlowPortError {
  if (error instanceof FlowPortError) return error;
  if (error instanceof ModelCallError)
    return new FlowPortError(error.timedOut ? 'NODE_TIMEOUT' : 'MODEL_FAILED', error.message, error.retryable);
  return new FlowPortError('MODEL_FAILED', 'the model call failed', true);
}

/**
 * A realm quota refusal as the flow port's error: QUOTA_EXCEEDED, retryable at the window's end (the executor then
 * stops the run as a retryable failure; see `FlowPortError.retryAt`); undefined for any other error.
 */
export function quotaPortError(error: unknown, now: number): FlowPortError | undefined {
  const seconds = quotaRetryAfter(error);
  if (seconds === undefined) return undefined;
  return new FlowPortError(
    QUOTA_EXCEEDED,
    (error as Error).message,
    true,
    new Date(now + seconds * 1000).toISOString(),
  );
}

/**
 * Refuses (GOVERNANCE_POLICY_DENIED, not retryable, like a chat turn's 403) a provider type that the execution's
 * pinned policy version does not allow and no approved `provider_type` allowlist request adds.
 */
async function checkPinnedProvider(
  rt: RuntimeContext,
  scope: Pick<ExecutionScope, 'realmId' | 'policyVersionId'>,
  providerType: string,
): Promise<void> {
  const policy = await pinnedPolicy(rt, scope.realmId, scope.policyVersionId);
  try {
    await checkProviderAllowed(rt, scope.realmId, policy, providerType);
  } catch (error) {
    if (error instanceof AppError && error.code === 'GOVERNANCE_POLICY_DENIED')
      throw new FlowPortError(error.code, error.message, false);
    throw error;
  }
}

/**
 * A model answer of an agent's provider for one node; its cost in picos. The pinned policy's provider types are
 * checked first, then the realm quota (tokens and cost not used up, else QUOTA_EXCEEDED), and nothing is called
 * when either refuses; the quota is charged with the answer's tokens and cost, the answer's usage goes to `meter`.
 */
async function complete(
  rt: RuntimeContext,
  scope: Pick<ExecutionScope, 'realmId' | 'policyVersionId'>,
  agentId: string | null,
  messages: ChatTurn[],
  call: { signal: AbortSignal; stepKey: string },
  timeoutMs: number,
  meter: (stepKey: string, use: MeteredUse) => void,
): Promise<{ content: string; costPicos: bigint }> {
  const { realmId } = scope;
  if (agentId === null)
    throw new FlowPortError('AGENT_REQUIRED', 'a model node needs the execution to name an agent', false);
  const agent = await loadAgent(rt, realmId, agentId);
  if (!agent) throw new FlowPortError('AGENT_REQUIRED', 'the agent of the execution no longer exists', false);
  const provider = await loadProvider(rt, realmId, agent.aiProviderId);
  if (!provider) throw new FlowPortError('AGENT_REQUIRED', 'the agent has no provider', false);
  await checkPinnedProvider(rt, scope, provider.type);
  try {
    await admitModelCall(rt, realmId);
  } catch (error) {
    throw quotaPortError(error, rt.clock()) ?? error;
  }
  let answer: Awaited<ReturnType<RuntimeContext['models']['complete']>>;
  try {
    answer = await rt.models.complete(provider, messages, { timeoutMs, signal: call.signal });
  } catch (error) {
    throw modelFailure(error);
  }
  const tokens = { inputTokens: answer.inputTokens, outputTokens: answer.outputTokens };
  const picos = costPicos(provider.prices, tokens);
  meter(call.stepKey, {
    type: 'ai',
    providerId: provider.id,
    model: provider.textModel,
    agentId: agent.id,
    ...tokens,
    costPicos: picos,
    currency: provider.currency,
  });
  await chargeRun(rt, realmId, { tokens: answer.inputTokens + answer.outputTokens, costPicos: picos });
  return { content: answer.content, costPicos: picos };
}

const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * An execution row a synchronous run has not stored yet (`executeFlow` without an idempotency key or agent
 * admission): it is written in the run's first durable write (a step that is not pure, or the final state), or on
 * its own just before the run first calls out (a tool, a resource, a model, an agent, a backoff wait), so an all-pure
 * run stores its row, steps, events and final state in one transaction and nothing outside ever sees an execution
 * that is not stored.
 */
export interface DeferredRow {
  /** Whether `store` ran (the row is written in that transaction). */
  stored: boolean;
  /** Inserts the row and its `execution.queued` event in `trx`; sets `stored`. */
  store(trx: Executor<EngineDb>): Promise<void>;
}

/** The store port: the executor's port plus the steps it holds back until the next durable write. */
export interface StorePort extends FlowPort {
  /** Writes the deferred execution row (if any and not yet stored) in `trx`, after the writes in flight. */
  storeRow(trx: Executor<EngineDb>): Promise<void>;
  /**
   * Writes the held-back steps in `trx` (the worker's final state change), in save order, with `trailing` (the
   * final state's event) after their events in the same statement, and the usage records of calls whose step failed.
   */
  flushPending(trx: Executor<EngineDb>, trailing?: Insertable<FlowExecutionEventTable>): Promise<void>;
  /** When the last realm-quota refusal of this run clears (QUOTA_EXCEEDED), if there was one. */
  quotaRefusedUntil(): string | undefined;
}

/**
 * The executor's port backed by the store: `saveStep` inserts the step and its event in one transaction on the
 * write path (one at a time per execution, so event ids grow in save order), `loadSteps` reads the log back,
 * model nodes call the agent's provider, tool and resource nodes go to the registered invoker.
 *
 * Steps of pure nodes (input, transform, condition, output) are held back and written with the next step that is not
 * pure, or with the execution's final state: they call nothing outside, so if the process dies first they run
 * again from the stored log with the same result, and every step that calls something (a tool, a model, an agent)
 * or waits is stored, with everything before it, before the next step starts. `fresh` skips reading the log of
 * an execution that has never run.
 */
export function createStorePort(
  rt: RuntimeContext,
  scope: ExecutionScope,
  options: {
    plans: ReadonlyMap<string, FlowPlan>;
    tools: FlowToolInvoker | undefined;
    nodeTimeoutMs: number;
    fresh?: boolean;
    /** The execution row when it is not stored yet (see `DeferredRow`). */
    deferred?: DeferredRow | undefined;
  },
): StorePort {
  const deferred = options.deferred;
  // Usage of model and tool calls by step key, until the step (or the execution's final state) is stored.
  const metered = new Map<string, MeteredUse[]>();
  const meter = (stepKey: string, use: MeteredUse) => {
    const uses = metered.get(stepKey);
    if (uses) uses.push(use);
    else metered.set(stepKey, [use]);
  };
  const invokerScope: ExecutionScope = { ...scope, meter };
  /** Writes the metered usage of these step keys (all of it without keys) in `trx`, with the step records. */
  const writeUsage = async (trx: Executor<EngineDb>, keys: readonly string[] | undefined, at: string) => {
    const uses: Parameters<typeof recordMetered>[1][number][] = [];
    for (const key of keys ?? [...metered.keys()]) {
      const list = metered.get(key);
      if (!list) continue;
      metered.delete(key);
      const context = {
        realmId: scope.realmId,
        source: 'flow' as const,
        sessionId: scope.sessionId,
        createdBy: scope.createdBy,
        at,
        flowExecutionId: scope.executionId,
        stepKey: key,
      };
      for (const use of list) uses.push({ use, context });
    }
    await recordMetered(trx, uses);
  };
  /** A model node's answer: the agent's provider with the node's instructions as the system turn. */
  const answer = async (
    agentId: string | null,
    call: { instructions: string; input: unknown; signal: AbortSignal; stepKey: string },
  ): Promise<PortResult> => {
    const messages: ChatTurn[] = [
      { role: 'system', content: call.instructions },
      { role: 'user', content: asText(call.input) },
    ];
    const result = await complete(rt, scope, agentId, messages, call, options.nodeTimeoutMs, meter);
    return { output: result.content, costPicos: result.costPicos };
  };
  /** An ai_decision or supervisor round: the model picks one of the choices (parsed leniently). */
  const decide = async (call: DecideCall) => {
    const choices = call.choices.map((choice) => `- ${choice.key}: ${choice.description}`).join('\n');
    const answer = await complete(
      rt,
      scope,
      scope.agentId,
      [
        {
          role: 'system',
          content: `${call.instructions}\nChoose exactly one of these keys:\n${choices}\nAnswer with only a JSON object {"choice": "<key>", "confidence": <0..1>}.`,
        },
        { role: 'user', content: asText(call.input) },
      ],
      call,
      options.nodeTimeoutMs,
      meter,
    );
    let parsed: { choice?: unknown; confidence?: unknown } = {};
    try {
      parsed = JSON.parse(answer.content.trim()) as typeof parsed;
    } catch {
      // Not JSON: resolveDecision takes the fallback choice (unknown_choice).
    }
    return {
      choice: typeof parsed.choice === 'string' ? parsed.choice : '',
      confidence: typeof parsed.confidence === 'number' ? parsed.confidence : 0,
      costPicos: answer.costPicos,
    };
  };
  let seq = 0;
  let saving: Promise<unknown> = Promise.resolve();
  let pending: FlowStepRecord[] = [];
  let refusedUntil: string | undefined;
  /** Remembers when a realm-quota refusal of a call clears (the worker stores it as the failure's `retry_at`). */
  const watchQuota = <T>(call: Promise<T>): Promise<T> =>
    call.catch((error: unknown) => {
      if (error instanceof FlowPortError && error.retryAt !== undefined) refusedUntil = error.retryAt;
      throw error;
    });
  const write = async (
    trx: Executor<EngineDb>,
    records: FlowStepRecord[],
    trailing?: Insertable<FlowExecutionEventTable>,
  ) => {
    if (records.length === 0) {
      if (trailing) await insertEvent(trx, trailing);
      return;
    }
    const now = new Date(rt.clock()).toISOString();
    // A step's usage records are stored in the transaction that stores the step: counted once, never without it.
    if (metered.size > 0)
      await writeUsage(
        trx,
        records.map((record) => record.key),
        now,
      );
    await insertSteps(
      trx,
      records.map((record) => ({
        execution_id: scope.executionId,
        key: record.key,
        seq: ++seq,
        record: JSON.stringify(record),
        created_at: now,
      })),
    );
    const events: Insertable<FlowExecutionEventTable>[] = records.map((record) => ({
      execution_id: scope.executionId,
      type: `step.${record.phase}`,
      data: JSON.stringify({
        key: record.key,
        node_id: record.node_id,
        node_type: record.type,
        attempts: record.attempts,
        tool_calls: record.tool_calls,
      }),
      created_at: now,
    }));
    if (trailing) events.push(trailing);
    await insertEvent(trx, events);
  };
  /** Before the run calls out: the deferred row is committed first (on the write chain, after the writes in flight). */
  const beforeCallOut = (): Promise<void> => {
    if (!deferred || deferred.stored) return Promise.resolve();
    const store = saving.then(() =>
      deferred.stored ? undefined : inTransaction(rt.engine, (trx) => deferred.store(trx)),
    );
    saving = store.catch(() => undefined);
    return store;
  };
  const callingOut =
    <A extends unknown[], T>(call: (...args: A) => Promise<T>) =>
    (...args: A): Promise<T> =>
      beforeCallOut().then(() => call(...args));
  return {
    async loadSteps(executionId) {
      if (options.fresh) return [];
      const rows = await listSteps(rt.db, executionId);
      seq = rows.reduce((max, row) => Math.max(max, row.seq), 0);
      return rows.map((row) => fromJsonColumn<FlowStepRecord>(row.record));
    },
    saveStep(_executionId, record) {
      if (record.phase === 'done' && PURE_NODE_TYPES.has(record.type)) {
        pending.push(record);
        return Promise.resolve();
      }
      const save = saving.then(() => {
        const records = [...pending, record];
        pending = [];
        return inTransaction(rt.engine, async (trx) => {
          if (deferred && !deferred.stored) await deferred.store(trx);
          await write(trx, records);
        });
      });
      saving = save.catch(() => undefined);
      return save;
    },
    async storeRow(trx) {
      await saving;
      if (deferred && !deferred.stored) await deferred.store(trx);
    },
    async flushPending(trx, trailing) {
      await saving;
      const records = pending;
      pending = [];
      await write(trx, records, trailing);
      // Calls of steps that failed (no step record): stored with the final state, so they are counted too.
      if (metered.size > 0) await writeUsage(trx, undefined, new Date(rt.clock()).toISOString());
    },
    quotaRefusedUntil: () => refusedUntil,
    callTool: callingOut((call: ToolCall) =>
      options.tools
        ? watchQuota(options.tools.callTool(invokerScope, call))
        : Promise.reject(unavailable(`tool ${call.tool}`)),
    ),
    readResource: callingOut((call: ResourceCall) =>
      options.tools
        ? options.tools.readResource(invokerScope, call)
        : Promise.reject(unavailable(`resource ${call.resource}`)),
    ),
    generate: callingOut((call: GenerateCall) => watchQuota(answer(scope.agentId, call))),
    decide: callingOut((call: DecideCall) => watchQuota(decide(call))),
    runSpecialist: callingOut((call: SpecialistCall) => watchQuota(answer(call.agentId, call))),
    loadPlan: async (flowId, version) => options.plans.get(`${flowId}@${version}`),
    now: () => rt.clock(),
    sleep: callingOut(
      (ms: number, signal: AbortSignal) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          signal.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              reject(signal.reason);
            },
            { once: true },
          );
        }),
    ),
  };
}
