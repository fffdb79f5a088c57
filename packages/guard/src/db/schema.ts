import type { Generated } from 'kysely';

export interface PatternTable {
  id: Generated<number>;
  name: string;
  regex: string;
  description: string;
  category: string;
  is_active: boolean | number;
  block_threshold: number | null;
  allow_threshold: number | null;
  created_at: string | Date;
  updated_at: string | Date;
}

export interface ListItemTable {
  id: Generated<number>;
  value: string;
  /** Lower-cased value: uniqueness and matching are case-insensitive. */
  value_key: string;
  description: string;
  created_at: string | Date;
}

export interface ValidatorTable {
  id: Generated<number>;
  name: string;
  type: string;
  rule: string;
  description: string;
  expected_response: string;
  created_at: string | Date;
  updated_at: string | Date;
}

export interface DetectAuditTable {
  id: Generated<number>;
  rid: string;
  created_at: string | Date;
  duration_ms: number;
  total: number;
  /** JSON object: detection type → count. */
  breakdown: unknown;
  blocked: boolean | number;
}

export interface MetaTable {
  key: string;
  value: string;
}

export interface GuardDb {
  pattern: PatternTable;
  allowlist_item: ListItemTable;
  blacklist_item: ListItemTable;
  validator: ValidatorTable;
  detect_audit: DetectAuditTable;
  guard_meta: MetaTable;
}
