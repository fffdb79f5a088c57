import { type Executor, fromJsonColumn, sha256Hex, toIsoString } from '@keel/core';
import { loadAgent } from '../agents/agent-service.ts';
import type { EngineDb } from '../db/schema.ts';
import type { RuntimePrincipal } from '../identity/roles.ts';
import { requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import type { ChatTurn } from '../providers/model-clients.ts';
import { loadProvider } from '../providers/provider-service.ts';
import { checkJson } from '../runtime/json-bounds.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import {
  bumpMessageCount,
  deleteStateValue,
  findStateVersion,
  findUserContext,
  findUserContextValue,
  getMessageBySeq,
  insertMessage,
  insertStateAudit,
  insertStateValue,
  listLatestTurns,
  listMessageRows,
  listStateRows,
  listStateValues,
  listStateVersions,
  type MessageRow,
  saveSessionSummary,
  updateStateValue,
  upsertUserContext,
} from './session-data-store.ts';
import { accessSession, effectiveStatus, MAX_SESSION_MESSAGES } from './session-service.ts';
import type { SessionRow } from './session-store.ts';

/** Typed state keys one session holds at most. */
export const MAX_STATE_KEYS = 100;

function toMessageView(row: MessageRow) {
  return {
    id: row.id,
    session_id: row.session_id,
    seq: row.seq,
    role: row.role,
    content: row.content,
    execution_id: row.execution_id,
    action_type: row.action_type,
    created_at: toIsoString(row.created_at),
  };
}

/**
 * Appends messages to a session in a transaction. The count
 * increment doubles as the per-session lock: concurrent turns get distinct, ordered sequence numbers.
 */
export async function appendMessages(
  trx: Executor<EngineDb>,
  session: { id: string; realm_id: string },
  messages: { role: string; content: string; execution_id?: string | null; action_type?: string | null }[],
  now: string,
  expiresAt: string | null,
): Promise<number> {
  const count = await bumpMessageCount(trx, {
    added: messages.length,
    now,
    expiresAt,
    id: session.id,
    maxBefore: MAX_SESSION_MESSAGES - messages.length,
  });
  if (count === undefined)
    throw RuntimeErrors.limit(`A session keeps at most ${MAX_SESSION_MESSAGES} messages: start a new session`);
  const first = count - messages.length + 1;
  for (const [index, message] of messages.entries())
    await insertMessage(trx, {
      id: newId(),
      session_id: session.id,
      realm_id: session.realm_id,
      seq: first + index,
      role: message.role,
      content: message.content,
      execution_id: message.execution_id ?? null,
      action_type: message.action_type ?? null,
      created_at: now,
    });
  return first;
}

export async function recentTurns(db: Executor<EngineDb>, sessionId: string, limit: number): Promise<ChatTurn[]> {
  if (limit <= 0) return [];
  const rows = await listLatestTurns(db, sessionId, limit);
  return rows.reverse().map((row) => ({ role: row.role as ChatTurn['role'], content: row.content }));
}

export async function listMessages(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
  query: { limit: number; after?: number | undefined },
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const session = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  const rows = await listMessageRows(rt.db, session.id, query);
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(toMessageView),
    next_cursor: rows.length > query.limit ? String(page.at(-1)!.seq) : null,
  };
}

/** Appends a message without running the agent (e.g. a human agent's reply, or a user message to answer later). */
export async function postMessage(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
  input: { role: 'user' | 'assistant'; content: string },
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const session = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  const now = rt.clock();
  const status = effectiveStatus(session, now);
  if (status !== 'active') throw RuntimeErrors.sessionNotActive(session.id, status);
  rt.scanner.reject(input.content, 'body/content', 'conversation');
  const nowText = new Date(now).toISOString();
  const seq = await inTransaction(rt.engine, (trx) =>
    appendMessages(trx, session, [input], nowText, new Date(now + session.ttl_seconds * 1000).toISOString()),
  );
  const row = await getMessageBySeq(rt.db, session.id, seq);
  return toMessageView(row);
}

const TYPE_OF = (value: unknown): string =>
  Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value === 'object' ? 'object' : typeof value;

