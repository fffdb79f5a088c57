import { constantTimeEqual, fromJsonColumn, generateKey, sha256Hex, toBoolean, toIsoString } from '@keel/core';
import { loadAgent } from '../agents/agent-service.ts';
import { deleteSessionContext } from '../flows/flow-chat-store.ts';
import { findMemberIdentity } from '../identity/identity-store.ts';
import { allows, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { forgetKnowledgeItems } from '../knowledge/knowledge-store.ts';
import { checkJson } from '../runtime/json-bounds.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import {
  deleteSessionMessages,
  deleteSessionRow,
  deleteSessionState,
  endActiveSession,
  findSessionRow,
  insertSession,
  listSessionRows,
  type SessionRow,
  swapResumeToken,
  updateSessionRow,
} from './session-store.ts';

/** Messages one session keeps at most. */
export const MAX_SESSION_MESSAGES = 1000;

/** A session as a run needs it. */
export interface SessionRecord {
  id: string;
  realmId: string;
  agentId: string;
  flowId: string | null;
  subjectType: string;
  subjectId: string;
  channel: string | null;
  ttlSeconds: number;
  transcriptRetention: boolean;
  summary: string | null;
  messageCount: number;
  metadata: Record<string, unknown> | null;
}

export function toSessionRecord(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    agentId: row.agent_id,
    flowId: row.flow_id,
    subjectType: row.subject_type,
    subjectId: row.subject_id,
    channel: row.channel,
    ttlSeconds: row.ttl_seconds,
    transcriptRetention: toBoolean(row.transcript_retention),
    summary: row.summary,
    messageCount: row.message_count,
    metadata: row.metadata === null ? null : fromJsonColumn(row.metadata),
  };
}

/** `active` sessions past `expires_at` are `expired`; `completed` and `cancelled` are final. */
export function effectiveStatus(row: SessionRow, now: number): string {
  if (row.status === 'active' && new Date(toIsoString(row.expires_at)).getTime() <= now) return 'expired';
  return row.status;
}

export function toSessionView(row: SessionRow, now: number) {
  return {
    session_id: row.id,
    realm_id: row.realm_id,
    agent_id: row.agent_id,
    flow_id: row.flow_id,
    subject_type: row.subject_type,
    subject_id: row.subject_id,
    channel: row.channel,
    status: effectiveStatus(row, now),
    label: row.label,
    metadata: row.metadata === null ? null : fromJsonColumn<Record<string, unknown>>(row.metadata),
    transcript_retention: toBoolean(row.transcript_retention),
    ttl_seconds: row.ttl_seconds,
    expires_at: toIsoString(row.expires_at),
    message_count: row.message_count,
    summary: row.summary,
    summary_updated_at: row.summary_updated_at === null ? null : toIsoString(row.summary_updated_at),
    created_by: row.created_by,
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
    ended_at: row.ended_at === null ? null : toIsoString(row.ended_at),
  };
}

function newResumeToken(): { token: string; hash: string } {
  const token = generateKey('srt');
  return { token, hash: sha256Hex(token) };
}

/**
 * The session, when the caller may act for its subject: the subject user itself (a `user` session whose
 * subject is the caller), or anyone presenting the session's current resume token. A session id alone
 * authorizes nothing. `adminMay` lets realm admins through too (erasure).
 */
export async function accessSession(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  realmId: string,
  sessionId: string,
  resumeToken: string | undefined,
  options: { adminMay?: boolean } = {},
): Promise<SessionRow> {
  const row = await findSessionRow(rt.db, realmId, sessionId);
  if (!row) throw RuntimeErrors.notFound('Session', sessionId);
  if (row.subject_type === 'user' && row.subject_id === principal.identityId) return row;
  if (
    resumeToken !== undefined &&
    resumeToken.length <= 256 &&
    constantTimeEqual(sha256Hex(resumeToken), row.resume_token_hash)
  )
    return row;
  if (options.adminMay && allows(principal.role, 'realm:manage')) return row;
  throw RuntimeErrors.resumeTokenInvalid();
}

function requireActive(row: SessionRow, now: number): void {
  const status = effectiveStatus(row, now);
  if (status !== 'active') throw RuntimeErrors.sessionNotActive(row.id, status);
}

export interface SessionCreateInput {
  agent_id: string;
  flow_id?: string | undefined;
  subject_type?: 'external' | 'user' | 'anonymous' | undefined;
  subject_id?: string | undefined;
  channel?: string | undefined;
  ttl_seconds?: number | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  transcript_retention?: boolean | undefined;
  label?: string | undefined;
}

