import { fromJsonColumn, toIsoString } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { uuidv7 } from '../ids.ts';
import { MeasureErrors } from './measure-errors.ts';
import {
  advanceSchedule,
  deactivateSchedule,
  dueSchedules,
  enginesByIds,
  insertSchedule,
  listSchedules,
  type ScheduleRow,
  setScheduleLastRun,
} from './measure-store.ts';
import { createRun } from './run-service.ts';

export function mapSchedule(row: ScheduleRow) {
  const engineIds = fromJsonColumn<string[] | null>(row.engine_ids);
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    projectId: row.project_id === '' ? null : row.project_id,
    engineIds,
    samples: Number(row.samples),
    everyHours: Number(row.every_hours),
    nextRunAt: toIsoString(row.next_run_at),
    lastRunId: row.last_run_id,
    createdAt: toIsoString(row.created_at),
  };
}

export async function createSchedule(
  ctx: GeoContext,
  workspaceId: string,
  input: {
    projectId: string;
    engineIds?: string[] | undefined;
    samples?: number | undefined;
    everyHours: number;
    startAt?: string | undefined;
  },
) {
  if (input.engineIds) {
    const ids = input.engineIds.map((id) => id.toLowerCase());
    const found = new Set(
      (await enginesByIds(ctx.db, workspaceId, ids)).filter((e) => Number(e.active) === 1).map((e) => e.id),
    );
    const missing = input.engineIds.find((id) => !found.has(id.toLowerCase()));
    if (missing) throw MeasureErrors.engineNotFound(missing);
  }
  const now = ctx.now();
  const start = input.startAt ? new Date(input.startAt) : now;
  if (Number.isNaN(start.getTime())) throw MeasureErrors.invalid('startAt: an ISO 8601 date-time');
  const row = {
    id: uuidv7(),
    workspace_id: workspaceId,
    project_id: input.projectId,
    engine_ids: JSON.stringify(input.engineIds?.map((id) => id.toLowerCase()) ?? null),
    samples: input.samples ?? 3,
    every_hours: input.everyHours,
    next_run_at: start.toISOString(),
    last_run_id: null,
    active: 1,
    created_at: now.toISOString(),
  };
  await insertSchedule(ctx.db, row);
  return mapSchedule(row);
}

export async function listWorkspaceSchedules(ctx: GeoContext, workspaceId: string) {
  return { items: (await listSchedules(ctx.db, workspaceId)).map(mapSchedule) };
}

export async function removeSchedule(ctx: GeoContext, workspaceId: string, scheduleId: string) {
  if (!(await deactivateSchedule(ctx.db, workspaceId, scheduleId.toLowerCase())))
    throw MeasureErrors.scheduleNotFound(scheduleId);
}

/**
 * Starts the runs of due schedules. Each schedule's next time moves forward with a compare-and-set, so with several
 * instances exactly one starts each run. A schedule with nothing to run (no engine or prompt) just moves on.
 */
export async function startDueSchedules(ctx: GeoContext): Promise<number> {
  const now = ctx.now();
  let started = 0;
  for (const schedule of await dueSchedules(ctx.db, now.toISOString())) {
    const every = Number(schedule.every_hours) * 3_600_000;
    let next = new Date(toIsoString(schedule.next_run_at)).getTime() + every;
    while (next <= now.getTime()) next += every;
    const claimId = uuidv7();
    if (!(await advanceSchedule(ctx.db, schedule.id, schedule.next_run_at, new Date(next).toISOString(), claimId)))
      continue;
    try {
      const run = await createRun(ctx, schedule.workspace_id, {
        projectId: schedule.project_id,
        engineIds: fromJsonColumn<string[] | null>(schedule.engine_ids) ?? undefined,
        samples: Number(schedule.samples),
        scheduleId: schedule.id,
      });
      await setScheduleLastRun(ctx.db, schedule.id, run.id);
      started++;
    } catch (error) {
      ctx.log.warn({ scheduleId: schedule.id, code: (error as { code?: string }).code }, 'scheduled run not started');
    }
  }
  return started;
}
