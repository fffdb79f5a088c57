// The tool-server registry's tables (migration 2026_11_26_0003), merged into EngineDb.
type Timestamp = string | Date;
type Bool = boolean | number;

export interface ToolServerTable {
  id: string;
  realm_id: string;
  name: string;
  url: string;
  /** `http` (streamable HTTP) or `sse`. */
  type: string;
  description: string | null;
  is_active: Bool;
  capabilities: unknown;
  auth_profile: unknown;
  egress_policy: unknown;
  region: string | null;
  data_handling: unknown;
  estimated_cost: number | string | null;
  active_credential_version: number | null;
  negotiated: unknown;
  last_probe_at: Timestamp | null;
  last_probe_ok: Bool | null;
  last_probe_latency_ms: number | null;
  last_error_code: string | null;
  auth_failures: number;
  last_auth_failure_at: Timestamp | null;
  discovered_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ToolServerCredentialTable {
  server_id: string;
  version: number;
  realm_id: string;
  secret_sealed: string | null;
  status: string;
  created_at: Timestamp;
  created_by: string | null;
  tested_at: Timestamp | null;
  test_ok: Bool | null;
  test_error_code: string | null;
  activated_at: Timestamp | null;
  overlap_until: Timestamp | null;
}

export interface DiscoveredToolTable {
  id: string;
  realm_id: string;
  server_id: string;
  name: string;
  title: string | null;
  description: string | null;
  input_schema: unknown;
  output_schema: unknown;
  annotations: unknown;
  impact: unknown;
  read_only: Bool;
  contract_hash: string;
  contract_status: string;
  contract_problems: unknown;
  contract_checked_at: Timestamp;
  review_status: string;
  review_required: Bool;
  review_note: string | null;
  reviewed_by: string | null;
  reviewed_at: Timestamp | null;
  removed_at: Timestamp | null;
  discovered_at: Timestamp;
  updated_at: Timestamp;
}

export interface ToolServerResourceTable {
  id: string;
  realm_id: string;
  server_id: string;
  kind: string;
  uri: string;
  name: string;
  description: string | null;
  mime_type: string | null;
  discovered_at: Timestamp;
}

export interface ToolProposalTable {
  id: string;
  realm_id: string;
  server_id: string;
  name: string;
  description: string;
  input_schema: unknown;
  source: unknown;
  status: string;
  review_note: string | null;
  reviewed_by: string | null;
  reviewed_at: Timestamp | null;
  created_by: string;
  created_at: Timestamp;
}

export interface ToolRoutingRuleTable {
  id: string;
  realm_id: string;
  rule: unknown;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ToolRouteTraceTable {
  trace_id: string;
  realm_id: string;
  seq: number;
  trace: unknown;
  created_at: Timestamp;
}

export interface ToolSessionContextTable {
  session_id: string;
  realm_id: string;
  context: unknown;
  version: number;
  updated_by: string;
  updated_at: Timestamp;
}

/** A realm's sampling and elicitation policy (migration 2026_11_26_0060). */
export interface ToolInteractionPolicyTable {
  realm_id: string;
  policy: unknown;
  updated_by: string;
  updated_at: Timestamp;
}

/** The audit record of one sampling or elicitation request of a server (no content, ids and counts only). */
export interface ToolInteractionTable {
  id: string;
  realm_id: string;
  kind: string;
  server_id: string;
  tool_name: string | null;
  session_id: string | null;
  trace_id: string | null;
  outcome: string;
  reason: string | null;
  counted: number;
  provider_id: string | null;
  tokens_reserved: number;
  input_tokens: number | null;
  output_tokens: number | null;
  created_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    tool_server: ToolServerTable;
    tool_server_credential: ToolServerCredentialTable;
    discovered_tool: DiscoveredToolTable;
    tool_server_resource: ToolServerResourceTable;
    tool_proposal: ToolProposalTable;
    tool_routing_rule: ToolRoutingRuleTable;
    tool_route_trace: ToolRouteTraceTable;
    tool_session_context: ToolSessionContextTable;
    tool_interaction_policy: ToolInteractionPolicyTable;
    tool_interaction: ToolInteractionTable;
  }
}
