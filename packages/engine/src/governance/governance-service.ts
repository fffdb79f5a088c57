import {
  checkIdempotencyKey,
  type Executor,
  fromJsonColumn,
  type IdempotentResponse,
  lockForTransaction,
  toIsoString,
} from '@keel/core';
import type { Transaction } from 'kysely';
import { createPiiScrubber, type PiiScrubber } from '../anonymous/pii-scrubber.ts';
import type { EngineDb } from '../db/schema.ts';
import { checkRealmField, type Permission, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { runWrite } from '../write.ts';
import {
  type AllowlistScope,
  governanceChanged,
  type PolicyRules,
  quotaOf,
  quotaUsage,
  toMicros,
} from './governance-enforcement.ts';
import { GovernanceErrors } from './governance-errors.ts';
import {
  type AllowlistRow,
  type AuditRow,
  activatePolicyRow,
  decideAllowlistRow,
  findAllowlist,
  findLatestPolicyVersion,
  findPolicy,
  insertAllowlist,
  insertAudit,
  insertPolicy,
  insertRecord,
  listRecords,
  listSnapshotRows,
  type PolicyRow,
  type QuotaRow,
  type RecordRow,
  supersedeActivePolicy,
  upsertQuota,
} from './governance-store.ts';

/** Each list of the snapshot holds at most this many entries, newest first. */
export const SNAPSHOT_LIMIT = 50;

/** Who may do what in governance (the spec leaves roles open; see the README's Governance section). */
const GOVERNANCE_READ: Permission = 'realm:manage';
const GOVERNANCE_WRITE: Permission = 'realm:manage';
/** Makers of allowlist requests and evaluation authors: developers and stronger. */
const GOVERNANCE_PROPOSE: Permission = 'config:write';

export { GOVERNANCE_PROPOSE };

/** A stored timestamp as ISO text (null stays null). */
export function iso(value: string | Date | null): string | null {
  return value === null ? null : toIsoString(value);
}

/** A governance write on the write path, honouring an optional `Idempotency-Key`, with its audit record. */
export function governanceWrite<T>(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  operation: string,
  rawKey: unknown,
  payload: unknown,
  work: (
    trx: Transaction<EngineDb>,
    audit: (entry: AuditEntry) => Promise<void>,
  ) => Promise<{ statusCode: number; body: T }>,
): Promise<IdempotentResponse<T>> {
  const realmId = principal.realmId!;
  const key = checkIdempotencyKey(rawKey, false);
  return runWrite(
    rt.engine,
    key === undefined ? undefined : { scope: `${principal.keyId}|${operation}`, key, payload },
    (trx) => work(trx, (entry) => writeAudit(trx, rt, realmId, principal.identityId, entry)),
  );
}

export interface AuditEntry {
  action: string;
  targetType: string;
  targetId: string;
  details?: Record<string, unknown>;
}

/** Records one governance action (actor, target, safe details; never secrets or personal data). */
export async function writeAudit(
  db: Executor<EngineDb>,
  rt: RuntimeContext,
  realmId: string,
  actorId: string,
  entry: AuditEntry,
): Promise<void> {
  await insertAudit(db, {
    id: newId(),
    realm_id: realmId,
    actor_id: actorId,
    action: entry.action,
    target_type: entry.targetType,
    target_id: entry.targetId,
    details: JSON.stringify(entry.details ?? {}),
    created_at: nowIso(rt),
  });
}

// ---- policies -------------------------------------------------------------------------------------------------

export interface PolicyInput {
  realm_id?: string | undefined;
  name: string;
  description?: string | null | undefined;
  rules?: Partial<PolicyRules> | undefined;
}

export function toPolicyView(row: PolicyRow) {
  return {
    id: row.id,
    realm_id: row.realm_id,
    version: row.version,
    name: row.name,
    description: row.description,
    rules: fromJsonColumn<PolicyRules>(row.rules),
    status: row.status,
    created_by: row.created_by,
    created_at: iso(row.created_at)!,
    activated_by: row.activated_by,
    activated_at: iso(row.activated_at),
  };
}

export function normalizeRules(rules: Partial<PolicyRules> = {}): PolicyRules {
  const unique = (list: string[] | null | undefined) => (list ? [...new Set(list)].sort() : null);
  return {
    allowed_actions: unique(rules.allowed_actions),
    allowed_tools: unique(rules.allowed_tools),
    allowed_provider_types: unique(rules.allowed_provider_types),
    data_handling: rules.data_handling ?? 'standard',
  };
}

/** Creates the realm's next policy version as a draft (versions are numbered per realm and never change). */
export function createPolicy(rt: RuntimeContext, principal: RuntimePrincipal, input: PolicyInput, rawKey: unknown) {
  const realmId = requirePermission(principal, GOVERNANCE_WRITE);
  checkRealmField(principal, input.realm_id);
  return governanceWrite(rt, principal, 'POST /api/v1/governance/policies', rawKey, input, async (trx, audit) => {
    await lockForTransaction(trx, `governance-policy:${realmId}`);
    const row: PolicyRow = {
      id: newId(),
      realm_id: realmId,
      version: (await findLatestPolicyVersion(trx, realmId)) + 1,
      name: input.name,
      description: input.description ?? null,
      rules: JSON.stringify(normalizeRules(input.rules)),
      status: 'draft',
      created_by: principal.identityId,
      created_at: nowIso(rt),
      activated_by: null,
      activated_at: null,
    };
    await insertPolicy(trx, row);
    await audit({
      action: 'policy.created',
      targetType: 'policy',
      targetId: row.id,
      details: { version: row.version },
    });
    return { statusCode: 201, body: toPolicyView(row) };
  });
}

/**
 * Activates a draft (or a superseded version, as a rollback) atomically: in one transaction the active version
 * becomes superseded and this one active; a unique index keeps one active version per realm even under races.
 * Executions already created keep the version pinned to them.
 */
export async function activatePolicy(rt: RuntimeContext, principal: RuntimePrincipal, id: string, rawKey: unknown) {
  const realmId = requirePermission(principal, GOVERNANCE_WRITE);
  const policyId = id.toLowerCase();
  const outcome = await governanceWrite(
    rt,
    principal,
    `POST /api/v1/governance/policies/${policyId}/activate`,
    rawKey,
    {},
    async (trx, audit) => {
      await lockForTransaction(trx, `governance-policy:${realmId}`);
      const row = await findPolicy(trx, realmId, policyId);
      if (!row) throw RuntimeErrors.notFound('Policy', id);
      if (row.status === 'active') throw GovernanceErrors.policyState(row.version, 'already active');
      const now = nowIso(rt);
      await supersedeActivePolicy(trx, realmId);
      if (
        !(await activatePolicyRow(trx, row.id, ['draft', 'superseded'], {
          activated_by: principal.identityId,
          activated_at: now,
        }))
      )
        throw GovernanceErrors.policyState(row.version, 'being activated by another request');
      await audit({
        action: 'policy.activated',
        targetType: 'policy',
        targetId: row.id,
        details: { version: row.version, from: row.status },
      });
      return {
        statusCode: 200,
        body: toPolicyView({ ...row, status: 'active', activated_by: principal.identityId, activated_at: now }),
      };
    },
  );
  await governanceChanged(rt, realmId);
  return outcome;
}

// ---- allowlist (maker-checker) --------------------------------------------------------------------------------

export interface AllowlistInput {
  realm_id?: string | undefined;
  scope: AllowlistScope;
  value: string;
  reason: string;
}

export function toAllowlistView(row: AllowlistRow) {
  return {
    id: row.id,
    realm_id: row.realm_id,
    scope: row.scope,
    value: row.value,
    reason: row.reason,
    status: row.status,
    requested_by: row.requested_by,
    created_at: iso(row.created_at)!,
    decided_by: row.decided_by,
    decided_at: iso(row.decided_at),
    decision_note: row.decision_note,
  };
}

/** A maker's request to add a value to a policy allowlist; it applies only once another member approves it. */
export function requestAllowlist(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: AllowlistInput,
  rawKey: unknown,
) {
  const realmId = requirePermission(principal, GOVERNANCE_PROPOSE);
  checkRealmField(principal, input.realm_id);
  return governanceWrite(rt, principal, 'POST /api/v1/governance/allowlist', rawKey, input, async (trx, audit) => {
    const row: AllowlistRow = {
      id: newId(),
      realm_id: realmId,
      scope: input.scope,
      value: input.value,
      reason: input.reason,
      status: 'pending',
      requested_by: principal.identityId,
      created_at: nowIso(rt),
      decided_by: null,
      decided_at: null,
      decision_note: null,
    };
    await insertAllowlist(trx, row);
    await audit({
      action: 'allowlist.requested',
      targetType: 'allowlist_request',
      targetId: row.id,
      details: { scope: row.scope, value: row.value },
    });
    return { statusCode: 201, body: toAllowlistView(row) };
  });
}

/** The checker's decision: never the maker (403), once only (409: decisions are final). */
export async function decideAllowlist(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: { decision: 'approve' | 'reject'; note?: string | null | undefined },
  rawKey: unknown,
) {
  const realmId = requirePermission(principal, GOVERNANCE_WRITE);
  const requestId = id.toLowerCase();
  const outcome = await governanceWrite(
    rt,
    principal,
    `POST /api/v1/governance/allowlist/${requestId}/decision`,
    rawKey,
    input,
    async (trx, audit) => {
      const row = await findAllowlist(trx, realmId, requestId);
      if (!row) throw RuntimeErrors.notFound('Allowlist request', id);
      if (row.requested_by === principal.identityId) throw GovernanceErrors.ownRequest(row.id);
      if (row.status !== 'pending') throw GovernanceErrors.alreadyDecided(row.id, row.status);
      const set = {
        status: input.decision === 'approve' ? 'approved' : 'rejected',
        decided_by: principal.identityId,
        decided_at: nowIso(rt),
        decision_note: input.note ?? null,
      };
      if (!(await decideAllowlistRow(trx, row.id, set))) throw GovernanceErrors.alreadyDecided(row.id, 'decided');
      await audit({
        action: `allowlist.${set.status}`,
        targetType: 'allowlist_request',
        targetId: row.id,
        details: { scope: row.scope, value: row.value },
      });
      return { statusCode: 200, body: toAllowlistView({ ...row, ...set }) };
    },
  );
  await governanceChanged(rt, realmId);
  return outcome;
}

// ---- quotas ---------------------------------------------------------------------------------------------------

export interface QuotaInput {
  realm_id?: string | undefined;
  window_seconds: number;
  max_requests?: number | null | undefined;
  max_tokens?: number | null | undefined;
  max_cost?: string | null | undefined;
  max_tool_calls?: number | null | undefined;
  notify_at_percent?: number[] | null | undefined;
}

export function toQuotaView(row: QuotaRow) {
  return {
    realm_id: row.realm_id,
    window_seconds: row.window_seconds,
    max_requests: row.max_requests,
    max_tokens: row.max_tokens === null ? null : Number(row.max_tokens),
    max_cost: row.max_cost,
    max_tool_calls: row.max_tool_calls,
    notify_at_percent: fromJsonColumn<number[] | null>(row.notify_at_percent ?? null) ?? [],
    updated_by: row.updated_by,
    updated_at: iso(row.updated_at)!,
  };
}

/** The stored quota policy of an input: at least one limit (400 otherwise), the cost exact to 6 places. */
export function quotaRow(
  realmId: string,
  input: Omit<QuotaInput, 'realm_id'>,
  actor: { identityId: string; now: string },
): QuotaRow {
  const limits = [input.max_requests, input.max_tokens, input.max_cost, input.max_tool_calls];
  if (limits.every((limit) => limit === undefined || limit === null))
    throw RuntimeErrors.invalid('Set at least one of max_requests, max_tokens, max_cost, max_tool_calls');
  return {
    realm_id: realmId,
    window_seconds: input.window_seconds,
    max_requests: input.max_requests ?? null,
    max_tokens: input.max_tokens ?? null,
    max_cost: input.max_cost === undefined || input.max_cost === null ? null : String(toMicros(input.max_cost) / 1e6),
    max_tool_calls: input.max_tool_calls ?? null,
    notify_at_percent: input.notify_at_percent?.length
      ? JSON.stringify([...new Set(input.notify_at_percent)].sort((a, b) => a - b))
      : null,
    updated_by: actor.identityId,
    updated_at: actor.now,
  };
}

/** Creates or replaces the realm's quota policy; every instance applies it within 5 s (at once on this one). */
export async function putQuota(rt: RuntimeContext, principal: RuntimePrincipal, input: QuotaInput) {
  const realmId = requirePermission(principal, GOVERNANCE_WRITE);
  checkRealmField(principal, input.realm_id);
  const row = quotaRow(realmId, input, { identityId: principal.identityId, now: nowIso(rt) });
  const outcome = await governanceWrite(
    rt,
    principal,
    'PUT /api/v1/governance/quotas',
    undefined,
    input,
    async (trx, audit) => {
      await upsertQuota(trx, row);
      const { realm_id: _realm, updated_by: _by, updated_at: _at, ...details } = toQuotaView(row);
      await audit({ action: 'quota.replaced', targetType: 'quota', targetId: realmId, details });
      return { statusCode: 200, body: toQuotaView(row) };
    },
  );
  await governanceChanged(rt, realmId);
  return outcome.body;
}

// ---- deployment profiles, support access, lawful requests -----------------------------------------------------

export type RecordKind = 'deployment_profile' | 'support_access' | 'lawful_request';

const scrubbers = new WeakMap<RuntimeContext, PiiScrubber>();

/** Guard's detector (in process), shared by the governance writes that must never hold personal data. */
export function scrubberOf(rt: RuntimeContext): PiiScrubber {
  let scrubber = scrubbers.get(rt);
  if (!scrubber) {
    scrubber = createPiiScrubber();
    scrubbers.set(rt, scrubber);
  }
  return scrubber;
}

/** Refuses (400 GOVERNANCE_RAW_PII) any string in `value` in which guard's detector finds personal data. */
export function rejectPersonalData(rt: RuntimeContext, value: unknown, path: string): void {
  const scrubber = scrubberOf(rt);
  const visit = (node: unknown, at: string): void => {
    if (typeof node === 'string') {
      const found = scrubber.find(node);
      if (found.length > 0) throw GovernanceErrors.rawPii(found[0]!, at);
    } else if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) visit(item, `${at}/${i}`);
    } else if (node && typeof node === 'object')
      for (const [key, item] of Object.entries(node)) visit(item, `${at}/${key}`);
  };
  visit(value, path);
}

