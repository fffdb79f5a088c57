import { type Executor, fromJsonColumn, sha256Hex, toIsoString } from '@keel/core';
import type { Selectable } from 'kysely';
import { loadAgent } from '../agents/agent-service.ts';
import type { EngineDb } from '../db/schema.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import type { KnowledgeItemTable } from '../runtime/db-tables.ts';
import { checkJson } from '../runtime/json-bounds.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { accessSession } from '../sessions/session-service.ts';

type KnowledgeRow = Selectable<KnowledgeItemTable>;

export const KNOWLEDGE_SCOPES = ['realm', 'agent', 'session', 'user'] as const;
export type KnowledgeScope = (typeof KNOWLEDGE_SCOPES)[number];

export interface KnowledgeInput {
  title?: string | undefined;
  content: string;
  scope?: KnowledgeScope | undefined;
  agent_id?: string | undefined;
  session_id?: string | undefined;
  user_id?: string | undefined;
  tags?: string[] | undefined;
  source: { type: string; uri?: string | undefined; name?: string | undefined; captured_at?: string | undefined };
  confidence?: number | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  expires_at?: string | undefined;
}

/** Who may retrieve: the realm, one agent, one session or one user. */
export interface KnowledgeAudience {
  agentId?: string | undefined;
  sessionId?: string | undefined;
  userId?: string | undefined;
}

export function toKnowledgeView(row: KnowledgeRow) {
  return {
    id: row.id,
    realm_id: row.realm_id,
    scope: row.scope,
    agent_id: row.agent_id,
    session_id: row.session_id,
    user_id: row.user_id,
    title: row.title,
    content: row.content ?? '',
    tags: fromJsonColumn<string[]>(row.tags),
    provenance: {
      source: fromJsonColumn<Record<string, unknown>>(row.source),
      created_by: row.created_by,
      created_at: toIsoString(row.created_at),
      content_sha256: row.content_sha256,
      confidence: row.confidence,
    },
    metadata: row.metadata === null ? null : fromJsonColumn<Record<string, unknown>>(row.metadata),
    expires_at: row.expires_at === null ? null : toIsoString(row.expires_at),
  };
}

