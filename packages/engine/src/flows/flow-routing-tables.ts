// The flow promotion and routing tables (migration 2026_11_26_0004), merged into EngineDb.
type Timestamp = string | Date;
type Bool = boolean | number;

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

export interface FlowRoutingProfileTable {
  flow_id: string;
  realm_id: string;
  profile: unknown;
  updated_by: string;
  updated_at: Timestamp;
}

export interface FlowRoutingPolicyTable {
  realm_id: string;
  /** `automatic` or `explicit`. */
  mode: string;
  compatibility_fallback: Bool;
  fallback_flow_id: string | null;
  canary_percentage: number;
  updated_by: string;
  updated_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    flow_binding: FlowBindingTable;
    flow_promotion: FlowPromotionTable;
    flow_routing_profile: FlowRoutingProfileTable;
    flow_routing_policy: FlowRoutingPolicyTable;
  }
}
