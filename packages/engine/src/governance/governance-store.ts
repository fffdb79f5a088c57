import type { Executor } from '@keel/core';
import type { Insertable, Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';

// The governance tables (migration 2026_11_26_0010), merged into EngineDb.
type Timestamp = string | Date;

export interface GovernancePolicyTable {
  id: string;
  realm_id: string;
  version: number;
  name: string;
  description: string | null;
  rules: unknown;
  /** `draft`, `active` or `superseded`. */
  status: string;
  created_by: string;
  created_at: Timestamp;
  activated_by: string | null;
  activated_at: Timestamp | null;
}

export interface GovernanceAllowlistTable {
  id: string;
  realm_id: string;
  scope: string;
  value: string;
  reason: string;
  /** `pending`, `approved` or `rejected`. */
  status: string;
  requested_by: string;
  created_at: Timestamp;
  decided_by: string | null;
  decided_at: Timestamp | null;
  decision_note: string | null;
}

export interface GovernanceQuotaTable {
  realm_id: string;
  window_seconds: number;
  max_requests: number | null;
  max_tokens: number | string | null;
  max_cost: string | null;
  max_tool_calls: number | null;
  /** JSON array of percentages (migration 2026_11_26_0080); null: no threshold events. */
  notify_at_percent?: string | null;
  updated_by: string;
  updated_at: Timestamp;
}

export interface GovernanceDatasetTable {
  id: string;
  realm_id: string;
  name: string;
  kind: string;
  cases: unknown;
  case_count: number;
  approval: unknown;
  created_by: string;
  created_at: Timestamp;
}

export interface GovernanceEvaluationRunTable {
  id: string;
  realm_id: string;
  dataset_id: string;
  mode: string;
  agent_id: string;
  policy_id: string | null;
  status: string;
  summary: unknown;
  results: unknown;
  created_by: string;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

export interface GovernanceRecordTable {
  id: string;
  realm_id: string;
  /** `deployment_profile`, `support_access` or `lawful_request`. */
  kind: string;
  data: unknown;
  expires_at: Timestamp | null;
  created_by: string;
  created_at: Timestamp;
}

export interface GovernanceAuditTable {
  id: string;
  realm_id: string;
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string;
  details: unknown;
  created_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    governance_policy: GovernancePolicyTable;
    governance_allowlist: GovernanceAllowlistTable;
    governance_quota: GovernanceQuotaTable;
    governance_dataset: GovernanceDatasetTable;
    governance_evaluation_run: GovernanceEvaluationRunTable;
    governance_record: GovernanceRecordTable;
    governance_audit: GovernanceAuditTable;
  }
}

export type PolicyRow = Selectable<GovernancePolicyTable>;
export type AllowlistRow = Selectable<GovernanceAllowlistTable>;
export type QuotaRow = Selectable<GovernanceQuotaTable>;
export type DatasetRow = Selectable<GovernanceDatasetTable>;
export type EvaluationRunRow = Selectable<GovernanceEvaluationRunTable>;
export type RecordRow = Selectable<GovernanceRecordTable>;
export type AuditRow = Selectable<GovernanceAuditTable>;

/** The realm's newest policy version number (0 when it has none). */
export async function findLatestPolicyVersion(db: Executor<EngineDb>, realmId: string): Promise<number> {
  const row = await db
    .selectFrom('governance_policy')
    .select((eb) => eb.fn.max('version').as('version'))
    .where('realm_id', '=', realmId)
    .executeTakeFirst();
  return Number(row?.version ?? 0);
}

export async function insertPolicy(db: Executor<EngineDb>, row: Insertable<GovernancePolicyTable>): Promise<void> {
  await db.insertInto('governance_policy').values(row).execute();
}

export function findPolicy(db: Executor<EngineDb>, realmId: string, id: string): Promise<PolicyRow | undefined> {
  return db
    .selectFrom('governance_policy')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findActivePolicy(db: Executor<EngineDb>, realmId: string): Promise<PolicyRow | undefined> {
  return db
    .selectFrom('governance_policy')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('status', '=', 'active')
    .executeTakeFirst();
}

/** Marks the realm's active version superseded; answers how many rows changed (0 or 1). */
export async function supersedeActivePolicy(db: Executor<EngineDb>, realmId: string): Promise<number> {
  const result = await db
    .updateTable('governance_policy')
    .set({ status: 'superseded' })
    .where('realm_id', '=', realmId)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Makes a version active when it is still in one of `from`; false when another writer moved it first. */
export async function activatePolicyRow(
  db: Executor<EngineDb>,
  id: string,
  from: readonly string[],
  set: { activated_by: string; activated_at: string },
): Promise<boolean> {
  const result = await db
    .updateTable('governance_policy')
    .set({ status: 'active', ...set })
    .where('id', '=', id)
    .where('status', 'in', [...from])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertAllowlist(
  db: Executor<EngineDb>,
  row: Insertable<GovernanceAllowlistTable>,
): Promise<void> {
  await db.insertInto('governance_allowlist').values(row).execute();
}

export function findAllowlist(db: Executor<EngineDb>, realmId: string, id: string): Promise<AllowlistRow | undefined> {
  return db
    .selectFrom('governance_allowlist')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Decides a request that is still pending; false when it was decided first (a decision is final). */
export async function decideAllowlistRow(
  db: Executor<EngineDb>,
  id: string,
  set: { status: string; decided_by: string; decided_at: string; decision_note: string | null },
): Promise<boolean> {
  const result = await db
    .updateTable('governance_allowlist')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The values approved for a scope in the realm (bounded). */
export async function listApprovedValues(db: Executor<EngineDb>, realmId: string, scope: string): Promise<string[]> {
  const rows = await db
    .selectFrom('governance_allowlist')
    .select('value')
    .where('realm_id', '=', realmId)
    .where('scope', '=', scope)
    .where('status', '=', 'approved')
    .limit(1000)
    .execute();
  return rows.map((r) => r.value);
}

export function findQuota(db: Executor<EngineDb>, realmId: string): Promise<QuotaRow | undefined> {
  return db.selectFrom('governance_quota').selectAll().where('realm_id', '=', realmId).executeTakeFirst();
}

/** Creates or replaces the realm's quota policy. */
export async function upsertQuota(db: Executor<EngineDb>, row: QuotaRow): Promise<void> {
  const { realm_id: _realm, ...set } = row;
  await db
    .insertInto('governance_quota')
    .values(row)
    .onConflict((oc) => oc.column('realm_id').doUpdateSet(set))
    .execute();
}

export async function insertDataset(db: Executor<EngineDb>, row: Insertable<GovernanceDatasetTable>): Promise<void> {
  await db.insertInto('governance_dataset').values(row).execute();
}

export function findDataset(db: Executor<EngineDb>, realmId: string, id: string): Promise<DatasetRow | undefined> {
  return db
    .selectFrom('governance_dataset')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function insertEvaluationRun(
  db: Executor<EngineDb>,
  row: Insertable<GovernanceEvaluationRunTable>,
): Promise<void> {
  await db.insertInto('governance_evaluation_run').values(row).execute();
}

export function findEvaluationRun(
  db: Executor<EngineDb>,
  realmId: string,
  id: string,
): Promise<EvaluationRunRow | undefined> {
  return db
    .selectFrom('governance_evaluation_run')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function insertRecord(db: Executor<EngineDb>, row: Insertable<GovernanceRecordTable>): Promise<void> {
  await db.insertInto('governance_record').values(row).execute();
}

/** The realm's records of a kind, newest first; `status` filters on expires_at against `now` (active: not yet). */
export function listRecords(
  db: Executor<EngineDb>,
  realmId: string,
  kind: string,
  filter: { afterId?: string | undefined; limit: number; status?: 'active' | 'expired' | undefined; now: string },
): Promise<RecordRow[]> {
  let q = db.selectFrom('governance_record').selectAll().where('realm_id', '=', realmId).where('kind', '=', kind);
  if (filter.afterId) q = q.where('id', '<', filter.afterId);
  if (filter.status === 'active') q = q.where('expires_at', '>', filter.now);
  if (filter.status === 'expired') q = q.where('expires_at', '<=', filter.now);
  return q.orderBy('id', 'desc').limit(filter.limit).execute();
}

export async function insertAudit(db: Executor<EngineDb>, row: Insertable<GovernanceAuditTable>): Promise<void> {
  await db.insertInto('governance_audit').values(row).execute();
}

/** The realm's governance rows for the snapshot: each list newest first, at most `limit` rows. */
export async function listSnapshotRows(db: Executor<EngineDb>, realmId: string, limit: number) {
  const records = (kind: string) =>
    db
      .selectFrom('governance_record')
      .selectAll()
      .where('realm_id', '=', realmId)
      .where('kind', '=', kind)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  const [policies, allowlist, datasets, runs, deployments, support, lawful, audit, quota] = await Promise.all([
    db
      .selectFrom('governance_policy')
      .selectAll()
      .where('realm_id', '=', realmId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute(),
    db
      .selectFrom('governance_allowlist')
      .selectAll()
      .where('realm_id', '=', realmId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute(),
    db
      .selectFrom('governance_dataset')
      .select(['id', 'realm_id', 'name', 'kind', 'case_count', 'approval', 'created_by', 'created_at'])
      .where('realm_id', '=', realmId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute(),
    db
      .selectFrom('governance_evaluation_run')
      .select([
        'id',
        'realm_id',
        'dataset_id',
        'mode',
        'agent_id',
        'policy_id',
        'status',
        'summary',
        'created_by',
        'created_at',
        'completed_at',
      ])
      .where('realm_id', '=', realmId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute(),
    records('deployment_profile'),
    records('support_access'),
    records('lawful_request'),
    db
      .selectFrom('governance_audit')
      .selectAll()
      .where('realm_id', '=', realmId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute(),
    findQuota(db, realmId),
  ]);
  return { policies, allowlist, datasets, runs, deployments, support, lawful, audit, quota };
}

/** Removes the realm's quota policy (no limits). */
export async function deleteQuota(db: Executor<EngineDb>, realmId: string): Promise<void> {
  await db.deleteFrom('governance_quota').where('realm_id', '=', realmId).execute();
}
