import { type Executor, fromJsonColumn, sha256Hex, toIsoString } from '@keel/core';
import type { Selectable } from 'kysely';
import { loadAgent } from '../agents/agent-service.ts';
import { param, preparedQuery } from '../db/prepared.ts';
import type { EngineDb } from '../db/schema.ts';
import type { RuntimePrincipal } from '../identity/roles.ts';
import { requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import type { ChatTurn } from '../providers/model-clients.ts';
import { loadProvider } from '../providers/provider-service.ts';
import type { SessionMessageTable } from '../runtime/db-tables.ts';
import { checkJson } from '../runtime/json-bounds.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { accessSession, effectiveStatus, MAX_SESSION_MESSAGES, type SessionRow } from './session-service.ts';

type MessageRow = Selectable<SessionMessageTable>;

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

const countUpdate = preparedQuery((db) =>
  db
    .updateTable('runtime_session')
    .set((eb) => ({
      message_count: eb('message_count', '+', param<number>('added')),
      updated_at: param('now'),
      expires_at: eb.fn.coalesce(eb.val(param('expiresAt')), eb.ref('expires_at')),
    }))
    .where('id', '=', param('id'))
    .where('message_count', '<=', param('maxBefore'))
    .returning('message_count'),
);

const MESSAGE_COLUMNS = [
  'id',
  'session_id',
  'realm_id',
  'seq',
  'role',
  'content',
  'execution_id',
  'action_type',
  'created_at',
] as const;
const messageInsert = preparedQuery((db) =>
  db.insertInto('session_message').values(Object.fromEntries(MESSAGE_COLUMNS.map((c) => [c, param(c)])) as never),
);

/**
 * Appends messages to a session in a transaction (prepared statements: every turn runs them). The count
 * increment doubles as the per-session lock: concurrent turns get distinct, ordered sequence numbers.
 */
export async function appendMessages(
  trx: Executor<EngineDb>,
  session: { id: string; realm_id: string },
  messages: { role: string; content: string; execution_id?: string | null; action_type?: string | null }[],
  now: string,
  expiresAt: string | null,
): Promise<number> {
  const [updated] = await countUpdate(trx, {
    added: messages.length,
    now,
    expiresAt,
    id: session.id,
    maxBefore: MAX_SESSION_MESSAGES - messages.length,
  });
  if (!updated)
    throw RuntimeErrors.limit(`A session keeps at most ${MAX_SESSION_MESSAGES} messages: start a new session`);
  const first = Number(updated.message_count) - messages.length + 1;
  for (const [index, message] of messages.entries())
    await messageInsert(trx, {
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

const turnsQuery = preparedQuery((db) =>
  db
    .selectFrom('session_message')
    .select(['role', 'content'])
    .where('session_id', '=', param('sessionId'))
    .orderBy('seq', 'desc')
    .limit(param('limit')),
);

export async function recentTurns(db: Executor<EngineDb>, sessionId: string, limit: number): Promise<ChatTurn[]> {
  if (limit <= 0) return [];
  const rows = await turnsQuery(db, { sessionId, limit });
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
  let q = rt.db.selectFrom('session_message').selectAll().where('session_id', '=', session.id);
  if (query.after !== undefined) q = q.where('seq', '>', query.after);
  const rows = await q
    .orderBy('seq')
    .limit(query.limit + 1)
    .execute();
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
  const seq = await rt.db
    .transaction()
    .execute((trx) =>
      appendMessages(trx, session, [input], nowText, new Date(now + session.ttl_seconds * 1000).toISOString()),
    );
  const row = await rt.db
    .selectFrom('session_message')
    .selectAll()
    .where('session_id', '=', session.id)
    .where('seq', '=', seq)
    .executeTakeFirstOrThrow();
  return toMessageView(row);
}

const TYPE_OF = (value: unknown): string =>
  Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value === 'object' ? 'object' : typeof value;

async function stateView(db: Executor<EngineDb>, sessionId: string) {
  const rows = await db
    .selectFrom('session_state')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('key')
    .execute();
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
  await rt.db.transaction().execute(async (trx) => {
    const existing = new Map(
      (
        await trx
          .selectFrom('session_state')
          .select(['key', 'value_type', 'version'])
          .where('session_id', '=', session.id)
          .execute()
      ).map((row) => [row.key, row]),
    );
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
        await trx
          .updateTable('session_state')
          .set({ value: text, version, updated_by: principal.identityId, updated_at: nowText })
          .where('session_id', '=', session.id)
          .where('key', '=', key)
          .execute();
      else
        await trx
          .insertInto('session_state')
          .values({
            session_id: session.id,
            realm_id: realmId,
            key,
            value_type: type,
            value: text,
            version,
            updated_by: principal.identityId,
            updated_at: nowText,
          })
          .execute();
      await trx
        .insertInto('session_state_audit')
        .values({
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
        })
        .execute();
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
  await rt.db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('session_state')
      .select(['value_type', 'version'])
      .where('session_id', '=', session.id)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!current) throw RuntimeErrors.notFound('State key', key);
    await trx.deleteFrom('session_state').where('session_id', '=', session.id).where('key', '=', key).execute();
    await trx
      .insertInto('session_state_audit')
      .values({
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
      })
      .execute();
  });
}

/** State values as prompt variables (strings, numbers, booleans). */
export async function stateVariables(db: Executor<EngineDb>, sessionId: string): Promise<Record<string, unknown>> {
  const rows = await db
    .selectFrom('session_state')
    .select(['key', 'value'])
    .where('session_id', '=', sessionId)
    .execute();
  return Object.fromEntries(rows.map((row) => [row.key, JSON.parse(row.value)]));
}

const USER_ID = /^[A-Za-z0-9._:@-]{1,255}$/;

export async function getUserContext(rt: RuntimeContext, principal: RuntimePrincipal, userId: string) {
  const realmId = requirePermission(principal, 'runtime:run');
  if (!USER_ID.test(userId)) throw RuntimeErrors.invalid('userId must be 1 to 255 characters of A-Z a-z 0-9 . _ : @ -');
  const row = await rt.db
    .selectFrom('user_context')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
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
  await rt.db
    .insertInto('user_context')
    .values({
      realm_id: realmId,
      user_id: userId,
      context: text,
      version: 1,
      updated_by: principal.identityId,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['realm_id', 'user_id']).doUpdateSet((eb) => ({
        context: text,
        version: eb('user_context.version', '+', 1),
        updated_by: principal.identityId,
        updated_at: now,
      })),
    )
    .execute();
  return getUserContext(rt, principal, userId);
}

export async function userContextValues(
  db: Executor<EngineDb>,
  realmId: string,
  userId: string,
): Promise<Record<string, unknown>> {
  const row = await db
    .selectFrom('user_context')
    .select('context')
    .where('realm_id', '=', realmId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
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
  await rt.db
    .updateTable('runtime_session')
    .set({ summary, summary_updated_at: now, updated_at: now })
    .where('id', '=', session.id)
    .execute();
  return { session_id: session.id, summary, method, message_count: session.message_count, updated_at: now };
}
