import type { IdempotencyKeyTable } from '@keel/core';
import type { Generated } from 'kysely';

type Timestamp = string | Date;

export interface TenantTable {
  id: string;
  name: string;
  created_at: Timestamp;
}

export interface OrganizationTable {
  id: string;
  tenant_id: string;
  name: string;
  created_at: Timestamp;
}

export interface WorkspaceTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  name: string;
  /** IANA zone used for reporting (explicit configuration, spec "Versioning"). */
  timezone: string;
  /**
   * Per-workspace HMAC key for pseudonymous subject hashes (privacy requests, tracked user ids), sealed with the
   * service's secret box (AES-256-GCM, KEEL_SECRET_KEY): a database dump alone cannot test guesses against hashes.
   */
  subject_secret: string;
  created_at: Timestamp;
}

export interface ApiKeyTable {
  id: string;
  tenant_id: string;
  name: string;
  /** The first characters of the key, shown in lists so a person can tell keys apart. */
  display_prefix: string;
  key_hash: string;
  /** JSON array of permissions. */
  permissions: string;
  /** `tenant`, `workspace` or `workspaces` (a custom set). */
  scope_type: string;
  /** JSON array of workspace ids (empty for tenant scope). */
  workspace_ids: string;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
}

export interface SiteTokenTable {
  id: string;
  tenant_id: string;
  workspace_id: string;
  name: string;
  display_prefix: string;
  token_hash: string;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
}

export interface DatasetRecordTable {
  id: string;
  workspace_id: string;
  dataset: string;
  /** `observed` / `simulated` for experiments, '' for every other dataset (part of the page index). */
  mode: string;
  record_key: string | null;
  definition_version: string;
  run_id: string | null;
  import_id: string | null;
  computed_at: Timestamp;
  /** JSON object. */
  data: string;
  confidence_value: number | null;
  confidence_low: number | null;
  confidence_high: number | null;
  /** JSON array of evidence references. */
  evidence: string;
  /** Governed state of actions and content (`proposed`, `approval_review`, …), else null. */
  status: string | null;
  /** Pseudonymous subject the row derives from (deleted with the subject), else null. */
  subject_hash: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /**
   * The record's API representation as JSON text, kept current on every write: the analytics page reads two
   * columns per row instead of eighteen and builds nothing.
   */
  api_json: string;
}

export interface ActionTransitionTable {
  id: string;
  workspace_id: string;
  action_id: string;
  from_status: string;
  to_status: string;
  key_id: string | null;
  via: string;
  note: string | null;
  created_at: Timestamp;
}

