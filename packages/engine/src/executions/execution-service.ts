import {
  checkIdempotencyKey,
  currentTraceId,
  decodeCursor,
  type Executor,
  encodeCursor,
  fromJsonColumn,
  type IdempotentResponse,
  newTraceId,
  toBoolean,
  toIsoString,
} from '@keel/core';
import { loadAgent } from '../agents/agent-service.ts';
import { type AgentSettings, effectiveSettings } from '../agents/agent-settings.ts';
import type { EngineDb } from '../db/schema.ts';
import { resolveRunnableVersion } from '../flows/flow-service.ts';
import {
  type ClientCapabilities,
  clientAction,
  type ExecutionState,
  type FlowPlan,
  type NormalizedAction,
  type ResumeSignal,
  transition,
} from '../flows/index.ts';
import { activePolicy, admitRun, pinOf } from '../governance/governance-enforcement.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { loadActivePrompt } from '../prompts/prompt-service.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { flowExecutionEvent } from '../webhooks/events.ts';
import { inTransaction, runWrite } from '../write.ts';
import type { DeferredRow } from './execution-port.ts';
import {
  countLeasedByAgent,
  type ExecutionEventRow,
  type ExecutionRow,
  findExecution,
  insertEvent,
  insertExecution,
  listEvents,
  listExecutionRows,
  lockAgentAdmission,
  updateExecutionIf,
} from './execution-store.ts';
import { createExecutionWorker, type ExecutionWorker, hasCompensations } from './execution-worker.ts';

/** Retries of a retryable failure an execution allows unless the request says otherwise. */
export const DEFAULT_MAX_RETRIES = 3;

export interface ExecutionInput {
  flow_id: string;
  version?: number | undefined;
  agent_id?: string | undefined;
  input?: Record<string, unknown> | undefined;
  compensate_on_failure?: boolean | undefined;
  max_retries?: number | undefined;
  /** The chat session the execution belongs to (chat and execute through flows). */
  session_id?: string | undefined;
}

type Wait = { kind: string; wait_id: string; node_id: string; approval_id?: string; event?: string } & Record<
  string,
  unknown
>;

const json = <T>(value: unknown): T | null => (value === null || value === undefined ? null : fromJsonColumn<T>(value));

export function toExecutionView(row: ExecutionRow) {
  return {
    id: row.id,
    realm_id: row.realm_id,
    flow_id: row.flow_id,
    flow_version: row.flow_version,
    agent_id: row.agent_id,
    state: row.state as ExecutionState,
    input: fromJsonColumn<Record<string, unknown>>(row.input),
    action: json<Record<string, unknown>>(row.action),
    error: json<{ code: string; message: string; node_id: string | null; retry_at?: string }>(row.error),
    wait: json<Wait>(row.wait),
    usage: json<Record<string, unknown>>(row.usage),
    pinned: fromJsonColumn<Record<string, unknown>>(row.pinned),
    compensate_on_failure: toBoolean(row.compensate),
    compensation_pending: toBoolean(row.compensation_pending),
    cancel_requested: toBoolean(row.cancel_requested),
    attempts: row.attempts,
    max_retries: row.max_retries,
    run_at: toIsoString(row.run_at),
    trace_id: row.trace_id,
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
    started_at: row.started_at === null ? null : toIsoString(row.started_at),
    finished_at: row.finished_at === null ? null : toIsoString(row.finished_at),
  };
}

function eventView(row: ExecutionEventRow) {
  return {
    id: Number(row.id),
    type: row.type,
    data: fromJsonColumn<Record<string, unknown>>(row.data),
    created_at: toIsoString(row.created_at),
  };
}

/** Checks an execution input against the flow's input contract (required fields and field types). */
function checkInput(plan: FlowPlan, input: Record<string, unknown>): void {
  const contract = plan.contract.input;
  if (!contract) return;
  for (const field of contract.required ?? [])
    if (!Object.hasOwn(input, field) || input[field] === null)
      throw RuntimeErrors.invalid(`input.${field} is required by the flow's input contract`);
  for (const [field, value] of Object.entries(input)) {
    const declared = Object.hasOwn(contract.properties, field) ? contract.properties[field] : undefined;
    if (!declared || value === null) continue;
    const type = declared.type;
    const ok =
      type === 'array'
        ? Array.isArray(value)
        : type === 'object'
          ? typeof value === 'object' && !Array.isArray(value)
          : type === 'integer'
            ? Number.isInteger(value)
            : typeof value === type;
    if (!ok) throw RuntimeErrors.invalid(`input.${field} must be ${type === 'integer' ? 'an integer' : `a ${type}`}`);
  }
}

