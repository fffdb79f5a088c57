// The runtime's tables (migration 2026_11_22_0001), merged into EngineDb so one Kysely instance serves both areas.
type Timestamp = string | Date;
type Bool = boolean | number;

export interface RealmTable {
  id: string;
  name: string;
  status: string;
  theme: unknown;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IdentityTable {
  id: string;
  realm_id: string | null;
  username: string;
  username_key: string;
  /** `user`, `service` or `agent`. */
  user_type: string;
  display_name: string | null;
  /** `active` or `disabled`. */
  status: string;
  metadata: unknown;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RealmMemberTable {
  realm_id: string;
  identity_id: string;
  role: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AccessKeyTable {
  id: string;
  identity_id: string;
  realm_id: string | null;
  access_key: string;
  secret_hash: string;
  name: string;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  /** After a rotation (integration clients): the previous secret's hash, valid until `previous_secret_expires_at`. */
  previous_secret_hash: string | null;
  previous_secret_expires_at: Timestamp | null;
}

export interface RuntimeBootstrapTable {
  name: string;
  created_at: Timestamp;
}

export interface AiProviderTable {
  id: string;
  realm_id: string;
  type: string;
  name: string;
  description: string | null;
  base_url: string | null;
  /** AES-256-GCM sealed api key; never returned. */
  api_key_sealed: string | null;
  supports_text: Bool;
  supports_image: Bool;
  text_model: string | null;
  image_model: string | null;
  input_price_per_million: string;
  output_price_per_million: string;
  image_price: string;
  currency: string;
  is_default: Bool;
  is_active: Bool;
  settings: unknown;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PromptTable {
  id: string;
  realm_id: string;
  key: string;
  version: number;
  name: string;
  content: string;
  variables: unknown;
  is_active: Bool;
  activated_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AgentConfigTable {
  agent_id: string;
  realm_id: string;
  system_prompt_id: string | null;
  ai_provider_id: string | null;
  default_flow_id: string | null;
  allowed_mcp_servers: unknown;
  metadata: unknown;
  settings: unknown;
  profile: unknown;
  is_default: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RuntimeSessionTable {
  id: string;
  realm_id: string;
  agent_id: string;
  flow_id: string | null;
  subject_type: string;
  subject_id: string;
  channel: string | null;
  /** `active`, `completed` or `cancelled` (expiry is computed from `expires_at`). */
  status: string;
  resume_token_hash: string;
  resume_token_version: number;
  ttl_seconds: number;
  expires_at: Timestamp;
  label: string | null;
  metadata: unknown;
  transcript_retention: Bool;
  summary: string | null;
  summary_updated_at: Timestamp | null;
  message_count: number;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  ended_at: Timestamp | null;
}

export interface SessionMessageTable {
  id: string;
  session_id: string;
  realm_id: string;
  seq: number;
  role: string;
  content: string;
  execution_id: string | null;
  action_type: string | null;
  created_at: Timestamp;
}

export interface SessionStateTable {
  session_id: string;
  realm_id: string;
  key: string;
  value_type: string;
  /** The JSON text of the value. */
  value: string;
  version: number;
  updated_by: string;
  updated_at: Timestamp;
}

export interface SessionStateAuditTable {
  id: string;
  session_id: string;
  realm_id: string;
  key: string;
  /** `set` or `forget`. */
  action: string;
  value_type: string | null;
  value_sha256: string | null;
  version: number;
  actor_id: string;
  created_at: Timestamp;
}

export interface UserContextTable {
  realm_id: string;
  user_id: string;
  context: unknown;
  version: number;
  updated_by: string;
  updated_at: Timestamp;
}

export interface KnowledgeItemTable {
  id: string;
  realm_id: string;
  /** `realm`, `agent`, `session` or `user`: who may retrieve it. */
  scope: string;
  agent_id: string | null;
  session_id: string | null;
  user_id: string | null;
  title: string | null;
  /** Null once forgotten (the row stays as audit evidence). */
  content: string | null;
  search_text: string | null;
  content_sha256: string;
  tags: unknown;
  source: unknown;
  confidence: number | null;
  metadata: unknown;
  created_by: string;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  forgotten_at: Timestamp | null;
  forgotten_by: string | null;
}

export interface ExecutionTable {
  id: string;
  realm_id: string;
  agent_id: string;
  session_id: string | null;
  flow_id: string | null;
  /** `chat` or `execute`. */
  kind: string;
  mode: string;
  status: string;
  trace_id: string;
  action_type: string | null;
  result: unknown;
  usage: unknown;
  /** Versions pinned to the execution: prompt id and version, provider id, contract version. */
  pinned: unknown;
  /** The governance policy version active when the run started (migration 2026_11_26_0010). */
  policy_version_id: string | null;
  error_code: string | null;
  created_by: string;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    realm: RealmTable;
    identity: IdentityTable;
    realm_member: RealmMemberTable;
    access_key: AccessKeyTable;
    runtime_bootstrap: RuntimeBootstrapTable;
    ai_provider: AiProviderTable;
    prompt: PromptTable;
    agent_config: AgentConfigTable;
    runtime_session: RuntimeSessionTable;
    session_message: SessionMessageTable;
    session_state: SessionStateTable;
    session_state_audit: SessionStateAuditTable;
    user_context: UserContextTable;
    knowledge_item: KnowledgeItemTable;
    execution: ExecutionTable;
  }
}
