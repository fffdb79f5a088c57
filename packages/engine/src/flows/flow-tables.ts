// The flow area's tables (migration 2026_11_26_0001), merged into EngineDb.
type Timestamp = string | Date;
type Bool = boolean | number;

export interface FlowTable {
  id: string;
  realm_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** `draft`, `published` or `archived`. */
  status: string;
  is_active: Bool;
  version: number;
  active_version: number | null;
  published_version: number | null;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  archived_at: Timestamp | null;
}

export interface FlowVersionTable {
  flow_id: string;
  version: number;
  realm_id: string;
  config: unknown;
  config_hash: string;
  /** `draft` or `published`. */
  status: string;
  test_passed: Bool | null;
  tested_at: Timestamp | null;
  published_at: Timestamp | null;
  created_by: string;
  created_at: Timestamp;
}

export interface FlowFixtureTable {
  id: string;
  flow_id: string;
  realm_id: string;
  name: string;
  input: unknown;
  mocks: unknown;
  expect: unknown;
  created_by: string;
  created_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    flow: FlowTable;
    flow_version: FlowVersionTable;
    flow_fixture: FlowFixtureTable;
  }
}