async function requireExecution(rt: RuntimeContext, realmId: string, id: string): Promise<ExecutionRow> {
  const row = await findExecution(rt.db, realmId, id.toLowerCase());
  if (!row) throw RuntimeErrors.notFound('Execution', id);
  return row;
}

export function wakeWorker(rt: RuntimeContext): void {
  rt.extensions.executions?.wake();
}

/** An execution about to be stored: its row for a creation time, and the write that stores it. */
export interface PreparedExecution {
  /** The agent settings pinned to it (the defaults without an agent). */
  settings: AgentSettings;
  row(now: string, extra?: { createdBy?: string; lease?: { owner: string; until: string } }): ExecutionRow;
}

/**
 * Resolves and checks what an execution of a flow pins: the active version (or a given published `version`), the
 * input against the flow's input contract, the agent's settings and active prompt version — so later changes never
 * alter a run in progress — and the realm policy active now. Throws the 4xx of a flow that cannot run, an invalid input or an unknown agent.
 */
export async function prepareExecution(
  rt: RuntimeContext,
  realmId: string,
  createdBy: string,
  input: ExecutionInput,
  options: { admitted?: boolean } = {},
): Promise<PreparedExecution> {
  const { version, plan } = await resolveRunnableVersion(rt, realmId, input.flow_id, input.version);
  // The realm policy active now is pinned to the execution: later activations never change a run in progress.
  const policy = await activePolicy(rt, realmId);
  // The quota counts the run here unless its caller (a chat turn) already did.
  if (!options.admitted) await admitRun(rt, realmId);
  const executionInput = input.input ?? {};
  checkInput(plan, executionInput);
  let settings: AgentSettings = effectiveSettings({});
  let prompt: { id: string; version: number } | null = null;
  let providerId: string | null = null;
  if (input.agent_id !== undefined) {
    const agent = await loadAgent(rt, realmId, input.agent_id);
    if (!agent) throw RuntimeErrors.notFound('Agent', input.agent_id);
    settings = agent.settings;
    providerId = agent.aiProviderId;
    if (agent.systemPromptId !== null) {
      const active = await loadActivePrompt(rt, realmId, agent.systemPromptId);
      if (active) prompt = { id: active.id, version: active.version };
    }
  }
  // Read here, in the request's own context: `row` runs inside the write path, whose group commit (SQLite) may
  // run it in the context of another request's or the worker's write.
  const traceId = currentTraceId() ?? newTraceId();
  return {
    settings,
    row: (now, extra = {}) => ({
      id: newId(),
      realm_id: realmId,
      flow_id: input.flow_id.toLowerCase(),
      flow_version: version,
      agent_id: input.agent_id?.toLowerCase() ?? null,
      session_id: input.session_id ?? null,
      state: extra.lease ? 'running' : 'queued',
      input: JSON.stringify(executionInput),
      settings: JSON.stringify(settings),
      pinned: JSON.stringify({
        flow: { id: input.flow_id.toLowerCase(), version, plan_hash: plan.hash },
        prompt,
        provider_id: providerId,
        policy: pinOf(policy),
      }),
      policy_version_id: policy?.id ?? null,
      signals: JSON.stringify({}),
      wait: null,
      action: null,
      error: null,
      usage: null,
      compensate: input.compensate_on_failure ?? true,
      compensation_pending: false,
      cancel_requested: false,
      attempts: 0,
      max_retries: input.max_retries ?? DEFAULT_MAX_RETRIES,
      max_concurrency: input.agent_id !== undefined ? settings.max_concurrency : null,
      claims: extra.lease ? 1 : 0,
      run_at: now,
      lease_owner: extra.lease?.owner ?? null,
      lease_expires_at: extra.lease?.until ?? null,
      // The request's W3C trace id: the worker runs the execution in the same trace.
      trace_id: traceId,
      created_by: extra.createdBy ?? createdBy,
      created_at: now,
      updated_at: now,
      started_at: extra.lease ? now : null,
      finished_at: null,
    }),
  };
}

