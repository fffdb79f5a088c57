import {
  type Executor,
  fromJsonColumn,
  type IdempotentResponse,
  runIdempotent,
  toIsoString,
  withTransaction,
} from '@keel/core';
import type { Selectable } from 'kysely';
import type { GeoPrincipal } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import type { GeoDb, PrivacyRequestTable } from '../db/schema.ts';
import { GeoErrors } from '../errors.ts';
import { generateExport, insertExportJob } from '../exports/export-service.ts';
import {
  deleteExportChunks,
  findExport,
  findExportStatus,
  subjectExportIds,
  updateExport,
} from '../exports/export-store.ts';
import { uuidv7 } from '../ids.ts';
import { findWorkspaceTenant } from '../tenancy/tenancy-store.ts';
import { deleteSubjectRows, insertPrivacyRequest, pagePrivacyRequests, updatePrivacyRequest } from './privacy-store.ts';
import { hashSubject, redactHash, workspaceSecret } from './subject-hash.ts';

export function mapPrivacyRequest(row: Selectable<PrivacyRequestTable>) {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    type: row.type as 'access' | 'deletion',
    status: row.status,
    subjectHash: redactHash(row.subject_hash),
    result: row.result === null ? null : fromJsonColumn<Record<string, unknown>>(row.result),
    exportId: row.export_id,
    createdAt: toIsoString(row.created_at),
    completedAt: row.completed_at === null ? null : toIsoString(row.completed_at),
  };
}

/**
 * Records a pseudonymous access or deletion request: the subject identifier is hashed with the workspace's
 * secret before anything is stored or logged, and never kept in clear. Processing happens in the background.
 * With an `Idempotency-Key`, a retry of the same request (same type and subject) answers the first receipt and
 * queues nothing new; the stored fingerprint covers the subject's hash, never the subject.
 */
export async function submitPrivacyRequest(
  ctx: GeoContext,
  principal: GeoPrincipal,
  input: { workspaceId: string; type: 'access' | 'deletion'; subject: string },
  idempotencyKey?: string,
): Promise<IdempotentResponse<ReturnType<typeof mapPrivacyRequest>>> {
  const subject = input.subject.trim();
  if (subject.length === 0) throw GeoErrors.privacyInvalid('subject must not be blank');
  const secret = await workspaceSecret(ctx, input.workspaceId);
  const subjectHash = hashSubject(secret, subject);
  const work = async (trx: Executor<GeoDb>) => {
    const row = {
      id: uuidv7(),
      workspace_id: input.workspaceId,
      type: input.type,
      subject_hash: subjectHash,
      status: 'pending',
      attempts: 0,
      claimed_by: null,
      claimed_at: null,
      result: null,
      export_id: null,
      created_at: ctx.now().toISOString(),
      completed_at: null,
    };
    await insertPrivacyRequest(trx, row);
    return { statusCode: 202, body: mapPrivacyRequest(row as Selectable<PrivacyRequestTable>) };
  };
  if (idempotencyKey === undefined) return { ...(await work(ctx.db)), replayed: false };
  return runIdempotent(
    ctx.db,
    {
      scope: `${principal.tenantId}|POST /api/v1/geo/privacy`,
      key: idempotencyKey,
      payload: { workspaceId: input.workspaceId, type: input.type, subjectHash },
    },
    work,
  );
}

export async function listPrivacyRequests(
  ctx: GeoContext,
  workspaceId: string,
  limit: number,
  cursor: string | undefined,
) {
  const rows = await pagePrivacyRequests(ctx.db, workspaceId, limit + 1, decodeCursor('pr', cursor));
  const { rows: page, next } = pageOf('pr', rows, limit);
  return {
    items: page.map(mapPrivacyRequest),
    nextCursor: next,
  };
}

async function deleteSubject(trx: Executor<GeoDb>, workspaceId: string, subjectHash: string) {
  const deleted = await deleteSubjectRows(trx, workspaceId, subjectHash);
  // Earlier access exports hold the subject's data too.
  const exports = await subjectExportIds(trx, workspaceId, subjectHash);
  for (const { id } of exports) {
    await deleteExportChunks(trx, id);
    await updateExport(trx, id, { status: 'failed', error: 'deleted with its subject' });
  }
  return {
    eventsDeleted: deleted.events,
    derivedRowsDeleted: deleted.records,
    exportsDeleted: exports.length,
  };
}

/** Processes one claimed request: an access request produces an export of the subject's data; a deletion removes it. */
export async function processPrivacyRequest(ctx: GeoContext, request: Selectable<PrivacyRequestTable>): Promise<void> {
  const done = async (result: Record<string, unknown>, exportId: string | null) =>
    updatePrivacyRequest(ctx.db, request.id, {
      status: 'completed',
      result: JSON.stringify(result),
      export_id: exportId,
      completed_at: ctx.now().toISOString(),
    });
  if (request.type === 'deletion') {
    const result = await withTransaction(ctx.db, (trx) =>
      deleteSubject(trx, request.workspace_id, request.subject_hash),
    );
    await done(result, null);
    return;
  }
  const tenantId = await findWorkspaceTenant(ctx.db, request.workspace_id);
  if (tenantId === undefined) throw new Error('the workspace of a privacy request is gone');
  const summary = await insertExportJob(ctx, {
    tenantId,
    workspaceId: request.workspace_id,
    source: 'privacy_access',
    dataset: null,
    reportId: null,
    subjectHash: request.subject_hash,
    format: 'ndjson',
  });
  const job = await findExport(ctx.db, summary.id);
  if (!job) throw new Error('access export not found');
  await updateExport(ctx.db, job.id, {
    status: 'processing',
    claimed_by: 'privacy',
    claimed_at: ctx.now().toISOString(),
  });
  await generateExport(ctx, job);
  const generated = await findExportStatus(ctx.db, job.id);
  if (generated?.status !== 'ready') throw new Error('access export failed');
  await done({ eventsExported: Number(generated.row_count ?? 0) }, job.id);
}
