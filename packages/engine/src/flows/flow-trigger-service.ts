import { decodeCursor, encodeCursor, fromJsonColumn, toBoolean, toIsoString } from '@keel/core';
import { loadAgent } from '../agents/agent-service.ts';
import { prepareExecution, storeExecution, toExecutionView, wakeWorker } from '../executions/execution-service.ts';
import { findExecutionById } from '../executions/execution-store.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import { checkCron, nextCronSlot } from './flow-cron.ts';
import { requireFlow } from './flow-service.ts';
import {
  advanceSchedule,
  claimFire,
  countTriggers,
  deleteTriggerRow,
  findFire,
  findTrigger,
  insertTrigger,
  listDueSchedules,
  listTriggerRows,
  type TriggerRow,
} from './flow-trigger-store.ts';

/** Triggers one flow may have. */
export const MAX_TRIGGERS_PER_FLOW = 50;
/** Shortest and longest schedule interval. */
export const MIN_INTERVAL_SECONDS = 60;
export const MAX_INTERVAL_SECONDS = 31 * 24 * 3600;
/** Due schedules one scheduler pass fires at most (the next pass takes the rest). */
const DUE_BATCH = 50;

export interface TriggerInput {
  kind: 'event' | 'schedule';
  name: string;
  event?: string | undefined;
  interval_seconds?: number | undefined;
  cron?: string | undefined;
  time_zone?: string | undefined;
  start_at?: string | undefined;
  agent_id?: string | undefined;
  input?: Record<string, unknown> | undefined;
  is_active?: boolean | undefined;
}

export function toTriggerView(row: TriggerRow) {
  return {
    id: row.id,
    flow_id: row.flow_id,
    kind: row.kind as 'event' | 'schedule',
    name: row.name,
    event: row.event,
    interval_seconds: row.interval_seconds,
    cron: row.cron,
    time_zone: row.time_zone,
    agent_id: row.agent_id,
    input: fromJsonColumn<Record<string, unknown>>(row.input),
    is_active: toBoolean(row.is_active),
    next_run_at: row.next_run_at === null ? null : toIsoString(row.next_run_at),
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
  };
}

async function requireTrigger(rt: RuntimeContext, realmId: string, flowId: string, id: string) {
  const flow = await requireFlow(rt, realmId, flowId);
  const row = await findTrigger(rt.db, realmId, flow.id, id.toLowerCase());
  if (!row) throw RuntimeErrors.notFound('Trigger', id);
  return row;
}

/**
 * Creates an event trigger (fired by `POST …/fire` with a stable event id) or a schedule trigger: every
 * `interval_seconds` from `start_at` (default now + interval), or at the times of a 5-field `cron` expression in
 * `time_zone` (default UTC; the first slot is the first cron time at or after `start_at`, default after now). The flow
 * must exist in the realm (it need not be active yet: a fire of an inactive flow is a 409); the trigger's `input` is
 * checked against the flow's contract at each fire; `agent_id` must be the realm's.
 */
