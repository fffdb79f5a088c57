import { type Executor, toBoolean } from '@keel/core';
import type { Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';

type Timestamp = string | Date;

export interface ObservabilityEventTable {
  id: string;
  realm_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  /** request, step, provider_call, tool_call or webhook_delivery. */
  kind: string;
  /** info, warn or error. */
  level: string;
  /** Route pattern, step or call name: never a raw path, query, argument or message text. */
  name: string;
  status_code: number | null;
  failed: boolean | number;
  duration_ms: number;
  /** Flat JSON object of ids, names, codes and numbers (the span's attributes). */
  attributes: unknown;
  occurred_at: Timestamp;
}

export interface ObservabilityAlertRuleTable {
  id: string;
  realm_id: string;
  name: string;
  metric: string;
  operator: string;
  threshold: number;
  window_seconds: number;
  state: string;
  last_value: number | null;
  last_evaluated_at: Timestamp | null;
  created_by: string;
  created_at: Timestamp;
}

export interface ObservabilityAlertFiringTable {
  id: string;
  rule_id: string;
  realm_id: string;
  value: number;
  fired_at: Timestamp;
  resolved_at: Timestamp | null;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    observability_event: ObservabilityEventTable;
    observability_alert_rule: ObservabilityAlertRuleTable;
    observability_alert_firing: ObservabilityAlertFiringTable;
  }
}

export type ObservabilityEventRow = Selectable<ObservabilityEventTable>;
export type AlertRuleRow = Selectable<ObservabilityAlertRuleTable>;
export type AlertFiringRow = Selectable<ObservabilityAlertFiringTable>;

/** Stores events (multi-row inserts of at most 200 rows, within SQLite's parameter limit). */
export async function insertObservabilityEvents(
  db: Executor<EngineDb>,
  rows: readonly ObservabilityEventRow[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 200)
    await db
      .insertInto('observability_event')
      .values(rows.slice(i, i + 200))
      .execute();
}

export interface EventFilter {
  levels?: readonly string[];
  kind?: string;
  traceId?: string;
  since?: string;
  until?: string;
}

/** A page of the realm's events, newest first (by id, which is time-ordered), after `beforeId` when given. */
export function listObservabilityEvents(
  db: Executor<EngineDb>,
  realmId: string,
  filter: EventFilter,
  limit: number,
  beforeId: string | undefined,
): Promise<ObservabilityEventRow[]> {
  let query = db.selectFrom('observability_event').selectAll().where('realm_id', '=', realmId);
  if (filter.levels) query = query.where('level', 'in', filter.levels);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  if (filter.traceId) query = query.where('trace_id', '=', filter.traceId);
  if (filter.since) query = query.where('occurred_at', '>=', filter.since);
  if (filter.until) query = query.where('occurred_at', '<', filter.until);
  if (beforeId) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** The realm's events of one trace in time order (at most `limit`). */
export function traceEvents(
  db: Executor<EngineDb>,
  realmId: string,
  traceId: string,
  limit: number,
): Promise<ObservabilityEventRow[]> {
  return db
    .selectFrom('observability_event')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('trace_id', '=', traceId)
    .orderBy('occurred_at', 'asc')
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
}

/**
 * The step log of the realm's executions run in a trace (their step records in save order, at most `limit`): the
 * timeline's source for flow node steps, stored with the steps themselves.
 */
export function traceSteps(db: Executor<EngineDb>, realmId: string, traceId: string, limit: number) {
  return db
    .selectFrom('flow_execution_step as s')
    .innerJoin('flow_execution as e', 'e.id', 's.execution_id')
    .select(['s.execution_id', 's.seq', 's.record'])
    .where('e.realm_id', '=', realmId)
    .where('e.trace_id', '=', traceId)
    .orderBy('s.execution_id')
    .orderBy('s.seq')
    .limit(limit)
    .execute();
}

/** Count, failures and summed duration of the realm's events of one kind since `since`. */
export async function eventTotals(
  db: Executor<EngineDb>,
  realmId: string,
  kind: string,
  since: string,
): Promise<{ count: number; failed: number; clientErrors: number; totalMs: number }> {
  const rows = await db
    .selectFrom('observability_event')
    .select(['failed', 'status_code', 'duration_ms'])
    .where('realm_id', '=', realmId)
    .where('kind', '=', kind)
    .where('occurred_at', '>=', since)
    .execute();
  let failed = 0;
  let clientErrors = 0;
  let totalMs = 0;
  for (const row of rows) {
    if (toBoolean(row.failed)) failed++;
    if (row.status_code !== null && row.status_code >= 400 && row.status_code < 500) clientErrors++;
    totalMs += row.duration_ms;
  }
  return { count: rows.length, failed, clientErrors, totalMs };
}

/** Durations (ms) of the realm's newest `limit` events of one kind since `since`, for percentiles. */
export async function recentDurations(
  db: Executor<EngineDb>,
  realmId: string,
  kind: string,
  since: string,
  limit: number,
): Promise<number[]> {
  const rows = await db
    .selectFrom('observability_event')
    .select('duration_ms')
    .where('realm_id', '=', realmId)
    .where('kind', '=', kind)
    .where('occurred_at', '>=', since)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => row.duration_ms);
}

