// The durable-execution tables (migration 2026_11_26_0002), merged into EngineDb.
type Timestamp = string | Date;
type Bool = boolean | number;

export interface FlowExecutionTable {
  id: string;
  realm_id: string;
  flow_id: string;
  flow_version: number;
  agent_id: string | null;
  session_id: string | null;
  state: string;
  input: unknown;
  settings: unknown;
  pinned: unknown;
  /** The governance policy version active when the execution was created (migration 2026_11_26_0010). */
  policy_version_id: string | null;
  signals: unknown;
  wait: unknown;
  action: unknown;
  error: unknown;
  usage: unknown;
  compensate: Bool;
  compensation_pending: Bool;
  cancel_requested: Bool;
  attempts: number;
  max_retries: number;
  /** The agent's max_concurrency, pinned at creation (migration 0050); null without an agent. */
  max_concurrency: number | null;
  claims: number;
  run_at: Timestamp;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  trace_id: string;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

export interface FlowExecutionStepTable {
  execution_id: string;
  key: string;
  seq: number;
  record: unknown;
  created_at: Timestamp;
}

export interface FlowExecutionEventTable {
  id: Generated<number>;
  execution_id: string;
  type: string;
  data: unknown;
  created_at: Timestamp;
}

import type { Generated } from 'kysely';

declare module '../db/schema.ts' {
  interface EngineDb {
    flow_execution: FlowExecutionTable;
    flow_execution_step: FlowExecutionStepTable;
    flow_execution_event: FlowExecutionEventTable;
  }
}
