import { type Executor, fromJsonColumn, runIdempotent, toIsoString, withTransaction } from '@keel/core';
import type { Selectable } from 'kysely';
import type { GeoPrincipal } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import { mapRecord, withApiJson } from '../datasets/dataset-service.ts';
import { findRecord, insertRecords, pageRecords } from '../datasets/dataset-store.ts';
import type { ActionTransitionTable, GeoDb } from '../db/schema.ts';
import { GeoErrors } from '../errors.ts';
import { isUuid, normalizeUuid, uuidv7 } from '../ids.ts';
import { compareAndSetActionStatus, insertTransition, listTransitions } from './action-store.ts';

/**
 * The governed action workflow. Only `proposed → approval_review` is in the spec (tool
 * `geo_request_action_approval`, `geo:write`); the rest is ours: approve/reject (`geo:approve`), execute
 * (`geo:execute`, approved actions only). Every transition is a recorded row.
 */
export const ACTION_TRANSITIONS = {
  requestApproval: { from: ['proposed'], to: 'approval_review', permission: 'geo:write' },
  approve: { from: ['approval_review'], to: 'approved', permission: 'geo:approve' },
  reject: { from: ['approval_review'], to: 'rejected', permission: 'geo:approve' },
  execute: { from: ['approved'], to: 'executed', permission: 'geo:execute' },
} as const;
export type ActionTransition = keyof typeof ACTION_TRANSITIONS;

function mapTransition(row: Selectable<ActionTransitionTable>) {
  return {
    id: row.id,
    from: row.from_status,
    to: row.to_status,
    keyId: row.key_id,
    via: row.via,
    note: row.note,
    at: toIsoString(row.created_at),
  };
}

async function loadAction(db: Executor<GeoDb>, workspaceId: string, actionId: string) {
  const id = isUuid(actionId) ? normalizeUuid(actionId) : undefined;
  const row = id ? await findRecord(db, workspaceId, 'actions', id) : undefined;
  if (!row) throw GeoErrors.actionNotFound(actionId.slice(0, 40));
  return row;
}

export async function getAction(ctx: GeoContext, workspaceId: string, actionId: string) {
  const row = await loadAction(ctx.db, workspaceId, actionId);
  const transitions = await listTransitions(ctx.db, row.id);
  return { ...mapRecord(row), transitions: transitions.map(mapTransition) };
}

export interface DraftActionInput {
  workspaceId: string;
  title: string;
  kind: string;
  description?: string | undefined;
  payload?: Record<string, unknown> | undefined;
  recommendationId?: string | undefined;
}

/** Drafts an action in state `proposed` (`geo:draft`); nothing is executed or published. */
export async function draftAction(
  ctx: GeoContext,
  principal: GeoPrincipal,
  input: DraftActionInput,
  idempotencyKey: string | undefined,
) {
  const work = async (trx: Executor<GeoDb>) => {
    if (input.recommendationId !== undefined) {
      const recommendation = isUuid(input.recommendationId)
        ? await findRecord(trx, input.workspaceId, 'recommendations', normalizeUuid(input.recommendationId))
        : undefined;
      if (!recommendation) throw GeoErrors.actionNotFound(`recommendation ${input.recommendationId.slice(0, 40)}`);
    }
    const now = ctx.now().toISOString();
    const id = uuidv7();
    const data = {
      title: input.title,
      kind: input.kind,
      description: input.description ?? null,
      payload: input.payload ?? {},
      recommendationId: input.recommendationId ? normalizeUuid(input.recommendationId) : null,
      draftedBy: principal.keyId,
    };
    const evidence = input.recommendationId
      ? [{ type: 'recommendation', ref: normalizeUuid(input.recommendationId) }]
      : [];
    await insertRecords(trx, [
      withApiJson({
        id,
        workspace_id: input.workspaceId,
        dataset: 'actions',
        mode: '',
        record_key: null,
        definition_version: 'action/1',
        run_id: null,
        import_id: null,
        computed_at: now,
        data: JSON.stringify(data),
        confidence_value: null,
        confidence_low: null,
        confidence_high: null,
        evidence: JSON.stringify(evidence),
        status: 'proposed',
        subject_hash: null,
        created_at: now,
        updated_at: now,
      }),
    ]);
    const row = await findRecord(trx, input.workspaceId, 'actions', id);
    return { statusCode: 201, body: { ...mapRecord(row!), transitions: [] as ReturnType<typeof mapTransition>[] } };
  };
  if (idempotencyKey === undefined) return { ...(await withTransaction(ctx.db, work)), replayed: false };
  return runIdempotent(
    ctx.db,
    { scope: `${principal.tenantId}|POST /api/v1/geo/actions`, key: idempotencyKey, payload: input },
    work,
  );
}

/**
 * Moves an action along one transition with a compare-and-set on its status, and records the transition in the
 * same transaction: two concurrent moves cannot both succeed. A wrong state is a 409.
 */
export async function transitionAction(
  ctx: GeoContext,
  principal: GeoPrincipal,
  input: {
    workspaceId: string;
    actionId: string;
    transition: ActionTransition;
    note?: string | undefined;
    via: 'rest' | 'mcp';
  },
) {
  const rule = ACTION_TRANSITIONS[input.transition];
  await withTransaction(ctx.db, async (trx) => {
    const row = await loadAction(trx, input.workspaceId, input.actionId);
    const current = row.status ?? 'proposed';
    if (!(rule.from as readonly string[]).includes(current))
      throw GeoErrors.actionState(current, rule.from.join(' or '));
    const now = ctx.now().toISOString();
    const { api_json: _stale, ...current_row } = row;
    const moved = await compareAndSetActionStatus(trx, row.id, current, {
      status: rule.to,
      updated_at: now,
      api_json: withApiJson({ ...current_row, status: rule.to, updated_at: now }).api_json,
    });
    if (!moved) throw GeoErrors.actionState('changing concurrently', rule.from.join(' or '));
    await insertTransition(trx, {
      id: uuidv7(),
      workspace_id: input.workspaceId,
      action_id: row.id,
      from_status: current,
      to_status: rule.to,
      key_id: principal.keyId,
      via: input.via,
      note: input.note ?? null,
      created_at: now,
    });
  });
  return getAction(ctx, input.workspaceId, input.actionId);
}

/** Lists governed actions with their approval state (newest first). */
export async function listActionsWithState(ctx: GeoContext, workspaceId: string, limit: number) {
  const rows = await pageRecords(ctx.db, { workspaceId, dataset: 'actions', mode: '', limit, beforeId: undefined });
  return rows.map((row) => {
    const record = mapRecord(row);
    const data = fromJsonColumn<Record<string, unknown>>(row.data);
    return { ...record, title: data.title ?? null, approvalState: row.status };
  });
}