/** Durable executions waiting to be claimed (of one realm, or of all). */
export async function queuedExecutions(db: Executor<EngineDb>, realmId: string | undefined): Promise<number> {
  let query = db
    .selectFrom('flow_execution')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('state', '=', 'queued');
  if (realmId) query = query.where('realm_id', '=', realmId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes events older than `before`, and per realm those beyond the newest `keep`. */
export async function pruneObservabilityEvents(db: Executor<EngineDb>, before: string, keep: number): Promise<void> {
  await db.deleteFrom('observability_event').where('occurred_at', '<', before).execute();
  const crowded = await db
    .selectFrom('observability_event')
    .select(['realm_id', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('realm_id')
    .having((eb) => eb.fn.countAll(), '>', keep)
    .execute();
  for (const { realm_id: realmId } of crowded) {
    const cutoff = await db
      .selectFrom('observability_event')
      .select('id')
      .where('realm_id', '=', realmId)
      .orderBy('id', 'desc')
      .offset(keep)
      .limit(1)
      .executeTakeFirst();
    if (cutoff)
      await db.deleteFrom('observability_event').where('realm_id', '=', realmId).where('id', '<=', cutoff.id).execute();
  }
}

export async function insertAlertRule(db: Executor<EngineDb>, row: AlertRuleRow): Promise<void> {
  await db.insertInto('observability_alert_rule').values(row).execute();
}

/** A page of the realm's alert rules, oldest first, after `afterId`. */
export function listAlertRules(
  db: Executor<EngineDb>,
  realmId: string | undefined,
  limit: number,
  afterId?: string,
): Promise<AlertRuleRow[]> {
  let query = db.selectFrom('observability_alert_rule').selectAll();
  if (realmId) query = query.where('realm_id', '=', realmId);
  if (afterId) query = query.where('id', '>', afterId);
  return query.orderBy('id', 'asc').limit(limit).execute();
}

export async function countAlertRules(db: Executor<EngineDb>, realmId: string): Promise<number> {
  const row = await db
    .selectFrom('observability_alert_rule')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Moves a rule from `from` to `to` only if it is still in `from`; true when this call made the transition. */
export async function transitionAlertRule(
  db: Executor<EngineDb>,
  ruleId: string,
  from: string,
  to: string,
  value: number,
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('observability_alert_rule')
    .set({ state: to, last_value: value, last_evaluated_at: at })
    .where('id', '=', ruleId)
    .where('state', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function noteAlertValue(db: Executor<EngineDb>, ruleId: string, value: number, at: string): Promise<void> {
  await db
    .updateTable('observability_alert_rule')
    .set({ last_value: value, last_evaluated_at: at })
    .where('id', '=', ruleId)
    .execute();
}

export async function insertAlertFiring(db: Executor<EngineDb>, row: AlertFiringRow): Promise<void> {
  await db.insertInto('observability_alert_firing').values(row).execute();
}

export async function resolveAlertFirings(db: Executor<EngineDb>, ruleId: string, at: string): Promise<void> {
  await db
    .updateTable('observability_alert_firing')
    .set({ resolved_at: at })
    .where('rule_id', '=', ruleId)
    .where('resolved_at', 'is', null)
    .execute();
}

/** The newest firings of the given rules (at most `perRule` each is the caller's slicing; `limit` overall). */
export function alertFirings(
  db: Executor<EngineDb>,
  realmId: string,
  ruleIds: readonly string[],
  limit: number,
): Promise<AlertFiringRow[]> {
  if (ruleIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('observability_alert_firing')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('rule_id', 'in', ruleIds)
    .orderBy('fired_at', 'desc')
    .limit(limit)
    .execute();
}
