import { randomBytes } from 'node:crypto';
import {
  continueTrace,
  createLoopHealth,
  fromJsonColumn,
  isTraceId,
  newTraceId,
  toBoolean,
  withSpan,
} from '@keel/core';
import type { AgentSettings } from '../agents/agent-settings.ts';
import { loadPublishedPlan, subflowPlans } from '../flows/flow-service.ts';
import {
  approvalGatedNodes,
  createFlowExecutor,
  type FlowRunOutcome,
  type FlowStepRecord,
  QUOTA_EXCEEDED,
  type ResumeSignal,
} from '../flows/index.ts';
import { actionAllowed, pinnedPolicy } from '../governance/governance-enforcement.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { flowExecutionEvent } from '../webhooks/events.ts';
import { inTransaction } from '../write.ts';
import { approvalId } from './execution-actions.ts';
import { createStorePort, type DeferredRow, type FlowToolInvoker, type StorePort } from './execution-port.ts';
import {
  claimExecutions,
  claimQueuedExecution,
  type ExecutionRow,
  findExecutionById,
  insertEvent,
  listSteps,
  renewLease,
  updateExecutionIf,
} from './execution-store.ts';

/** Whether an execution's log holds a completed step with a compensation (so there is something to undo). */
export async function hasCompensations(rt: RuntimeContext, executionId: string): Promise<boolean> {
  const steps = await listSteps(rt.db, executionId);
  return steps.some((step) => fromJsonColumn<FlowStepRecord>(step.record).compensation !== null);
}

/** When a wait for an event without a timeout resumes: never by itself (only `resume` or a cancel moves it). */
export const NEVER = '9999-12-31T23:59:59.999Z';

export interface ExecutionWorkerOptions {
  /** Executions run at once by this worker. */
  concurrency: number;
  /** How long a claim lasts without renewal; a worker that dies loses its executions after this. */
  leaseMs: number;
  /** How often an idle worker looks for due executions (a queue write in this process wakes it at once). */
  pollMs: number;
  /** Tool and resource calls (the registry's invoker; undefined: every tool is unavailable). */
  tools?: FlowToolInvoker | undefined;
  /** Names this worker in leases (default: a random id). */
  workerId?: string;
}

export interface ExecutionWorker {
  readonly id: string;
  start(): void;
  /** Looks for due executions now. */
  wake(): void;
  /**
   * Runs one execution in this process now (a synchronous execute): one created leased to this worker
   * (`leaseFor`; `created` is the row just inserted, so it is not read back), or a queued one it claims. Resolves
   * once the run stopped (succeeded, failed, or waiting) with the row as this worker left it (undefined when it
   * did not write the outcome, e.g. the lease was lost), false when another worker had taken it. With `deferred`,
   * `created` is not stored yet: the run stores it with its first durable write or before it first calls out.
   */
  runOne(executionId: string, created?: ExecutionRow, deferred?: DeferredRow): Promise<RunOneResult>;
  /** A lease for an execution created to be run by `runOne` at once: no other worker takes it meanwhile. */
  leaseFor(now: number): { owner: string; until: string };
  /** Stops claiming, waits for runs in flight to stop (their leases are released). */
  stop(): Promise<void>;
  check(): true | { reason: string };
}