/** Lower-cased letter/digit runs: the searchable form of a text. */
function normalize(text: string): string {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

function terms(query: string): string[] {
  return [
    ...new Set(
      normalize(query)
        .split(' ')
        .filter((t) => t.length >= 2),
    ),
  ].slice(0, 8);
}

/**
 * Stores an item with its provenance (source, author, time, digest). Scope agent, session or user names who
 * may retrieve it; a session scope needs the session's resume token.
 */
export async function createKnowledge(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: KnowledgeInput,
  resumeToken: string | undefined,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const scope = input.scope ?? 'realm';
  const need = (field: 'agent_id' | 'session_id' | 'user_id') => {
    if (!input[field]) throw RuntimeErrors.invalid(`${field} is required for scope ${scope}`);
    return input[field]!;
  };
  let agentId: string | null = null;
  let sessionId: string | null = null;
  let userId: string | null = null;
  if (scope === 'agent') {
    const agent = await loadAgent(rt, realmId, need('agent_id'));
    if (!agent) throw RuntimeErrors.notFound('Agent', input.agent_id);
    agentId = agent.id;
  } else if (scope === 'session') {
    sessionId = (await accessSession(rt, principal, realmId, need('session_id'), resumeToken)).id;
  } else if (scope === 'user') userId = need('user_id');
  checkJson(input.metadata, 'metadata');
  rt.scanner.reject({ title: input.title, content: input.content, metadata: input.metadata }, 'body', 'stored');
  let expiresAt: string | null = null;
  if (input.expires_at !== undefined) {
    const at = Date.parse(input.expires_at);
    if (!Number.isFinite(at) || at <= rt.clock()) throw RuntimeErrors.invalid('expires_at must be in the future');
    expiresAt = new Date(at).toISOString();
  }
  const now = nowIso(rt);
  const row: KnowledgeRow = {
    id: newId(),
    realm_id: realmId,
    scope,
    agent_id: agentId,
    session_id: sessionId,
    user_id: userId,
    title: input.title ?? null,
    content: input.content,
    search_text: normalize(`${input.title ?? ''} ${input.content} ${(input.tags ?? []).join(' ')}`),
    content_sha256: sha256Hex(input.content),
    tags: JSON.stringify(input.tags ?? []),
    source: JSON.stringify({
      type: input.source.type,
      uri: input.source.uri ?? null,
      name: input.source.name ?? null,
      captured_at: input.source.captured_at ?? null,
    }),
    confidence: input.confidence ?? null,
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    created_by: principal.identityId,
    created_at: now,
    expires_at: expiresAt,
    forgotten_at: null,
    forgotten_by: null,
  };
  await rt.db.insertInto('knowledge_item').values(row).execute();
  await rt.realms.invalidate(realmId);
  return toKnowledgeView(row);
}

function visible(db: Executor<EngineDb>, realmId: string, now: string) {
  return db
    .selectFrom('knowledge_item')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('forgotten_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
}

export async function listKnowledge(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: {
    limit: number;
    cursor?: string | undefined;
    scope?: 'realm' | 'agent' | 'user' | undefined;
    agent_id?: string | undefined;
    user_id?: string | undefined;
    tag?: string | undefined;
  },
) {
  const realmId = requirePermission(principal, 'config:read');
  let q = visible(rt.db, realmId, nowIso(rt));
  if (query.cursor) q = q.where('id', '<', query.cursor);
  // Session-scoped items are found only through their session (search with its resume token), never listed.
  q = query.scope ? q.where('scope', '=', query.scope) : q.where('scope', '!=', 'session');
  if (query.agent_id) q = q.where('agent_id', '=', query.agent_id.toLowerCase());
  if (query.user_id) q = q.where('user_id', '=', query.user_id);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(Math.min(500, query.tag ? 500 : query.limit + 1))
    .execute();
  const filtered = query.tag ? rows.filter((row) => fromJsonColumn<string[]>(row.tags).includes(query.tag!)) : rows;
  const page = filtered.slice(0, query.limit);
  return {
    data: page.map(toKnowledgeView),
    next_cursor: filtered.length > query.limit ? page.at(-1)!.id : null,
  };
}

/**
 * Lexical search over the knowledge the audience may retrieve (realm items, plus the named agent's, session's
 * and user's): every item with at least one query term, ranked by term hits (title hits count triple),
 * bounded to 200 candidates.
 */
export async function searchKnowledgeRows(
  db: Executor<EngineDb>,
  realmId: string,
  query: string,
  audience: KnowledgeAudience,
  limit: number,
  now: string,
  tags?: string[],
) {
  const wanted = terms(query);
  if (wanted.length === 0) return [];
  const q = visible(db, realmId, now)
    .where((eb) => {
      const allowed = [eb('scope', '=', 'realm')];
      if (audience.agentId) allowed.push(eb.and([eb('scope', '=', 'agent'), eb('agent_id', '=', audience.agentId)]));
      if (audience.sessionId)
        allowed.push(eb.and([eb('scope', '=', 'session'), eb('session_id', '=', audience.sessionId)]));
      if (audience.userId) allowed.push(eb.and([eb('scope', '=', 'user'), eb('user_id', '=', audience.userId)]));
      return eb.or(allowed);
    })
    .where((eb) =>
      // Terms and search_text hold only letters, digits and spaces, so no LIKE wildcard needs escaping.
      eb.or(wanted.map((term) => eb('search_text', 'like', `%${term}%`))),
    )
    .orderBy('id', 'desc')
    .limit(200);
  const rows = await q.execute();
  const scored = rows
    .filter((row) => !tags || tags.length === 0 || tags.some((tag) => fromJsonColumn<string[]>(row.tags).includes(tag)))
    .map((row) => {
      const title = normalize(row.title ?? '');
      const text = ` ${row.search_text ?? ''} `;
      let score = 0;
      const matched: string[] = [];
      for (const term of wanted) {
        const hits = text.split(term).length - 1;
        if (hits > 0) matched.push(term);
        score += Math.min(hits, 5) + (title.includes(term) ? 3 : 0);
      }
      return { row, score: score * (matched.length / wanted.length), matched };
    })
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score);
  return scored.slice(0, limit);
}

export async function searchKnowledge(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: {
    query: string;
    agent_id?: string | undefined;
    session_id?: string | undefined;
    user_id?: string | undefined;
    tags?: string[] | undefined;
    limit?: number | undefined;
  },
  resumeToken: string | undefined,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const sessionId = input.session_id
    ? (await accessSession(rt, principal, realmId, input.session_id, resumeToken)).id
    : undefined;
  const results = await searchKnowledgeRows(
    rt.db,
    realmId,
    input.query,
    { agentId: input.agent_id?.toLowerCase(), sessionId, userId: input.user_id },
    input.limit ?? 5,
    nowIso(rt),
    input.tags,
  );
  return {
    data: results.map((entry) => ({
      ...toKnowledgeView(entry.row),
      score: Math.round(entry.score * 1000) / 1000,
      matched_terms: entry.matched,
    })),
  };
}

/** Forgets an item: its text is erased; the row stays as audit evidence (who, when, source, digest). */
export async function forgetKnowledge(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'runtime:run');
  const changed = await rt.db
    .updateTable('knowledge_item')
    .set({ content: null, search_text: null, forgotten_at: nowIso(rt), forgotten_by: principal.identityId })
    .where('realm_id', '=', realmId)
    .where('id', '=', id.toLowerCase())
    .where('forgotten_at', 'is', null)
    .executeTakeFirst();
  if (Number(changed.numUpdatedRows) !== 1) throw RuntimeErrors.notFound('Knowledge item', id);
  await rt.realms.invalidate(realmId);
}

/** Whether the realm has any knowledge (cached), so turns skip retrieval when there is none. */
export async function realmHasKnowledge(rt: RuntimeContext, realmId: string): Promise<boolean> {
  return rt.realms.get(realmId, 'knowledge-any', async () => {
    const row = await rt.db
      .selectFrom('knowledge_item')
      .select('id')
      .where('realm_id', '=', realmId)
      .where('forgotten_at', 'is', null)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  });
}