export function toRecordView(rt: RuntimeContext, row: RecordRow) {
  const data = fromJsonColumn<Record<string, unknown>>(row.data);
  const view: { id: string; realm_id: string; created_by: string; created_at: string; [field: string]: unknown } = {
    id: row.id,
    realm_id: row.realm_id,
    ...data,
    created_by: row.created_by,
    created_at: iso(row.created_at)!,
  };
  if (row.kind === 'support_access')
    view.status = rt.clock() >= Date.parse(iso(row.expires_at)!) ? 'expired' : 'active';
  return view;
}

/**
 * Records a deployment profile, support access grant or lawful-request metadata (`data` already validated by the
 * route schema); strings are checked for personal data first: these are metadata, never content.
 */
export function createRecord(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  kind: RecordKind,
  input: Record<string, unknown>,
  rawKey: unknown,
  options: { data: Record<string, unknown>; expiresAt?: string; operation: string; audit: Record<string, unknown> },
) {
  requirePermission(principal, GOVERNANCE_WRITE);
  checkRealmField(principal, input.realm_id as string | undefined);
  rejectPersonalData(rt, options.data, 'body');
  return governanceWrite(rt, principal, options.operation, rawKey, input, async (trx, audit) => {
    const row: RecordRow = {
      id: newId(),
      realm_id: principal.realmId!,
      kind,
      data: JSON.stringify(options.data),
      expires_at: options.expiresAt ?? null,
      created_by: principal.identityId,
      created_at: nowIso(rt),
    };
    await insertRecord(trx, row);
    await audit({ action: `${kind}.created`, targetType: kind, targetId: row.id, details: options.audit });
    return { statusCode: 201, body: toRecordView(rt, row) };
  });
}

