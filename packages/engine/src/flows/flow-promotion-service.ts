import {
  checkIdempotencyKey,
  createError,
  decodeCursor,
  encodeCursor,
  type IdempotentResponse,
  lockForTransaction,
  toIsoString,
} from '@keel/core';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { runWrite } from '../write.ts';
import { FlowErrors } from './flow-errors.ts';
import {
  type FlowBindingRow,
  type FlowPromotionRow,
  findPromotion,
  insertPromotion,
  listBindings,
  listPromotionRows,
  upsertBinding,
} from './flow-promotion-store.ts';
import { invalidCursor, requireFlow } from './flow-service.ts';
import { findFlow, findFlowVersion } from './flow-store.ts';

const outOfOrder = createError(
  'FLOW_PROMOTION_OUT_OF_ORDER',
  'Promotion goes development → qa → uat → production, one stage at a time: %s',
  409,
);

/** The promotion stages, in order: a version reaches a stage only from the one before it. */
export const ENVIRONMENTS = ['development', 'qa', 'uat', 'production'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export interface PromoteInput {
  environment: Environment;
  version?: number | undefined;
  note?: string | undefined;
}

function bindingsView(rows: readonly FlowBindingRow[]) {
  const byEnvironment = new Map(rows.map((row) => [row.environment, row]));
  return Object.fromEntries(
    ENVIRONMENTS.map((environment) => {
      const row = byEnvironment.get(environment);
      return [
        environment,
        row ? { version: row.version, promotion_id: row.promotion_id, bound_at: toIsoString(row.updated_at) } : null,
      ];
    }),
  ) as Record<Environment, { version: number; promotion_id: string; bound_at: string } | null>;
}

function toPromotionView(row: FlowPromotionRow) {
  return {
    id: row.id,
    flow_id: row.flow_id,
    from_environment: row.from_environment as Environment | null,
    environment: row.to_environment as Environment,
    version: row.version,
    replaced_version: row.replaced_version,
    note: row.note,
    promoted_by: row.promoted_by,
    promoted_at: toIsoString(row.created_at),
  };
}

/**
 * Promotes a flow version to an environment. `development` binds a published version (`version`, default the
 * active version, else the newest published one); `qa`, `uat` and `production` take the version bound in the stage
 * before (`version`, when sent, must be that version). Each promotion is recorded; promoting the version an
 * environment already has answers the bindings as they are and records nothing.
 */
export async function promoteFlow(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: PromoteInput,
  idempotencyKey: unknown,
): Promise<IdempotentResponse<unknown>> {
  const realmId = requirePermission(principal, 'config:write');
  const key = checkIdempotencyKey(idempotencyKey, false);
  const flow = await requireFlow(rt, realmId, id);
  return runWrite<unknown>(
    rt.engine,
    key === undefined
      ? undefined
      : { scope: `${principal.keyId}|POST /api/v1/runtime/flows/${flow.id}/promote`, key, payload: input },
    async (trx) => {
      await lockForTransaction(trx, `flow|${flow.id}`);
      const current = await findFlow(trx, realmId, flow.id);
      if (!current) throw RuntimeErrors.notFound('Flow', id);
      if (current.status === 'archived') throw FlowErrors.archived(flow.id);
      const bindings = await listBindings(trx, flow.id);
      const bound = (environment: string) => bindings.find((row) => row.environment === environment);
      const stage = ENVIRONMENTS.indexOf(input.environment);
      const from = stage === 0 ? null : ENVIRONMENTS[stage - 1]!;
      let version: number;
      if (from === null) {
        const wanted = input.version ?? current.active_version ?? current.published_version;
        if (wanted === null) throw FlowErrors.notPublished(`of flow ${flow.id} (none is published yet)`);
        const row = await findFlowVersion(trx, realmId, flow.id, wanted);
        if (!row) throw RuntimeErrors.notFound('Flow version', `${flow.id}@${wanted}`);
        if (row.status !== 'published') throw FlowErrors.notPublished(`${flow.id}@${wanted}`);
        version = wanted;
      } else {
        const previous = bound(from);
        if (!previous) throw outOfOrder(`${input.environment} is promoted from ${from}, which has no version bound`);
        if (input.version !== undefined && input.version !== previous.version)
          throw outOfOrder(`version ${input.version} is not the version bound in ${from} (${previous.version})`);
        version = previous.version;
      }
      const replaced = bound(input.environment);
      if (replaced?.version === version)
        return {
          statusCode: 200,
          body: { flow_id: flow.id, promotion: null, bindings: bindingsView(bindings) },
        };
      const now = nowIso(rt);
      const promotionId = newId();
      await insertPromotion(trx, {
        id: promotionId,
        flow_id: flow.id,
        realm_id: realmId,
        from_environment: from,
        to_environment: input.environment,
        version,
        replaced_version: replaced?.version ?? null,
        note: input.note ?? null,
        promoted_by: principal.identityId,
        created_at: now,
      });
      await upsertBinding(trx, {
        flow_id: flow.id,
        environment: input.environment,
        realm_id: realmId,
        version,
        promotion_id: promotionId,
        updated_at: now,
      });
      const promotion = (await findPromotion(trx, flow.id, promotionId))!;
      return {
        statusCode: 200,
        body: {
          flow_id: flow.id,
          promotion: toPromotionView(promotion),
          bindings: bindingsView(await listBindings(trx, flow.id)),
        },
      };
    },
  );
}

/** The environment bindings of a flow and its promotion record, newest first. */
export async function listPromotions(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  query: { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const flow = await requireFlow(rt, realmId, id);
  const kind = `flow-promotions|${flow.id}`;
  const position = decodeCursor(kind, query.cursor, ['string'] as const, invalidCursor);
  const rows = await listPromotionRows(rt.db, flow.id, { limit: query.limit, before: position?.[0] });
  const page = rows.slice(0, query.limit);
  return {
    flow_id: flow.id,
    bindings: bindingsView(await listBindings(rt.db, flow.id)),
    data: page.map(toPromotionView),
    next_cursor: rows.length > query.limit ? encodeCursor(kind, [page.at(-1)!.id]) : null,
  };
}
