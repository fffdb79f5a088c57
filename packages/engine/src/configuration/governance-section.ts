import { canonicalJson, fromJsonColumn, lockForTransaction } from '@keel/core';
import { governanceChanged, type PolicyRules } from '../governance/governance-enforcement.ts';
import { normalizeRules, quotaRow, toQuotaView, writeAudit } from '../governance/governance-service.ts';
import {
  activatePolicyRow,
  deleteQuota,
  findActivePolicy,
  findLatestPolicyVersion,
  findQuota,
  insertPolicy,
  type PolicyRow,
  type QuotaRow,
  supersedeActivePolicy,
  upsertQuota,
} from '../governance/governance-store.ts';
import { newId } from '../ids.ts';
import type { GovernanceItem } from './configuration-schemas.ts';
import { about, type ConfigSection, REALM_KEY } from './configuration-sections.ts';

type Quota = NonNullable<GovernanceItem['quota']>;
/** Rules as stored (normalized: every field present, lists sorted). */
type Rules = NonNullable<GovernanceItem['policy']>['rules'];

function quotaItem(row: QuotaRow): Quota {
  const { realm_id: _r, updated_by: _b, updated_at: _a, ...limits } = toQuotaView(row);
  return limits;
}

/**
 * The realm's governance configuration: the content of the active policy version and the quota policy (allowlist
 * decisions, datasets, support access and lawful requests are records, not configuration, and deployment profiles
 * are governance records too). A changed policy becomes the realm's next version, created as a draft and activated
 * in the deploy's transaction (executions keep the version pinned to them); an unchanged one creates nothing.
 * Writing it needs realm:manage, as the governance routes do.
 */
export const governanceSection: ConfigSection<
  GovernanceItem,
  { policy: PolicyRow | undefined; quota: QuotaRow | undefined },
  GovernanceItem
> = {
  name: 'governance',
  single: true,
  permission: 'realm:manage',
  key: () => REALM_KEY,
  async read(db, realmId) {
    const [policy, quota] = await Promise.all([findActivePolicy(db, realmId), findQuota(db, realmId)]);
    return [
      {
        row: { policy, quota },
        item: {
          policy: policy
            ? {
                name: policy.name,
                description: policy.description,
                rules: fromJsonColumn<PolicyRules>(policy.rules) as Rules,
              }
            : null,
          quota: quota ? quotaItem(quota) : null,
        },
      },
    ];
  },
  async prepare(ctx, item) {
    return about('governance', () => ({
      policy: item.policy ? { ...item.policy, rules: normalizeRules(item.policy.rules) as Rules } : null,
      quota: item.quota
        ? quotaItem(quotaRow(ctx.realmId, item.quota, { identityId: ctx.identityId, now: ctx.now }))
        : null,
    }));
  },
  async desired(_db, _ctx, prepared) {
    return { item: prepared, secret: { kind: 'none' }, secretChanged: false, missingCredential: null };
  },
  async write(trx, ctx, prepared, desired, current) {
    const audit = (action: string, targetType: string, targetId: string, details: Record<string, unknown>) =>
      writeAudit(trx, ctx.rt, ctx.realmId, ctx.identityId, { action, targetType, targetId, details });
    const was = current?.item;
    if (canonicalJson(was?.policy ?? null) !== canonicalJson(desired.item.policy)) {
      await lockForTransaction(trx, `governance-policy:${ctx.realmId}`);
      const superseded = await supersedeActivePolicy(trx, ctx.realmId);
      if (prepared.policy) {
        const row: PolicyRow = {
          id: newId(),
          realm_id: ctx.realmId,
          version: (await findLatestPolicyVersion(trx, ctx.realmId)) + 1,
          name: prepared.policy.name,
          description: prepared.policy.description,
          rules: JSON.stringify(prepared.policy.rules),
          status: 'draft',
          created_by: ctx.identityId,
          created_at: ctx.now,
          activated_by: null,
          activated_at: null,
        };
        await insertPolicy(trx, row);
        await audit('policy.created', 'policy', row.id, { version: row.version, source: 'configuration' });
        await activatePolicyRow(trx, row.id, ['draft'], { activated_by: ctx.identityId, activated_at: ctx.now });
        await audit('policy.activated', 'policy', row.id, { version: row.version, from: 'draft' });
      } else if (superseded > 0 && current?.row.policy)
        await audit('policy.superseded', 'policy', current.row.policy.id, { version: current.row.policy.version });
    }
    if (canonicalJson(was?.quota ?? null) !== canonicalJson(prepared.quota)) {
      if (prepared.quota) {
        const row = quotaRow(ctx.realmId, prepared.quota, { identityId: ctx.identityId, now: ctx.now });
        await upsertQuota(trx, row);
        await audit('quota.replaced', 'quota', ctx.realmId, quotaItem(row));
      } else {
        await deleteQuota(trx, ctx.realmId);
        await audit('quota.removed', 'quota', ctx.realmId, {});
      }
    }
  },
  async remove() {},
  async committed(rt, realmId) {
    await governanceChanged(rt, realmId);
  },
};