/** What `runOne` answers: false when another worker had the execution, else the row after the run (if known). */
export type RunOneResult = false | { row: ExecutionRow | undefined };

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The execution worker: claims due executions with a lease (FOR UPDATE SKIP LOCKED on PostgreSQL, a conditional
 * update on SQLite's single writer), renews the lease while it runs them, and moves each row to the outcome's
 * state with a compare-and-set that holds only while it still owns the lease. A worker that dies stops renewing;
 * once its lease expires another worker claims the execution and the executor replays the saved steps, so
 * completed steps (and their side effects) never run twice.
 */
export function createExecutionWorker(rt: RuntimeContext, options: ExecutionWorkerOptions): ExecutionWorker {
  const id = options.workerId ?? `w_${randomBytes(8).toString('hex')}`;
  const health = createLoopHealth('flow execution worker', rt.log);
  const inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> | undefined;
  let again = false;

  const schedule = (ms: number) => {
    if (!running) return;
    clearTimeout(timer);
    timer = setTimeout(() => void poll(), ms);
  };

  async function poll(): Promise<void> {
    if (!running) return;
    if (polling) {
      again = true;
      return;
    }
    polling = (async () => {
      // Yield first: the finally below must never run before `polling` is assigned.
      await Promise.resolve();
      let delay = options.pollMs;
      try {
        do {
          again = false;
          const room = options.concurrency - inFlight.size;
          if (room <= 0) break;
          const now = rt.clock();
          const rows = await inTransaction(rt.engine, (trx) =>
            claimExecutions(trx, { owner: id, now: iso(now), leaseUntil: iso(now + options.leaseMs), limit: room }),
          );
          for (const row of rows) start(row);
          if (rows.length === room) again = true;
        } while (again && running);
        health.succeeded();
      } catch (error) {
        delay = health.failed(error);
      } finally {
        polling = undefined;
        schedule(delay);
      }
    })();
    return polling;
  }

  function start(row: ExecutionRow): void {
    const controller = new AbortController();
    const done = runClaimed(row, controller)
      .then(
        () => undefined,
        (error: unknown) => {
          rt.log.warn({ err: error, executionId: row.id }, 'flow execution run stopped; its lease will expire');
        },
      )
      .finally(() => {
        inFlight.delete(row.id);
        if (running) void poll();
      });
    inFlight.set(row.id, { controller, done });
  }

  /**
   * Runs a claimed execution as a span of the trace of the request that queued it (provider and tool calls join
   * it); answers the row as the run left it when it wrote the outcome.
   */
  function runClaimed(
    row: ExecutionRow,
    stopped: AbortController,
    deferred?: DeferredRow,
  ): Promise<ExecutionRow | undefined> {
    const run = () =>
      withSpan('execution.run', { 'keel.execution.id': row.id, 'keel.realm.id': row.realm_id }, () =>
        runExecution(row, stopped, deferred),
      );
    return continueTrace(isTraceId(row.trace_id) ? row.trace_id : newTraceId(), row.realm_id, run);
  }

  async function runExecution(
    row: ExecutionRow,
    stopped: AbortController,
    deferred: DeferredRow | undefined,
  ): Promise<ExecutionRow | undefined> {
    const cancel = new AbortController();
    const lost = new AbortController();
    const abortAll = () => cancel.abort(new Error('worker stopping'));
    stopped.signal.addEventListener('abort', abortAll, { once: true });
    // A cancelled or failed execution with compensation pending is claimed only to run its compensations: the run
    // replays the log and stops before the first step not yet done, then undoes the completed ones newest first.
    const compensating = row.state === 'cancelled' || row.state === 'terminal_failure';
    if (compensating || toBoolean(row.cancel_requested)) cancel.abort(new Error('cancelled'));
    const heartbeat = setInterval(
      () => {
        // A row not stored yet has no lease to renew (it is stored with a fresh one).
        if (deferred && !deferred.stored) return;
        renewLease(rt.db, row.id, id, iso(rt.clock() + options.leaseMs))
          .then((lease) => {
            if (!lease) {
              lost.abort();
              cancel.abort(new Error('lease lost'));
            } else if (lease.cancelRequested) cancel.abort(new Error('cancelled'));
          })
          .catch(() => undefined);
      },
      Math.max(50, Math.floor(options.leaseMs / 3)),
    );
    try {
      const plan = await loadPublishedPlan(rt, row.realm_id, row.flow_id, row.flow_version);
      if (!plan)
        return await finish(
          row,
          {
            state: 'terminal_failure',
            error: {
              code: 'PLAN_UNAVAILABLE',
              message: 'the pinned flow version is no longer available',
              node_id: null,
            },
          },
          undefined,
          deferred,
        );
      const settings = fromJsonColumn<AgentSettings>(row.settings);
      const port = createStorePort(
        rt,
        {
          executionId: row.id,
          realmId: row.realm_id,
          agentId: row.agent_id,
          approvalGated: approvalGatedNodes(plan),
          policyVersionId: row.policy_version_id,
          createdBy: row.created_by,
          sessionId: row.session_id,
        },
        {
          plans: await subflowPlans(rt, row.realm_id, plan),
          tools: options.tools ?? rt.extensions.flowTools,
          nodeTimeoutMs: settings.node_timeout_ms,
          // The first claim of an execution: no run before this one, so no stored steps.
          fresh: row.claims === 1,
          deferred,
        },
      );
      // The pinned policy version's allowed_actions decide the execution's answer (null: no policy was active).
      const policy = await pinnedPolicy(rt, row.realm_id, row.policy_version_id);
      const outcome = await createFlowExecutor(port).run({
        executionId: row.id,
        plan,
        input: fromJsonColumn(row.input),
        settings,
        signals: fromJsonColumn<Record<string, ResumeSignal>>(row.signals),
        compensate: compensating,
        signal: cancel.signal,
        ...(policy?.rules.allowed_actions ? { actionAllowed: (type: string) => actionAllowed(policy, type) } : {}),
      });
      if (lost.signal.aborted) return undefined;
      if (stopped.signal.aborted && outcome.status === 'cancelled' && !toBoolean(row.cancel_requested)) {
        // Stopped by shutdown, not by a cancel: give the execution back at once.
        if (deferred && !deferred.stored) await inTransaction(rt.engine, (trx) => port.storeRow(trx));
        await updateExecutionIf(
          rt.db,
          row.id,
          { states: ['running'], leaseOwner: id },
          {
            lease_owner: null,
            lease_expires_at: iso(0),
          },
        );
        return undefined;
      }
      const next = outcomeUpdate(row, outcome);
      // A step refused by the realm quota: the failure says when the window ends (POST …/retry waits for it).
      const retryAt = port.quotaRefusedUntil();
      if (next.error?.code === QUOTA_EXCEEDED && retryAt !== undefined)
        next.error = { ...next.error, retry_at: retryAt };
      // A compensation run keeps the error that made it necessary (its own outcome says only "cancelled").
      if (compensating && next.state === 'compensated') next.error = undefined;
      if (compensating && next.state === 'terminal_failure') next.compensationPending = false;
      else if (
        (next.state === 'cancelled' || next.state === 'terminal_failure') &&
        toBoolean(row.compensate) &&
        (await hasCompensations(rt, row.id))
      )
        next.compensationPending = true;
      return await finish(row, next, port, deferred);
    } finally {
      clearInterval(heartbeat);
      stopped.signal.removeEventListener('abort', abortAll);
    }
  }

  interface Finish {
    state: string;
    action?: unknown;
    error?: { code: string; message: string; node_id: string | null; retry_at?: string } | undefined;
    wait?: unknown;
    runAt?: string;
    usage?: unknown;
    /** Compensations are still to run (a worker claims the execution again for them). */
    compensationPending?: boolean;
  }

  function outcomeUpdate(row: ExecutionRow, outcome: FlowRunOutcome): Finish {
    switch (outcome.status) {
      case 'succeeded':
        return { state: 'succeeded', action: outcome.action, usage: outcome.usage };
      case 'waiting': {
        const wait = outcome.wait;
        if (wait.kind === 'approval') {
          const approval = approvalId(row.id, wait.wait_id);
          const action = {
            ...outcome.action,
            data: { ...(outcome.action.data as Record<string, unknown>), approval_id: approval },
          };
          return {
            state: 'waiting_for_approval',
            action,
            wait: { ...wait, approval_id: approval },
            usage: outcome.usage,
          };
        }
        const runAt = wait.kind === 'delay' ? wait.resume_at : (wait.expires_at ?? NEVER);
        return { state: 'queued', action: outcome.action, wait, runAt, usage: outcome.usage };
      }
      case 'retryable_failure': {
        const exhausted = row.attempts >= row.max_retries;
        return {
          state: exhausted ? 'terminal_failure' : 'retryable_failure',
          action: outcome.action,
          error: outcome.error,
          usage: outcome.usage,
        };
      }
      case 'terminal_failure':
        return { state: 'terminal_failure', action: outcome.action, error: outcome.error, usage: outcome.usage };
      case 'cancelled':
        return { state: 'cancelled', usage: outcome.usage };
      case 'compensated':
        return { state: 'compensated', error: outcome.error, usage: outcome.usage };
    }
  }

  /**
   * Moves a claimed execution to its outcome's state, only while this worker still holds the lease; answers the
   * row as written (undefined when the move did not apply).
   */
  async function finish(
    row: ExecutionRow,
    next: Finish,
    port?: StorePort,
    deferred?: DeferredRow,
  ): Promise<ExecutionRow | undefined> {
    const now = iso(rt.clock());
    const final = ['succeeded', 'terminal_failure', 'cancelled', 'compensated'].includes(next.state);
    const set = {
      state: next.state,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
      ...(next.action !== undefined ? { action: JSON.stringify(next.action) } : {}),
      ...(next.error !== undefined ? { error: JSON.stringify(next.error) } : {}),
      ...(next.usage !== undefined ? { usage: JSON.stringify(next.usage) } : {}),
      wait: next.wait === undefined ? null : JSON.stringify(next.wait),
      ...(next.runAt !== undefined ? { run_at: next.runAt } : {}),
      compensation_pending: next.compensationPending === true,
      ...(next.compensationPending ? { run_at: now } : {}),
      ...(final ? { finished_at: now } : {}),
    };
    const event = {
      execution_id: row.id,
      type: `execution.${next.state}`,
      data: JSON.stringify({
        state: next.state,
        ...(next.action !== undefined ? { action: next.action } : {}),
        ...(next.error !== undefined ? { error: next.error } : {}),
        ...(next.wait !== undefined ? { wait: next.wait } : {}),
      }),
      created_at: now,
    };
    const moved = await inTransaction(rt.engine, async (trx, sink) => {
      // A row the run has not stored yet is stored here, with its steps and final state (one transaction).
      if (port) await port.storeRow(trx);
      else if (deferred && !deferred.stored) await deferred.store(trx);
      const applied = await updateExecutionIf(
        trx,
        row.id,
        { states: ['running', 'cancelled', 'terminal_failure'], leaseOwner: id },
        set,
      );
      if (!applied) return false;
      sink.emitRuntime(flowExecutionEvent(row, next.state, next.error?.code ?? null, now));
      // The run's held-back pure steps are stored with its final state (never without it), their events before the
      // final state's event.
      if (port) await port.flushPending(trx, event);
      else await insertEvent(trx, event);
      return true;
    });
    return moved ? { ...row, ...set } : undefined;
  }

  return {
    id,
    start() {
      if (running) return;
      running = true;
      void poll();
    },
    wake() {
      if (running) void poll();
    },
    leaseFor: (now) => ({ owner: id, until: iso(now + options.leaseMs) }),
    async runOne(executionId, created, deferred) {
      const now = rt.clock();
      // Queued for this worker at creation (leased to it), or still queued: claim it.
      const leased = created?.id === executionId ? created : await findExecutionById(rt.db, executionId);
      const row =
        leased?.state === 'running' && leased.lease_owner === id
          ? leased
          : await inTransaction(rt.engine, (trx) =>
              claimQueuedExecution(trx, executionId, {
                owner: id,
                now: iso(now),
                leaseUntil: iso(now + options.leaseMs),
              }),
            );
      if (!row) return false;
      const controller = new AbortController();
      const run = runClaimed(row, controller, row === created ? deferred : undefined).finally(() =>
        inFlight.delete(row.id),
      );
      inFlight.set(row.id, {
        controller,
        done: run.then(
          () => undefined,
          () => undefined,
        ),
      });
      return { row: await run };
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      for (const run of inFlight.values()) run.controller.abort();
      await polling;
      await Promise.all([...inFlight.values()].map((run) => run.done));
    },
    check: () => health.check(),
  };
}
