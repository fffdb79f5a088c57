// Shapes the engine client uses that the engine does not (yet) name as a schema of its own: list pages, request
// bodies declared inline in its routes, and small answers. Every record type comes from `EngineApi`.
import type { EngineApi } from '@keel/engine';

/** A list page: `data` plus `next_cursor` (null on the last page). */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface PageQuery {
  /** 1–100, default 20. */
  limit?: number;
  cursor?: string;
}

export interface WhoAmI {
  authenticated: true;
  user_id: string;
  username: string;
  user_type: string;
  display_name: string | null;
  realm_id: string | null;
  role: EngineApi.Role | null;
  key_id: string;
  expires_at: string;
}

export interface ThemeView {
  realm_id: string;
  theme: Required<EngineApi.Theme>;
  updated_at: string | null;
}

export interface SessionCreate {
  agent_id: string;
  flow_id?: string;
  subject_type?: 'anonymous' | 'external' | 'user';
  subject_id?: string;
  channel?: string;
  ttl_seconds?: number;
  metadata?: Record<string, unknown> | null;
  transcript_retention?: boolean;
  label?: string;
}

export interface SessionUpdate {
  label?: string | null;
  metadata?: Record<string, unknown> | null;
  channel?: string | null;
  ttl_seconds?: number;
  transcript_retention?: boolean;
}

export interface SessionStatus {
  session_id: string;
  status: string;
  expires_at: string;
  has_pinned_flow: boolean;
  ended_at: string | null;
}

export interface StateEntry {
  type: string;
  value: unknown;
  version: number;
  updated_at: string;
}

export interface SessionState {
  session_id: string;
  state: Record<string, StateEntry>;
}

export interface SessionSummary {
  session_id: string;
  summary: string;
  method: 'model' | 'extractive';
  message_count: number;
  updated_at: string;
}

export interface UserContext {
  user_id: string;
  context: Record<string, unknown>;
  version: number;
  updated_at: string | null;
}

export interface KnowledgeInput {
  title?: string;
  content: string;
  scope?: 'realm' | 'agent' | 'session' | 'user';
  agent_id?: string;
  session_id?: string;
  user_id?: string;
  tags?: string[];
  source: {
    type: 'manual' | 'document' | 'url' | 'conversation' | 'tool' | 'import';
    uri?: string;
    name?: string;
    captured_at?: string;
  };
  confidence?: number;
  metadata?: Record<string, unknown> | null;
  expires_at?: string;
}

export interface KnowledgeSearch {
  query: string;
  agent_id?: string;
  session_id?: string;
  user_id?: string;
  tags?: string[];
  limit?: number;
}