/** Stores a prepared execution row with its `execution.queued` event (in the caller's transaction). */
export async function storeExecution(trx: Executor<EngineDb>, row: ExecutionRow, data: Record<string, unknown> = {}) {
  await insertExecutionRow(trx, row, data);
  return toExecutionView(row);
}

async function insertExecutionRow(trx: Executor<EngineDb>, row: ExecutionRow, data: Record<string, unknown>) {
  await insertExecution(trx, row);
  await insertEvent(trx, {
    execution_id: row.id,
    type: 'execution.queued',
    data: JSON.stringify({ state: row.state, flow_id: row.flow_id, flow_version: row.flow_version, ...data }),
    created_at: toIsoString(row.created_at),
  });
}

/**
 * Queues a durable execution of a flow: the active version (or a given published `version`), the agent's
 * settings and active prompt version are pinned to it, so later changes never alter a run in progress.
 */
export async function createExecution(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: ExecutionInput,
  idempotencyKey: unknown,
  options: {
    operation?: string;
    runner?: SyncRunner;
    /** The idempotency payload (default: `input`) and the answer's body (default: the execution view). */
    payload?: unknown;
    respond?: (view: ReturnType<typeof toExecutionView>) => unknown;
    /** The realm quota already counted this run (a chat turn queuing its flow). */
    admitted?: boolean;
    /** Called with the stored row once its transaction ran (not on a replay). */
    onStored?: (row: ExecutionRow) => void;
    /**
     * A synchronous run without an idempotency key or agent admission: the row is not stored here but handed over
     * with `deferred`, which the run stores with its first durable write (or before it first calls out).
     */
    onDeferred?: (row: ExecutionRow, deferred: DeferredRow) => void;
  } = {},
): Promise<IdempotentResponse<unknown>> {
  const realmId = requirePermission(principal, 'runtime:run');
  const key = checkIdempotencyKey(idempotencyKey, false);
  const prepared = await prepareExecution(rt, realmId, principal.identityId, input, { admitted: options.admitted });
  // A synchronous execute creates the execution leased to its runner, so no worker takes it before it starts.
  const lease = options.runner?.leaseFor(rt.clock());
  const runner = options.runner;
  if (options.onDeferred && runner && lease && key === undefined && input.agent_id === undefined) {
    const row = prepared.row(nowIso(rt), { lease });
    const deferred: DeferredRow = {
      stored: false,
      async store(trx) {
        // Stored with a lease from now: the run may have taken a while before its first durable write.
        await insertExecutionRow(
          trx,
          { ...row, lease_expires_at: runner.leaseFor(rt.clock()).until },
          { mode: 'sync' },
        );
        deferred.stored = true;
      },
    };
    options.onDeferred(row, deferred);
    return { statusCode: 202, body: { id: row.id }, replayed: false };
  }
  const operation = options.operation ?? 'POST /api/v1/runtime/executions';
  let stored: ExecutionRow | undefined;
  const outcome = await runWrite(
    rt.engine,
    key === undefined
      ? undefined
      : { scope: `${principal.keyId}|${operation}`, key, payload: options.payload ?? input },
    async (trx) => {
      const now = nowIso(rt);
      if (lease && input.agent_id !== undefined) {
        await admitSync(trx, input.agent_id.toLowerCase(), prepared.settings, now);
      }
      const row = prepared.row(now, lease ? { lease } : {});
      await insertExecutionRow(trx, row, lease ? { mode: 'sync' } : {});
      stored = row;
      // A synchronous run answers the execution's state after the run, so its creation answers only the id.
      if (options.runner && !options.respond) return { statusCode: 202, body: { id: row.id } };
      const view = toExecutionView(row);
      return { statusCode: 202, body: options.respond ? options.respond(view) : view };
    },
  );
  if (stored && !outcome.replayed) options.onStored?.(stored);
  if (!outcome.replayed && !options.runner) wakeWorker(rt);
  return outcome;
}

