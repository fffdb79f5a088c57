// The flow promotion tables (migration 2026_11_26_0004), merged into EngineDb.
type Timestamp = string | Date;

export interface FlowBindingTable {
  flow_id: string;
  /** `development`, `qa`, `uat` or `production`. */
  environment: string;
  realm_id: string;
  version: number;
  promotion_id: string;
  updated_at: Timestamp;
}

export interface FlowPromotionTable {
  id: string;
  flow_id: string;
  realm_id: string;
  from_environment: string | null;
  to_environment: string;
  version: number;
  replaced_version: number | null;
  note: string | null;
  promoted_by: string;
  created_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    flow_binding: FlowBindingTable;
    flow_promotion: FlowPromotionTable;
  }
}