/** A new session: its id, a resume token shown once (stored as SHA-256) and its expiry. */
export async function createSession(rt: RuntimeContext, principal: RuntimePrincipal, input: SessionCreateInput) {
  const realmId = requirePermission(principal, 'runtime:run');
  const agent = await loadAgent(rt, realmId, input.agent_id);
  if (!agent) throw RuntimeErrors.notFound('Agent', input.agent_id);
  if (agent.status !== 'active') throw RuntimeErrors.agentNotReady(agent.id, 'the agent identity is disabled');
  const flowId = input.flow_id?.toLowerCase() ?? null;
  if (flowId && !(await rt.extensions.flows?.exists(realmId, flowId))) throw RuntimeErrors.notFound('Flow', flowId);
  const subjectType = input.subject_type ?? 'anonymous';
  let subjectId: string;
  if (subjectType === 'anonymous') {
    if (input.subject_id !== undefined) throw RuntimeErrors.invalid('subject_id is generated for anonymous sessions');
    subjectId = `anon_${newId().replace(/-/g, '')}`;
  } else {
    if (!input.subject_id) throw RuntimeErrors.invalid(`subject_id is required for subject_type ${subjectType}`);
    subjectId = input.subject_id;
    if (subjectType === 'user') {
      // A user subject is an identity of the realm; an id from elsewhere is unknown.
      const member = await findMemberIdentity(rt.db, realmId, subjectId.toLowerCase());
      if (member?.user_type !== 'user') throw RuntimeErrors.notFound('User', subjectId);
      subjectId = member.id;
    }
  }
  checkJson(input.metadata, 'metadata');
  rt.scanner.reject(input.metadata, 'body/metadata', 'conversation');
  const ttl = input.ttl_seconds ?? rt.config.sessionTtlSeconds;
  const now = rt.clock();
  const resume = newResumeToken();
  const row: SessionRow = {
    id: newId(now),
    realm_id: realmId,
    agent_id: agent.id,
    flow_id: flowId,
    subject_type: subjectType,
    subject_id: subjectId,
    channel: input.channel ?? null,
    status: 'active',
    resume_token_hash: resume.hash,
    resume_token_version: 1,
    ttl_seconds: ttl,
    expires_at: new Date(now + ttl * 1000).toISOString(),
    label: input.label ?? null,
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    transcript_retention: input.transcript_retention ?? false,
    summary: null,
    summary_updated_at: null,
    message_count: 0,
    created_by: principal.identityId,
    created_at: new Date(now).toISOString(),
    updated_at: new Date(now).toISOString(),
    ended_at: null,
  };
  await inTransaction(rt.engine, (trx) => insertSession(trx, row));
  return {
    session_id: row.id,
    resume_token: resume.token,
    expires_at: toIsoString(row.expires_at),
    session: toSessionView(row, now),
  };
}

export async function listSessions(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: {
    limit: number;
    cursor?: string | undefined;
    agent_id?: string | undefined;
    status?: string | undefined;
    subject_type?: string | undefined;
    channel?: string | undefined;
  },
) {
  const realmId = requirePermission(principal, 'config:read');
  const now = rt.clock();
  const rows = await listSessionRows(
    rt.db,
    realmId,
    {
      afterId: cursorAfterId('sessions', query.cursor),
      agentId: query.agent_id?.toLowerCase(),
      subjectType: query.subject_type,
      channel: query.channel,
      status: query.status,
      now: new Date(now).toISOString(),
    },
    query.limit + 1,
  );
  return idPage('sessions', rows, query.limit, (row) => toSessionView(row, now));
}

export async function getSession(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  return toSessionView(row, rt.clock());
}

/** The effective state of a session, without its resume token (no transcript, no metadata). */
export async function getSessionStatus(rt: RuntimeContext, principal: RuntimePrincipal, sessionId: string) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await findSessionRow(rt.db, realmId, sessionId);
  if (!row) throw RuntimeErrors.notFound('Session', sessionId);
  return {
    session_id: row.id,
    status: effectiveStatus(row, rt.clock()),
    expires_at: toIsoString(row.expires_at),
    has_pinned_flow: row.flow_id !== null,
    ended_at: row.ended_at === null ? null : toIsoString(row.ended_at),
  };
}

export interface SessionUpdateInput {
  label?: string | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  channel?: string | null | undefined;
  ttl_seconds?: number | undefined;
  transcript_retention?: boolean | undefined;
}

/** PUT (replace: unsent fields are cleared or take defaults) or PATCH (only sent fields) of an active session. */
export async function updateSession(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
  input: SessionUpdateInput,
  replace: boolean,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  const now = rt.clock();
  requireActive(row, now);
  checkJson(input.metadata, 'metadata');
  rt.scanner.reject(input.metadata, 'body/metadata', 'conversation');
  const changes: Partial<SessionRow> = { updated_at: new Date(now).toISOString() };
  if (replace || input.label !== undefined) changes.label = input.label ?? null;
  if (replace || input.metadata !== undefined)
    changes.metadata = input.metadata ? JSON.stringify(input.metadata) : null;
  if (replace || input.channel !== undefined) changes.channel = input.channel ?? null;
  if (replace || input.transcript_retention !== undefined)
    changes.transcript_retention = input.transcript_retention ?? false;
  if (replace || input.ttl_seconds !== undefined) {
    const ttl = input.ttl_seconds ?? rt.config.sessionTtlSeconds;
    changes.ttl_seconds = ttl;
    changes.expires_at = new Date(now + ttl * 1000).toISOString();
  }
  await inTransaction(rt.engine, (trx) => updateSessionRow(trx, row.id, changes));
  return toSessionView((await findSessionRow(rt.db, realmId, row.id))!, now);
}

