import type { Executor } from '@keel/core';
import { param, preparedQuery } from '../db/prepared.ts';
import type { EngineDb } from '../db/schema.ts';

const EXECUTION_COLUMNS = [
  'id',
  'realm_id',
  'agent_id',
  'session_id',
  'flow_id',
  'kind',
  'mode',
  'status',
  'trace_id',
  'action_type',
  'result',
  'usage',
  'pinned',
  'policy_version_id',
  'error_code',
  'created_by',
  'created_at',
  'completed_at',
] as const;

export type ExecutionValues = Record<(typeof EXECUTION_COLUMNS)[number], unknown>;

const executionInsert = preparedQuery((db) =>
  db
    .insertInto('execution')
    .values(Object.fromEntries(EXECUTION_COLUMNS.map((column) => [column, param(column)])) as never),
);

/** Records a run (a prepared statement: one per turn). */
export async function insertExecution(db: Executor<EngineDb>, row: ExecutionValues): Promise<void> {
  await executionInsert(db, row);
}