/**
 * A synchronous execute starts at once only while its agent runs fewer than `max_concurrency` executions (live
 * leases on every instance, counted under the admission lock): beyond, 429 `RUNTIME_CONCURRENCY_LIMIT` with
 * `Retry-After: 1`, nothing stored. Queued executions wait instead (workers admit them when there is room).
 */
async function admitSync(trx: Executor<EngineDb>, agentId: string, settings: AgentSettings, now: string) {
  await lockAgentAdmission(trx);
  const running = (await countLeasedByAgent(trx, [agentId], now)).get(agentId) ?? 0;
  if (running >= settings.max_concurrency)
    throw Object.assign(RuntimeErrors.concurrency(agentId, running), { headers: { 'retry-after': '1' } });
}

const inlineRunners = new WeakMap<RuntimeContext, ExecutionWorker>();

type SyncRunner = Pick<ExecutionWorker, 'runOne' | 'leaseFor'>;

/** The worker that runs synchronous executes: this process's worker, or one that only runs those. */
function syncRunner(rt: RuntimeContext): SyncRunner {
  if (rt.extensions.executions) return rt.extensions.executions;
  let runner = inlineRunners.get(rt);
  if (!runner) {
    runner = createExecutionWorker(rt, { ...rt.config.executions, concurrency: 1 });
    inlineRunners.set(rt, runner);
  }
  return runner;
}

/**
 * Executes a flow synchronously (`POST /flows/{id}/execute`): the execution is pinned like a queued one and run at
 * once in this process, step by step through the same store. Without an idempotency key or agent admission its row
 * is stored with the run's first durable write, or before the run first calls out (`DeferredRow`): an all-pure run
 * commits once; otherwise the row is stored (committed) before the run starts; the answer is its state when the run
 * stopped — succeeded, failed, or waiting (an approval, a delay, an event), from where workers continue it. A
 * replay of an `Idempotency-Key` answers the same execution's current state.
 */
export async function executeFlow(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  flowId: string,
  input: Omit<ExecutionInput, 'flow_id'>,
  idempotencyKey: unknown,
  options: {
    /** The realm quota already counted this run (a synchronous chat turn through the flow). */
    admitted?: boolean;
  } = {},
) {
  const runner = syncRunner(rt);
  let stored: ExecutionRow | undefined;
  let deferred: DeferredRow | undefined;
  const created = await createExecution(rt, principal, { ...input, flow_id: flowId }, idempotencyKey, {
    operation: `POST /api/v1/runtime/flows/${flowId.toLowerCase()}/execute`,
    runner,
    onStored: (row) => {
      stored = row;
    },
    onDeferred: (row, unstored) => {
      stored = row;
      deferred = unstored;
    },
    admitted: options.admitted,
  });
  if (created.statusCode >= 400) return created;
  const id = (created.body as { id: string }).id;
  if (!created.replayed) {
    // The row just stored is handed to the run, and the run answers the row it left: no read-back on this path.
    const ran = await runner.runOne(id, stored, deferred);
    if (ran === false) wakeWorker(rt);
    else if (ran.row) {
      requirePermission(principal, 'config:read');
      return { statusCode: 200, body: toExecutionView(ran.row), replayed: false };
    }
  }
  return { statusCode: 200, body: await getExecution(rt, principal, id), replayed: created.replayed };
}

/** The normalized action an execution answers with: its stored action, else an ERROR (cancelled, compensated). */
export function executionAction(view: {
  state: string;
  action: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
}): NormalizedAction {
  if (view.action) return view.action as unknown as NormalizedAction;
  return {
    type: 'ERROR',
    content: view.error?.message ?? `The flow stopped (${view.state})`,
    data: { code: view.error?.code ?? 'FLOW_FAILED', retryable: view.state === 'retryable_failure' },
    metadata: {},
  };
}

export async function listExecutions(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined; state?: string | undefined; flow_id?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const invalid = () => RuntimeErrors.invalid('cursor is not a cursor of this list');
  const position = decodeCursor('executions', query.cursor, ['string'] as const, invalid);
  const rows = await listExecutionRows(rt.db, realmId, {
    limit: query.limit,
    before: position?.[0],
    state: query.state,
    flowId: query.flow_id?.toLowerCase(),
  });
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(toExecutionView),
    next_cursor: rows.length > query.limit ? encodeCursor('executions', [page.at(-1)!.id]) : null,
  };
}