/** Support access grants of the realm, newest first (keyset pages); `status` filters on the computed state. */
export async function listSupportAccess(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined; status?: 'active' | 'expired' | undefined },
) {
  const realmId = requirePermission(principal, GOVERNANCE_READ);
  const rows = await listRecords(rt.db, realmId, 'support_access', {
    afterId: cursorAfterId('support-access', query.cursor),
    limit: query.limit + 1,
    status: query.status,
    now: nowIso(rt),
  });
  return idPage('support-access', rows, query.limit, (row) => toRecordView(rt, row));
}

// ---- snapshot -------------------------------------------------------------------------------------------------

function toAuditView(row: AuditRow) {
  return {
    id: row.id,
    actor_id: row.actor_id,
    action: row.action,
    target_type: row.target_type,
    target_id: row.target_id,
    details: fromJsonColumn<Record<string, unknown>>(row.details),
    created_at: iso(row.created_at)!,
  };
}

/** The realm's governance at a glance: every list newest first and bounded by SNAPSHOT_LIMIT. */
export async function getSnapshot(rt: RuntimeContext, principal: RuntimePrincipal) {
  const realmId = requirePermission(principal, GOVERNANCE_READ);
  const rows = await listSnapshotRows(rt.db, realmId, SNAPSHOT_LIMIT);
  const quota = quotaOf(rows.quota);
  const policies = rows.policies.map(toPolicyView);
  return {
    realm_id: realmId,
    limit: SNAPSHOT_LIMIT,
    active_policy: policies.find((p) => p.status === 'active') ?? null,
    policies,
    allowlist: rows.allowlist.map(toAllowlistView),
    quota: rows.quota ? { ...toQuotaView(rows.quota), usage: await quotaUsage(rt, realmId, quota!) } : null,
    datasets: rows.datasets.map((row) => ({
      id: row.id,
      name: row.name,
      kind: row.kind,
      case_count: row.case_count,
      approval: fromJsonColumn<Record<string, unknown> | null>(row.approval),
      created_by: row.created_by,
      created_at: iso(row.created_at)!,
    })),
    evaluation_runs: rows.runs.map((row) => ({
      id: row.id,
      dataset_id: row.dataset_id,
      mode: row.mode,
      agent_id: row.agent_id,
      policy_id: row.policy_id,
      status: row.status,
      summary: fromJsonColumn<Record<string, unknown>>(row.summary),
      created_by: row.created_by,
      created_at: iso(row.created_at)!,
      completed_at: iso(row.completed_at),
    })),
    deployments: rows.deployments.map((row) => toRecordView(rt, row)),
    support_access: rows.support.map((row) => toRecordView(rt, row)),
    lawful_requests: rows.lawful.map((row) => toRecordView(rt, row)),
    audit: rows.audit.map(toAuditView),
  };
}