/** Deletes a session with its messages and state values (the state audit trail stays); resume token or admin. */
export async function deleteSession(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await accessSession(rt, principal, realmId, sessionId, resumeToken, { adminMay: true });
  const now = nowIso(rt);
  await inTransaction(rt.engine, async (trx) => {
    await deleteSessionMessages(trx, row.id);
    await deleteSessionState(trx, row.id);
    await deleteSessionContext(trx, row.id);
    await forgetKnowledgeItems(trx, realmId, { sessionId: row.id }, { at: now, by: principal.identityId });
    await deleteSessionRow(trx, row.id);
  });
}

/** Completes or cancels an active session (subject-bound: resume token or the subject user); drops an unretained transcript. */
export async function endSession(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
  status: 'completed' | 'cancelled',
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  const now = rt.clock();
  requireActive(row, now);
  const nowText = new Date(now).toISOString();
  await inTransaction(rt.engine, async (trx) => {
    if (!(await endActiveSession(trx, row.id, status, nowText)))
      throw RuntimeErrors.sessionNotActive(row.id, 'no longer active');
    if (!toBoolean(row.transcript_retention)) await deleteSessionMessages(trx, row.id);
  });
  return toSessionView((await findSessionRow(rt.db, realmId, row.id))!, now);
}

/** Clears the pinned flow and its continuation context (any state): the next turn makes a new routing decision. */
export async function resetSession(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  const now = rt.clock();
  await inTransaction(rt.engine, async (trx) => {
    await updateSessionRow(trx, row.id, { flow_id: null, updated_at: new Date(now).toISOString() });
    // The flow's continuation context goes too: no pending alternatives offer, no "the second one".
    await deleteSessionContext(trx, row.id);
  });
  return toSessionView((await findSessionRow(rt.db, realmId, row.id))!, now);
}

/** Rotates a valid resume token of an active session (the old one stops working); may set label and metadata. */
export async function refreshResumeToken(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  input: {
    resume_token: string;
    label?: string | null | undefined;
    metadata?: Record<string, unknown> | null | undefined;
  },
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const row = await findSessionRow(rt.db, realmId, sessionId);
  if (!row) throw RuntimeErrors.notFound('Session', sessionId);
  if (!constantTimeEqual(sha256Hex(input.resume_token), row.resume_token_hash))
    throw RuntimeErrors.resumeTokenInvalid();
  const now = rt.clock();
  requireActive(row, now);
  checkJson(input.metadata, 'metadata');
  rt.scanner.reject(input.metadata, 'body/metadata', 'conversation');
  return rotate(rt, row, now, {
    ...(input.label !== undefined ? { label: input.label } : {}),
    ...(input.metadata !== undefined ? { metadata: input.metadata ? JSON.stringify(input.metadata) : null } : {}),
  });
}

/**
 * Service recovery: a service identity of the realm issues a new resume token for an active or expired
 * session (which becomes active again for its TTL). Completed and cancelled sessions stay ended.
 */
export async function recoverResumeToken(rt: RuntimeContext, principal: RuntimePrincipal, sessionId: string) {
  const realmId = requirePermission(principal, 'runtime:run');
  if (principal.userType !== 'service')
    throw RuntimeErrors.forbidden(principal.userType, 'resume-token recovery (service identities only)');
  const row = await findSessionRow(rt.db, realmId, sessionId);
  if (!row) throw RuntimeErrors.notFound('Session', sessionId);
  const now = rt.clock();
  const status = effectiveStatus(row, now);
  if (status !== 'active' && status !== 'expired') throw RuntimeErrors.sessionNotActive(row.id, status);
  rt.log.info({ sessionId: row.id, by: principal.identityId }, 'session resume token recovered');
  return rotate(rt, row, now, {});
}

async function rotate(rt: RuntimeContext, row: SessionRow, now: number, extra: Partial<SessionRow>) {
  const resume = newResumeToken();
  const expiresAt = new Date(now + row.ttl_seconds * 1000).toISOString();
  // Compare-and-swap on the version: of two concurrent rotations exactly one wins.
  const swapped = await inTransaction(rt.engine, (trx) =>
    swapResumeToken(trx, row.id, row.resume_token_version, {
      ...extra,
      resume_token_hash: resume.hash,
      expires_at: expiresAt,
      updated_at: new Date(now).toISOString(),
    }),
  );
  if (!swapped) throw RuntimeErrors.resumeTokenInvalid();
  return { session_id: row.id, resume_token: resume.token, expires_at: expiresAt };
}