async function stateView(db: Executor<EngineDb>, sessionId: string) {
  const rows = await listStateRows(db, sessionId);
  const state: Record<string, { type: string; value: unknown; version: number; updated_at: string }> = {};
  for (const row of rows)
    state[row.key] = {
      type: row.value_type,
      value: JSON.parse(row.value),
      version: row.version,
      updated_at: toIsoString(row.updated_at),
    };
  return { session_id: sessionId, state };
}

export async function getState(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const session = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  return stateView(rt.db, session.id);
}

/**
 * Upserts typed values: a key keeps the JSON type it was first stored with (409 otherwise: forget it first).
 * Every write is audited (key, type, version, actor and a SHA-256 of the value — never the value itself).
 */
export async function putState(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
  values: Record<string, unknown>,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const session = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  const now = rt.clock();
  const status = effectiveStatus(session, now);
  if (status !== 'active') throw RuntimeErrors.sessionNotActive(session.id, status);
  const entries = Object.entries(values);
  for (const [key, value] of entries) {
    if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(key))
      throw RuntimeErrors.invalid(
        `state key ${JSON.stringify(key.slice(0, 40))} must be 1 to 128 of A-Z a-z 0-9 _ . : -`,
      );
    if (value === null) throw RuntimeErrors.invalid(`state.${key} is null: use DELETE .../state/{key} to forget a key`);
    checkJson(value, `state.${key}`);
  }
  rt.scanner.reject(values, 'body/state', 'stored');
  const nowText = new Date(now).toISOString();
  await inTransaction(rt.engine, async (trx) => {
    const existing = new Map((await listStateVersions(trx, session.id)).map((row) => [row.key, row]));
    const added = entries.filter(([key]) => !existing.has(key)).length;
    if (existing.size + added > MAX_STATE_KEYS)
      throw RuntimeErrors.limit(`A session holds at most ${MAX_STATE_KEYS} state keys`);
    for (const [key, value] of entries) {
      const type = TYPE_OF(value);
      const text = JSON.stringify(value);
      const current = existing.get(key);
      if (current && current.value_type !== type) throw RuntimeErrors.stateTypeMismatch(key, current.value_type, type);
      const version = (current?.version ?? 0) + 1;
      if (current)
        await updateStateValue(trx, session.id, key, {
          value: text,
          version,
          updated_by: principal.identityId,
          updated_at: nowText,
        });
      else
        await insertStateValue(trx, {
          session_id: session.id,
          realm_id: realmId,
          key,
          value_type: type,
          value: text,
          version,
          updated_by: principal.identityId,
          updated_at: nowText,
        });
      await insertStateAudit(trx, {
        id: newId(),
        session_id: session.id,
        realm_id: realmId,
        key,
        action: 'set',
        value_type: type,
        value_sha256: sha256Hex(text),
        version,
        actor_id: principal.identityId,
        created_at: nowText,
      });
    }
  });
  return stateView(rt.db, session.id);
}

/** Forgets one key: the value is deleted; the audit history keeps a `forget` entry. */
export async function forgetState(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
  key: string,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const session = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  const nowText = nowIso(rt);
  await inTransaction(rt.engine, async (trx) => {
    const current = await findStateVersion(trx, session.id, key);
    if (!current) throw RuntimeErrors.notFound('State key', key);
    await deleteStateValue(trx, session.id, key);
    await insertStateAudit(trx, {
      id: newId(),
      session_id: session.id,
      realm_id: realmId,
      key,
      action: 'forget',
      value_type: current.value_type,
      value_sha256: null,
      version: current.version + 1,
      actor_id: principal.identityId,
      created_at: nowText,
    });
  });
}

/** State values as prompt variables (strings, numbers, booleans). */
export async function stateVariables(db: Executor<EngineDb>, sessionId: string): Promise<Record<string, unknown>> {
  const rows = await listStateValues(db, sessionId);
  return Object.fromEntries(rows.map((row) => [row.key, JSON.parse(row.value)]));
}

const USER_ID = /^[A-Za-z0-9._:@-]{1,255}$/;