export async function getExecution(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:read');
  return toExecutionView(await requireExecution(rt, realmId, id));
}

/**
 * One compare-and-set on an execution with its event: `set` applies only while the row is still in `row.state`
 * (what it was read in), and the event is written in the same transaction. Answers whether it applied.
 */
async function updateWithEvent(
  rt: RuntimeContext,
  row: ExecutionRow,
  set: Record<string, unknown>,
  event: { type: string; data: Record<string, unknown> },
): Promise<boolean> {
  const now = nowIso(rt);
  return inTransaction(rt.engine, async (trx, sink) => {
    const changed = await updateExecutionIf(trx, row.id, { states: [row.state] }, { ...set, updated_at: now });
    if (changed) {
      await insertEvent(trx, {
        execution_id: row.id,
        type: event.type,
        data: JSON.stringify({ state: set.state ?? row.state, ...event.data }),
        created_at: now,
      });
      if (typeof set.state === 'string') sink.emitRuntime(flowExecutionEvent(row, set.state, null, now));
    }
    return changed;
  });
}

async function reread(rt: RuntimeContext, row: ExecutionRow) {
  return toExecutionView((await findExecution(rt.db, row.realm_id, row.id))!);
}

/**
 * Moves an execution from the state it was read in to `to` (a legal move of the state table, else 409), with
 * `set` and an event: a concurrent move makes it a 409 instead of a lost update.
 */
async function move(
  rt: RuntimeContext,
  row: ExecutionRow,
  to: ExecutionState,
  set: Record<string, unknown>,
  event: { type: string; data: Record<string, unknown> },
) {
  transition(row.state as ExecutionState, to);
  if (!(await updateWithEvent(rt, row, { ...set, state: to }, event)))
    throw RuntimeErrors.conflict(`Execution ${row.id} changed meanwhile: read it and try again`);
  wakeWorker(rt);
  return reread(rt, row);
}

/**
 * Cancels an execution. Queued, waiting and retryable executions are cancelled at once; a running one is asked to
 * stop (`cancel_requested`), and its worker cancels it before its next step. With `compensate_on_failure`, the
 * completed steps' compensations then run (newest first) and the execution ends `compensated`.
 */
export async function cancelExecution(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await requireExecution(rt, realmId, id);
  if (row.state === 'running') {
    const asked = await updateWithEvent(
      rt,
      row,
      { cancel_requested: true },
      { type: 'execution.cancel_requested', data: { requested_by: principal.identityId } },
    );
    if (!asked) return cancelExecution(rt, principal, id);
    return reread(rt, row);
  }
  const pending = toBoolean(row.compensate) && (await hasCompensations(rt, row.id));
  const now = nowIso(rt);
  return move(
    rt,
    row,
    'cancelled',
    { cancel_requested: true, compensation_pending: pending, run_at: now, finished_at: now, wait: null },
    { type: 'execution.cancelled', data: { requested_by: principal.identityId } },
  );
}

/** Queues a retryable execution again after `retry_base_ms × 2^attempts`; 409 once `max_retries` are used. */
export async function retryExecution(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await requireExecution(rt, realmId, id);
  transition(row.state as ExecutionState, 'queued');
  if (row.state !== 'retryable_failure') throw RuntimeErrors.conflict(`Execution ${row.id} is ${row.state}`);
  if (row.attempts >= row.max_retries)
    throw RuntimeErrors.limit(`Execution ${row.id} used its ${row.max_retries} retries`);
  const settings = fromJsonColumn<AgentSettings>(row.settings);
  // After a realm-quota refusal, not before the quota window ends (`error.retry_at`).
  const quotaClears = Date.parse(json<{ retry_at?: string }>(row.error)?.retry_at ?? '');
  const backoff = rt.clock() + settings.retry_base_ms * 2 ** row.attempts;
  const runAt = new Date(Number.isNaN(quotaClears) ? backoff : Math.max(backoff, quotaClears)).toISOString();
  return move(
    rt,
    row,
    'queued',
    { attempts: row.attempts + 1, run_at: runAt, error: null },
    { type: 'execution.retry', data: { attempt: row.attempts + 1, run_at: runAt } },
  );
}

