import { dialectOf, type Executor, insertMany } from '@keel/core';
import { type ExpressionBuilder, type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import type { FlowExecutionEventTable, FlowExecutionStepTable, FlowExecutionTable } from './execution-tables.ts';

export type ExecutionRow = Selectable<FlowExecutionTable>;
export type ExecutionEventRow = Selectable<FlowExecutionEventTable>;

const EXECUTION_COLUMNS = [
  'id',
  'realm_id',
  'flow_id',
  'flow_version',
  'agent_id',
  'session_id',
  'state',
  'input',
  'settings',
  'pinned',
  'policy_version_id',
  'signals',
  'wait',
  'action',
  'error',
  'usage',
  'compensate',
  'compensation_pending',
  'cancel_requested',
  'attempts',
  'max_retries',
  'max_concurrency',
  'claims',
  'run_at',
  'lease_owner',
  'lease_expires_at',
  'trace_id',
  'created_by',
  'created_at',
  'updated_at',
  'started_at',
  'finished_at',
] as const satisfies readonly (keyof FlowExecutionTable)[];
const STEP_COLUMNS = ['execution_id', 'key', 'seq', 'record', 'created_at'] as const;
const EVENT_COLUMNS = ['execution_id', 'type', 'data', 'created_at'] as const;
/** Rows per multi-row INSERT of steps and events (PostgreSQL binds at most 65,535 parameters). */
const INSERT_CHUNK = 500;

/** Inserts an execution row (every column; the statement text is compiled once). */
export async function insertExecution(db: Executor<EngineDb>, row: Insertable<FlowExecutionTable>): Promise<void> {
  await insertMany(db, 'flow_execution', EXECUTION_COLUMNS, [row], 1);
}

/** An execution of the realm (undefined for an unknown id and another realm's alike). */
export function findExecution(db: Executor<EngineDb>, realmId: string, id: string) {
  return db
    .selectFrom('flow_execution')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findExecutionById(db: Executor<EngineDb>, id: string) {
  return db.selectFrom('flow_execution').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Executions of a realm, newest first, below the `before` id; `limit + 1` rows. */
export function listExecutionRows(
  db: Executor<EngineDb>,
  realmId: string,
  query: { limit: number; before?: string | undefined; state?: string | undefined; flowId?: string | undefined },
) {
  let q = db.selectFrom('flow_execution').selectAll().where('realm_id', '=', realmId);
  if (query.before !== undefined) q = q.where('id', '<', query.before);
  if (query.state !== undefined) q = q.where('state', '=', query.state);
  if (query.flowId !== undefined) q = q.where('flow_id', '=', query.flowId);
  return q
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
}

/**
 * Updates an execution only while it is in one of `states` (and, with `leaseOwner`, still leased by it): the
 * compare-and-set every state move goes through. Answers whether the row changed.
 */
export async function updateExecutionIf(
  db: Executor<EngineDb>,
  id: string,
  expected: { states: readonly string[]; leaseOwner?: string },
  set: Updateable<FlowExecutionTable>,
): Promise<boolean> {
  let q = db
    .updateTable('flow_execution')
    .set(set)
    .where('id', '=', id)
    .where('state', 'in', [...expected.states]);
  if (expected.leaseOwner !== undefined) q = q.where('lease_owner', '=', expected.leaseOwner);
  const result = await q.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Executions a worker may take now: due queued ones, running ones whose lease expired, pending compensations. */
function claimable(now: string) {
  return (eb: ExpressionBuilder<EngineDb, 'flow_execution'>) =>
    eb.or([
      eb.and([eb('state', '=', 'queued'), eb('run_at', '<=', now)]),
      eb.and([eb('state', '=', 'running'), eb('lease_expires_at', '<', now)]),
      eb.and([
        eb('state', 'in', ['cancelled', 'terminal_failure']),
        eb('compensation_pending', '=', true),
        eb('run_at', '<=', now),
        eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]),
      ]),
    ]);
}

/** An execution holds a live lease (a worker runs it now): what an agent's `max_concurrency` counts. */
function leased(now: string) {
  return (eb: ExpressionBuilder<EngineDb, 'flow_execution'>) =>
    eb.and([eb('lease_owner', 'is not', null), eb('lease_expires_at', '>=', now)]);
}

/** PostgreSQL advisory lock (transaction scope) that serializes per-agent admission across instances. */
const AGENT_ADMISSION_LOCK = 0x6b65656c;

/**
 * Serializes per-agent admission (claims and synchronous starts) across instances for the rest of the transaction:
 * an advisory lock on PostgreSQL; SQLite has one writer, so nothing to do.
 */
export async function lockAgentAdmission(db: Executor<EngineDb>): Promise<void> {
  if (dialectOf(db) === 'postgres') await sql`select pg_advisory_xact_lock(${AGENT_ADMISSION_LOCK})`.execute(db);
}

/** How many executions of each agent hold a live lease now. */
export async function countLeasedByAgent(
  db: Executor<EngineDb>,
  agentIds: readonly string[],
  now: string,
): Promise<Map<string, number>> {
  if (agentIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('flow_execution')
    .select((eb) => ['agent_id', eb.fn.countAll<number>().as('n')])
    .where('agent_id', 'in', [...agentIds])
    .where(leased(now))
    .groupBy('agent_id')
    .execute();
  return new Map(rows.map((row) => [row.agent_id!, Number(row.n)]));
}

/**
 * Claims up to `limit` executions for `owner` until `leaseUntil`: queued ones move to running. An execution whose
 * agent already runs `max_concurrency` executions (live leases, on every instance) is left for later: candidates of
 * such agents are filtered in the query, and when a candidate has an agent limit the claim takes the admission lock
 * (`lockAgentAdmission`), recounts and admits in `run_at` order up to each agent's limit. On PostgreSQL the
 * candidates are locked with FOR UPDATE SKIP LOCKED, so concurrent workers never take the same row; on SQLite (one
 * writer) each candidate is taken by a conditional update that only one worker can win.
 */
export async function claimExecutions(
  db: Executor<EngineDb>,
  claim: { owner: string; now: string; leaseUntil: string; limit: number },
): Promise<ExecutionRow[]> {
  const set = (eb: ExpressionBuilder<EngineDb, 'flow_execution'>) => ({
    state: eb.case().when('state', '=', 'queued').then('running').else(eb.ref('state')).end(),
    lease_owner: claim.owner,
    lease_expires_at: claim.leaseUntil,
    claims: eb('claims', '+', 1),
    started_at: eb.fn.coalesce('started_at', eb.val(claim.now)),
    updated_at: claim.now,
  });
  const postgres = dialectOf(db) === 'postgres';
  let query = db
    .selectFrom('flow_execution as e')
    .select(['e.id', 'e.agent_id', 'e.max_concurrency'])
    .where((eb) =>
      eb.or([
        eb('e.agent_id', 'is', null),
        eb('e.max_concurrency', 'is', null),
        eb(
          eb
            .selectFrom('flow_execution as r')
            .select((inner) => inner.fn.countAll<number>().as('n'))
            .whereRef('r.agent_id', '=', 'e.agent_id')
            .where('r.lease_owner', 'is not', null)
            .where('r.lease_expires_at', '>=', claim.now),
          '<',
          eb.ref('e.max_concurrency'),
        ),
      ]),
    )
    .where((eb) => claimable(claim.now)(eb as never))
    .orderBy('e.run_at')
    .limit(claim.limit);
  if (postgres) query = query.forUpdate().skipLocked();
  let candidates = await query.execute();
  const limited = [
    ...new Set(candidates.flatMap((c) => (c.agent_id !== null && c.max_concurrency !== null ? [c.agent_id] : []))),
  ];
  if (limited.length > 0) {
    await lockAgentAdmission(db);
    const busy = await countLeasedByAgent(db, limited, claim.now);
    candidates = candidates.filter((c) => {
      if (c.agent_id === null || c.max_concurrency === null) return true;
      const running = busy.get(c.agent_id) ?? 0;
      if (running >= c.max_concurrency) return false;
      busy.set(c.agent_id, running + 1);
      return true;
    });
  }
  if (candidates.length === 0) return [];
  if (postgres)
    // The candidates are locked by this transaction: no other worker can take them meanwhile.
    return db
      .updateTable('flow_execution')
      .set(set)
      .where(
        'id',
        'in',
        candidates.map((c) => c.id),
      )
      .returningAll()
      .execute();
  const claimed: ExecutionRow[] = [];
  for (const { id } of candidates) {
    const row = await db
      .updateTable('flow_execution')
      .set(set)
      .where('id', '=', id)
      .where(claimable(claim.now))
      .returningAll()
      .executeTakeFirst();
    if (row) claimed.push(row);
  }
  return claimed;
}

/** Claims one queued execution for `owner` (a synchronous run in the requesting process); undefined if taken. */
export function claimQueuedExecution(
  db: Executor<EngineDb>,
  id: string,
  claim: { owner: string; now: string; leaseUntil: string },
) {
  return db
    .updateTable('flow_execution')
    .set((eb) => ({
      state: 'running',
      lease_owner: claim.owner,
      lease_expires_at: claim.leaseUntil,
      claims: eb('claims', '+', 1),
      started_at: claim.now,
      updated_at: claim.now,
    }))
    .where('id', '=', id)
    .where('state', '=', 'queued')
    .returningAll()
    .executeTakeFirst();
}

/** Extends a lease still held by `owner`; answers whether a cancel was requested, or undefined when it is lost. */
export async function renewLease(
  db: Executor<EngineDb>,
  id: string,
  owner: string,
  leaseUntil: string,
): Promise<{ cancelRequested: boolean } | undefined> {
  const row = await db
    .updateTable('flow_execution')
    .set({ lease_expires_at: leaseUntil })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('state', 'in', ['running', 'cancelled', 'terminal_failure'])
    .returning(['cancel_requested'])
    .executeTakeFirst();
  return row ? { cancelRequested: Boolean(row.cancel_requested) } : undefined;
}

/** Inserts step records (one statement for up to 500 of them). */
export async function insertSteps(
  db: Executor<EngineDb>,
  rows: readonly Insertable<FlowExecutionStepTable>[],
): Promise<void> {
  await insertMany(db, 'flow_execution_step', STEP_COLUMNS, rows, INSERT_CHUNK);
}

/** The step log of an execution in save order. */
export function listSteps(db: Executor<EngineDb>, executionId: string) {
  return db
    .selectFrom('flow_execution_step')
    .select(['key', 'seq', 'record'])
    .where('execution_id', '=', executionId)
    .orderBy('seq')
    .execute();
}

/** Inserts events (several in one statement, in array order, so their ids follow that order). */
export async function insertEvent(
  db: Executor<EngineDb>,
  row: Insertable<FlowExecutionEventTable> | readonly Insertable<FlowExecutionEventTable>[],
): Promise<void> {
  const rows = Array.isArray(row) ? row : [row as Insertable<FlowExecutionEventTable>];
  await insertMany(db, 'flow_execution_event', EVENT_COLUMNS, rows, INSERT_CHUNK);
}

/** Events of an execution after the event id `after`, oldest first. */
export function listEvents(db: Executor<EngineDb>, executionId: string, after: number, limit: number) {
  return db
    .selectFrom('flow_execution_event')
    .selectAll()
    .where('execution_id', '=', executionId)
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Executions of a flow that have not reached a final state (a flow with such executions is not deleted). */
export async function countOpenExecutions(db: Executor<EngineDb>, flowId: string): Promise<number> {
  const row = await db
    .selectFrom('flow_execution')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('flow_id', '=', flowId)
    .where('state', 'not in', ['succeeded', 'compensated', 'terminal_failure', 'cancelled'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