export async function getUserContext(rt: RuntimeContext, principal: RuntimePrincipal, userId: string) {
  const realmId = requirePermission(principal, 'runtime:run');
  if (!USER_ID.test(userId)) throw RuntimeErrors.invalid('userId must be 1 to 255 characters of A-Z a-z 0-9 . _ : @ -');
  const row = await findUserContext(rt.db, realmId, userId);
  return {
    user_id: userId,
    context: row ? fromJsonColumn<Record<string, unknown>>(row.context) : {},
    version: row?.version ?? 0,
    updated_at: row ? toIsoString(row.updated_at) : null,
  };
}

/** Replaces a user's context (preferences; no credentials or payment data), 16 KiB at most. */
export async function putUserContext(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  userId: string,
  context: Record<string, unknown>,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  if (!USER_ID.test(userId)) throw RuntimeErrors.invalid('userId must be 1 to 255 characters of A-Z a-z 0-9 . _ : @ -');
  const text = checkJson(context, 'context')!;
  rt.scanner.reject(context, 'body/context', 'stored');
  const now = nowIso(rt);
  await inTransaction(rt.engine, (trx) =>
    upsertUserContext(trx, {
      realm_id: realmId,
      user_id: userId,
      context: text,
      updated_by: principal.identityId,
      updated_at: now,
    }),
  );
  return getUserContext(rt, principal, userId);
}

export async function userContextValues(
  db: Executor<EngineDb>,
  realmId: string,
  userId: string,
): Promise<Record<string, unknown>> {
  const row = await findUserContextValue(db, realmId, userId);
  return row ? fromJsonColumn<Record<string, unknown>>(row.context) : {};
}

/** An extractive summary: the first user request and the latest exchanges, cut to `maxLength` characters. */
function extractiveSummary(turns: ChatTurn[], maxLength: number): string {
  if (turns.length === 0) return '';
  const line = (turn: ChatTurn) =>
    `${turn.role === 'user' ? 'User' : 'Assistant'}: ${turn.content.replace(/\s+/g, ' ').trim()}`;
  const firstUser = turns.find((t) => t.role === 'user');
  const parts = [
    firstUser ? line(firstUser) : '',
    ...turns
      .slice(-4)
      .filter((t) => t !== firstUser)
      .map(line),
  ].filter(Boolean);
  const text = parts.join('\n');
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}

/**
 * A bounded summary of the session (stored with it and given to the model with later turns): written by the
 * agent's provider when it can (and the agent's data handling allows), else extractive.
 */
export async function summarizeSession(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
  maxLength: number,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const session: SessionRow = await accessSession(rt, principal, realmId, sessionId, resumeToken);
  const turns = await recentTurns(rt.db, session.id, 50);
  let summary = extractiveSummary(turns, maxLength);
  let method: 'model' | 'extractive' = 'extractive';
  const agent = await loadAgent(rt, realmId, session.agent_id);
  const provider = agent ? await loadProvider(rt, realmId, agent.aiProviderId) : undefined;
  if (turns.length > 0 && agent?.settings.data_handling === 'standard' && provider?.isActive && provider.supportsText) {
    try {
      const result = await rt.models.complete(
        provider,
        [
          {
            role: 'system',
            content: `Summarize the conversation below in at most ${maxLength} characters for the assistant's later turns. Keep the user's goal, constraints, decisions and open questions. Never include card data, codes, passwords, tokens or addresses.`,
          },
          {
            role: 'user',
            content: turns
              .map((t) => `${t.role}: ${t.content}`)
              .join('\n')
              .slice(0, 60_000),
          },
        ],
        { timeoutMs: Math.min(agent.settings.node_timeout_ms, 30_000), signal: AbortSignal.timeout(30_000) },
      );
      const text = result.content.trim();
      if (text && !rt.scanner.scanText(text, 'stored')) {
        summary = text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
        method = 'model';
      }
    } catch {
      // The provider failed: the extractive summary stands (a summary never fails on the upstream).
    }
  }
  const now = nowIso(rt);
  await inTransaction(rt.engine, (trx) => saveSessionSummary(trx, session.id, summary, now));
  return { session_id: session.id, summary, method, message_count: session.message_count, updated_at: now };
}