/**
 * Resumes an execution queued on a wait: an event wait with the event (`event` must name the awaited event) and
 * its payload, or a delay (it continues now instead of at its end). 409 for anything else.
 */
export async function resumeExecution(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: { event?: string | undefined; payload?: Record<string, unknown> | undefined },
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await requireExecution(rt, realmId, id);
  const wait = json<Wait>(row.wait);
  if (row.state !== 'queued' || wait === null || wait.kind === 'approval')
    throw ExecutionResumeErrors.notWaiting(row.id);
  const signals = fromJsonColumn<Record<string, ResumeSignal>>(row.signals);
  if (wait.kind === 'event') {
    if (input.event !== undefined && input.event !== wait.event)
      throw RuntimeErrors.conflict(`Execution ${row.id} waits for the event ${wait.event}, not ${input.event}`);
    signals[wait.wait_id] = { kind: 'event', payload: (input.payload ?? {}) as never };
  }
  const moved = await updateWithEvent(
    rt,
    row,
    { signals: JSON.stringify(signals), run_at: nowIso(rt) },
    {
      type: 'execution.resumed',
      data: { wait_id: wait.wait_id, kind: wait.kind, resumed_by: principal.identityId },
    },
  );
  if (!moved) throw RuntimeErrors.conflict(`Execution ${row.id} changed meanwhile: read it and try again`);
  wakeWorker(rt);
  return reread(rt, row);
}

/** Approves or denies the approval an execution waits for; it then continues (on `next` or `on_deny`). */
export async function decideApproval(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  approvalId: string,
  approved: boolean,
  input: { reason?: string | undefined },
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await requireExecution(rt, realmId, id);
  const wait = json<Wait>(row.wait);
  if (wait === null || wait.approval_id !== approvalId) throw RuntimeErrors.notFound('Approval', approvalId);
  if (row.state !== 'waiting_for_approval') throw RuntimeErrors.conflict(`Approval ${approvalId} was decided`);
  const signals = fromJsonColumn<Record<string, ResumeSignal>>(row.signals);
  signals[wait.wait_id] = {
    kind: 'approval',
    approved,
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
  };
  // Running without a lease: the next worker poll claims it at once and the run continues after the approval.
  return move(
    rt,
    row,
    'running',
    { signals: JSON.stringify(signals), wait: null, lease_owner: null, lease_expires_at: new Date(0).toISOString() },
    {
      type: approved ? 'approval.approved' : 'approval.denied',
      data: {
        approval_id: approvalId,
        decided_by: principal.identityId,
        ...(input.reason ? { reason: input.reason } : {}),
      },
    },
  );
}

/** Events of an execution after event id `after` (oldest first, at most `limit`). */
export async function listExecutionEvents(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  after: number,
  limit: number,
) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await requireExecution(rt, realmId, id);
  const events = await listEvents(rt.db, row.id, after, limit);
  return { execution: toExecutionView(row), events: events.map(eventView) };
}

/**
 * The normalized actions an execution produced, oldest first (approval requests, the final action), each as the
 * client receives it: handoff fields stripped and the downgrade rules applied for `capabilities`.
 */
export async function listExecutionActions(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  capabilities: ClientCapabilities | undefined,
) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await requireExecution(rt, realmId, id);
  const data: { event_id: number; state: string; action: Record<string, unknown>; created_at: string }[] = [];
  let after = 0;
  for (;;) {
    const events = await listEvents(rt.db, row.id, after, 500);
    for (const event of events) {
      const view = eventView(event);
      const action = view.data.action as NormalizedAction | undefined;
      if (action && typeof action === 'object')
        data.push({
          event_id: view.id,
          state: String(view.data.state),
          action: clientAction(action, capabilities) as unknown as Record<string, unknown>,
          created_at: view.created_at,
        });
    }
    if (events.length < 500) break;
    after = Number(events.at(-1)!.id);
  }
  return { execution_id: row.id, state: row.state as ExecutionState, data };
}

export const ExecutionResumeErrors = {
  notWaiting: (id: string) =>
    RuntimeErrors.conflict(`Execution ${id} is not waiting on an event or a delay: nothing to resume`),
};