export async function createTrigger(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  flowId: string,
  input: TriggerInput,
) {
  const realmId = requirePermission(principal, 'config:write');
  const flow = await requireFlow(rt, realmId, flowId);
  if (flow.status === 'archived') throw RuntimeErrors.conflict(`Flow ${flow.id} is archived: it takes no triggers`);
  if (input.kind === 'event') {
    for (const field of ['interval_seconds', 'cron', 'time_zone', 'start_at'] as const)
      if (input[field] !== undefined) throw RuntimeErrors.invalid(`${field} is for schedule triggers`);
  } else if ((input.interval_seconds === undefined) === (input.cron === undefined))
    throw RuntimeErrors.invalid('a schedule trigger needs either interval_seconds or cron (not both)');
  if (input.time_zone !== undefined && input.cron === undefined)
    throw RuntimeErrors.invalid('time_zone is for cron schedules');
  const now = rt.clock();
  let nextRunAt: string | null = null;
  let cron: { cron: string; timeZone: string } | undefined;
  if (input.kind === 'schedule') {
    const startAt = input.start_at === undefined ? undefined : Date.parse(input.start_at);
    if (startAt !== undefined && !Number.isFinite(startAt)) throw RuntimeErrors.invalid('start_at must be a date-time');
    let first: number;
    if (input.cron !== undefined) {
      cron = checkCron(input.cron, input.time_zone, now);
      first = nextCronSlot(cron, startAt === undefined ? now : startAt - 1);
    } else first = startAt ?? now + input.interval_seconds! * 1000;
    nextRunAt = new Date(first).toISOString();
  }
  if (input.agent_id !== undefined && !(await loadAgent(rt, realmId, input.agent_id)))
    throw RuntimeErrors.notFound('Agent', input.agent_id);
  if ((await countTriggers(rt.db, flow.id)) >= MAX_TRIGGERS_PER_FLOW)
    throw RuntimeErrors.limit(`Flow ${flow.id} has ${MAX_TRIGGERS_PER_FLOW} triggers: delete one first`);
  const stamp = new Date(now).toISOString();
  const row = {
    id: newId(),
    realm_id: realmId,
    flow_id: flow.id,
    kind: input.kind,
    name: input.name,
    event: input.event ?? null,
    interval_seconds: input.interval_seconds ?? null,
    cron: cron?.cron ?? null,
    time_zone: cron?.timeZone ?? null,
    agent_id: input.agent_id?.toLowerCase() ?? null,
    input: JSON.stringify(input.input ?? {}),
    is_active: input.is_active ?? true,
    next_run_at: nextRunAt,
    created_by: principal.identityId,
    created_at: stamp,
    updated_at: stamp,
  };
  await inTransaction(rt.engine, (trx) => insertTrigger(trx, row));
  return toTriggerView((await findTrigger(rt.db, realmId, flow.id, row.id))!);
}

export async function listTriggers(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  flowId: string,
  query: { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const flow = await requireFlow(rt, realmId, flowId);
  const position = decodeCursor('triggers', query.cursor, ['string'] as const, () =>
    RuntimeErrors.invalid('cursor is not a cursor of this list'),
  );
  const rows = await listTriggerRows(rt.db, flow.id, query.limit, position?.[0]);
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(toTriggerView),
    next_cursor: rows.length > query.limit ? encodeCursor('triggers', [page.at(-1)!.id]) : null,
  };
}

export async function deleteTrigger(rt: RuntimeContext, principal: RuntimePrincipal, flowId: string, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await requireTrigger(rt, realmId, flowId, id);
  await inTransaction(rt.engine, (trx) => deleteTriggerRow(trx, row.id));
}

/**
 * Fires an event trigger with a stable event id: the first fire of an id queues one execution of the flow's active
 * version (input: the trigger's `input` merged with the fire's `payload`) and answers 202; every later fire of the
 * same id — concurrent ones too — answers 200 with `duplicate: true` and the same execution id, whatever its payload.
 * The fire record and the execution are one transaction; the (trigger, event id) primary key decides the race.
 */