export interface TargetTable {
  id: string;
  workspace_id: string;
  /** The project id, or '' for the workspace's default graph. */
  project_id: string;
  target_key: string;
  name: string;
  kind: string;
  url: string | null;
  /** JSON array of alias keys (merged duplicates keep their keys here). */
  aliases: string;
  /** JSON object. */
  attributes: string;
  /** Set when this target was folded into a canonical one. */
  merged_into: string | null;
  version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RelationTable {
  id: string;
  workspace_id: string;
  project_id: string;
  from_target_id: string;
  to_target_id: string;
  kind: string;
  created_at: Timestamp;
}

export interface GraphMutationTable {
  id: string;
  workspace_id: string;
  project_id: string;
  operation: string;
  key_id: string | null;
  /** JSON receipt (counts, merged keys). */
  summary: string;
  created_at: Timestamp;
}

export interface TrackingEventTable {
  id: Generated<number>;
  workspace_id: string;
  /** `pageview`, `event` or `ai_crawler`. */
  kind: string;
  name: string | null;
  path: string | null;
  referrer_host: string | null;
  ai_engine: string | null;
  crawler: string | null;
  consent: number;
  visitor_id: string | null;
  subject_hash: string | null;
  /** JSON object or null (only with analytics consent). */
  properties: string | null;
  occurred_at: Timestamp;
  received_at: Timestamp;
}

export interface DailySaltTable {
  day: string;
  salt: string;
  created_at: Timestamp;
}

export interface PrivacyRequestTable {
  id: string;
  workspace_id: string;
  type: string;
  subject_hash: string;
  status: string;
  attempts: number;
  claimed_by: string | null;
  claimed_at: Timestamp | null;
  /** JSON object with what was done (counts), or null. */
  result: string | null;
  export_id: string | null;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

export interface ExportTable {
  id: string;
  tenant_id: string;
  workspace_id: string;
  source: string;
  dataset: string | null;
  report_id: string | null;
  /** Privacy access exports: the subject whose data is exported. */
  subject_hash: string | null;
  format: string;
  status: string;
  attempts: number;
  claimed_by: string | null;
  claimed_at: Timestamp | null;
  row_count: number | null;
  byte_size: number | null;
  error: string | null;
  created_at: Timestamp;
  completed_at: Timestamp | null;
  expires_at: Timestamp;
  /** Set once an expired export's bytes are deleted (so pruning moves on to the next batch). */
  pruned_at: Timestamp | null;
}

export interface ExportChunkTable {
  export_id: string;
  seq: number;
  /** base64 of the bytes. */
  data: string;
}

export interface DashboardShareTable {
  id: string;
  workspace_id: string;
  dashboard_id: string;
  token_hash: string;
  key_id: string | null;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
}

export interface MeasurePromptTable {
  id: string;
  workspace_id: string;
  /** The project id, or '' for the workspace's default project. */
  project_id: string;
  /** SHA-256 of locale + text: the same prompt is imported once. */
  prompt_key: string;
  text: string;
  topic: string | null;
  locale: string;
  intent: string | null;
  persona: string | null;
  active: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MeasureEngineTable {
  id: string;
  workspace_id: string;
  name: string;
  /** `chat_completions` (any compatible API) or `managed_model` (Amazon Bedrock). */
  provider: string;
  /** The chat-completions base URL; empty for a managed model. */
  base_url: string;
  /** The AWS region of a managed model; null for chat-completions engines. */
  region: string | null;
  model: string;
  /** The provider's API key, sealed with the service's secret box; never returned. */
  api_key: string | null;
  concurrency: number;
  requests_per_minute: number;
  /** Price per million input / output tokens in micro-units of the provider's currency. */
  input_price_micros: number | string;
  output_price_micros: number | string;
  timeout_ms: number;
  active: number;
  created_at: Timestamp;
}

export interface MeasureRunTable {
  id: string;
  workspace_id: string;
  project_id: string;
  /** `pending`, `running`, `completed` or `failed`. */
  status: string;
  samples: number;
  /** JSON arrays: the engines and prompts this run asks (a snapshot taken when it was created). */
  engine_ids: string;
  prompt_ids: string;
  judge_engine_id: string | null;
  /** JSON `{name, url, text, baselineRunId}` for a simulation (asked with modified content offline), else null. */
  simulation: string | null;
  total_tasks: number;
  /** Seeds the bootstrap, so recomputing a run's metrics gives the same intervals. */
  seed: number | string;
  /** JSON summary written when the run completes (counts, tokens, cost, metric ids). */
  summary: string | null;
  error: string | null;
  schedule_id: string | null;
  attempts: number;
  claimed_by: string | null;
  claimed_at: Timestamp | null;
  created_at: Timestamp;
  started_at: Timestamp | null;
  completed_at: Timestamp | null;
}

export interface MeasureAnswerTable {
  id: string;
  run_id: string;
  workspace_id: string;
  prompt_id: string;
  engine_id: string;
  sample: number;
  /** `ok` or `error`. */
  status: string;
  text: string;
  /** JSON array of `{url, title?, source}`. */
  citations: string;
  /** JSON: what the metrics need from this answer (mentions, cited domains, scores). */
  features: string;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number | string;
  latency_ms: number;
  error: string | null;
  created_at: Timestamp;
}

export interface MeasureScheduleTable {
  id: string;
  workspace_id: string;
  project_id: string;
  engine_ids: string;
  samples: number;
  every_hours: number;
  next_run_at: Timestamp;
  last_run_id: string | null;
  active: number;
  created_at: Timestamp;
}

export interface GeoDb {
  tenant: TenantTable;
  organization: OrganizationTable;
  workspace: WorkspaceTable;
  api_key: ApiKeyTable;
  site_token: SiteTokenTable;
  dataset_record: DatasetRecordTable;
  action_transition: ActionTransitionTable;
  target: TargetTable;
  relation: RelationTable;
  graph_mutation: GraphMutationTable;
  tracking_event: TrackingEventTable;
  daily_salt: DailySaltTable;
  privacy_request: PrivacyRequestTable;
  export_job: ExportTable;
  export_chunk: ExportChunkTable;
  dashboard_share: DashboardShareTable;
  measure_prompt: MeasurePromptTable;
  measure_engine: MeasureEngineTable;
  measure_run: MeasureRunTable;
  measure_answer: MeasureAnswerTable;
  measure_schedule: MeasureScheduleTable;
  idempotency_key: IdempotencyKeyTable;
}
