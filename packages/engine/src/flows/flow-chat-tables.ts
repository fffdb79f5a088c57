// Chat continuation context and flow triggers (migration 2026_11_26_0040), merged into EngineDb.
type Timestamp = string | Date;
type Bool = boolean | number;

export interface FlowSessionContextTable {
  session_id: string;
  realm_id: string;
  flow_id: string | null;
  offer: unknown;
  products: unknown;
  updated_at: Timestamp;
}

export interface FlowTriggerTable {
  id: string;
  realm_id: string;
  flow_id: string;
  /** `event` or `schedule`. */
  kind: string;
  name: string;
  event: string | null;
  interval_seconds: number | null;
  /** A schedule's 5-field cron expression (instead of `interval_seconds`) and its IANA time zone. */
  cron: string | null;
  time_zone: string | null;
  agent_id: string | null;
  input: unknown;
  is_active: Bool;
  next_run_at: Timestamp | null;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FlowTriggerFireTable {
  trigger_id: string;
  event_id: string;
  execution_id: string;
  created_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    flow_session_context: FlowSessionContextTable;
    flow_trigger: FlowTriggerTable;
    flow_trigger_fire: FlowTriggerFireTable;
  }
}