export async function fireTrigger(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  flowId: string,
  id: string,
  input: { event_id: string; payload?: Record<string, unknown> | undefined },
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const trigger = await requireTrigger(rt, realmId, flowId, id);
  const duplicate = async () => {
    const fire = await findFire(rt.db, trigger.id, input.event_id);
    if (!fire) return undefined;
    const execution = await findExecutionById(rt.db, fire.execution_id);
    return {
      statusCode: 200,
      body: {
        trigger_id: trigger.id,
        event_id: input.event_id,
        duplicate: true,
        execution_id: fire.execution_id,
        execution: execution ? toExecutionView(execution) : null,
      },
    };
  };
  const earlier = await duplicate();
  if (earlier) return earlier;
  if (trigger.kind !== 'event')
    throw RuntimeErrors.conflict(`Trigger ${trigger.id} is a schedule: it fires on its own`);
  if (!toBoolean(trigger.is_active)) throw RuntimeErrors.conflict(`Trigger ${trigger.id} is not active`);
  const prepared = await prepareExecution(rt, realmId, principal.identityId, {
    flow_id: trigger.flow_id,
    agent_id: trigger.agent_id ?? undefined,
    input: { ...fromJsonColumn<Record<string, unknown>>(trigger.input), ...input.payload },
  });
  const queued = await inTransaction(rt.engine, async (trx) => {
    const row = prepared.row(nowIso(rt));
    if (
      !(await claimFire(trx, {
        trigger_id: trigger.id,
        event_id: input.event_id,
        execution_id: row.id,
        created_at: row.created_at,
      }))
    )
      return undefined;
    return storeExecution(trx, row, { trigger_id: trigger.id, event_id: input.event_id });
  });
  if (!queued) return (await duplicate())!;
  wakeWorker(rt);
  return {
    statusCode: 202,
    body: {
      trigger_id: trigger.id,
      event_id: input.event_id,
      duplicate: false,
      execution_id: queued.id,
      execution: queued,
    },
  };
}

/** The first slot of a schedule strictly after `now` (missed slots are coalesced into the one that fires). */
function nextSlot(trigger: TriggerRow, slot: number, now: number): number {
  if (trigger.cron !== null) return nextCronSlot({ cron: trigger.cron, timeZone: trigger.time_zone ?? 'UTC' }, now);
  const intervalMs = trigger.interval_seconds! * 1000;
  if (slot > now) return slot;
  return slot + (Math.floor((now - slot) / intervalMs) + 1) * intervalMs;
}

/**
 * Fires every due schedule slot once across all engine instances: each instance may run this at the same time; the
 * fire record of the slot (`schedule:<slot time>`) is claimed in the database in the transaction that queues the
 * execution, so exactly one instance queues it, and the schedule moves to its next slot by compare-and-set. Slots
 * missed while no instance ran are coalesced into one run. A schedule whose flow cannot run (inactive, archived,
 * an input the contract rejects) skips the slot and is logged. Answers the executions queued by this call.
 */
export async function fireDueSchedules(rt: RuntimeContext): Promise<number> {
  const now = rt.clock();
  let queued = 0;
  for (const trigger of await listDueSchedules(rt.db, new Date(now).toISOString(), DUE_BATCH)) {
    const slotAt = toIsoString(trigger.next_run_at!);
    let next: string | null = null;
    try {
      next = new Date(nextSlot(trigger, Date.parse(slotAt), now)).toISOString();
    } catch (error) {
      // Only a cron schedule the time zone database no longer resolves: it stops (next_run_at null) rather than spin.
      rt.log.warn({ triggerId: trigger.id, err: error }, 'schedule stopped: its next slot cannot be computed');
    }
    let prepared: Awaited<ReturnType<typeof prepareExecution>> | undefined;
    try {
      prepared = await prepareExecution(rt, trigger.realm_id, trigger.created_by, {
        flow_id: trigger.flow_id,
        agent_id: trigger.agent_id ?? undefined,
        input: fromJsonColumn<Record<string, unknown>>(trigger.input),
      });
    } catch (error) {
      rt.log.warn(
        { triggerId: trigger.id, code: (error as { code?: string }).code },
        'schedule slot skipped: the flow cannot run',
      );
    }
    const fired = await inTransaction(rt.engine, async (trx) => {
      if (
        !(await advanceSchedule(trx, trigger.id, slotAt, {
          next_run_at: next,
          updated_at: new Date(now).toISOString(),
        }))
      )
        return false;
      if (!prepared) return false;
      const row = prepared.row(new Date(now).toISOString());
      if (
        !(await claimFire(trx, {
          trigger_id: trigger.id,
          event_id: `schedule:${slotAt}`,
          execution_id: row.id,
          created_at: row.created_at,
        }))
      )
        return false;
      await storeExecution(trx, row, { trigger_id: trigger.id, slot: slotAt });
      return true;
    });
    if (fired) queued++;
  }
  if (queued > 0) wakeWorker(rt);
  return queued;
}
