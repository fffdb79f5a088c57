import { type Executor, fromJsonColumn, sha256Hex, toIsoString } from '@keel/core';
import { loadAgent } from '../agents/agent-service.ts';
import type { EngineDb } from '../db/schema.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { checkJson } from '../runtime/json-bounds.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { accessSession } from '../sessions/session-service.ts';
import { inTransaction } from '../write.ts';
import {
  findKnowledgeCandidates,
  forgetKnowledgeItems,
  insertKnowledgeItem,
  type KnowledgeAudience,
  type KnowledgeRow,
  listKnowledgeRows,
  realmHasKnowledgeItems,
} from './knowledge-store.ts';

export type { KnowledgeAudience } from './knowledge-store.ts';

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
  await inTransaction(rt.engine, (trx) => insertKnowledgeItem(trx, row));
  await rt.realms.invalidate(realmId);
  return toKnowledgeView(row);
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
  // Session-scoped items are found only through their session (search with its resume token), never listed.
  const rows = await listKnowledgeRows(
    rt.db,
    realmId,
    {
      now: nowIso(rt),
      afterId: cursorAfterId('knowledge', query.cursor),
      scope: query.scope,
      agentId: query.agent_id?.toLowerCase(),
      userId: query.user_id,
    },
    Math.min(500, query.tag ? 500 : query.limit + 1),
  );
  const filtered = query.tag ? rows.filter((row) => fromJsonColumn<string[]>(row.tags).includes(query.tag!)) : rows;
  return idPage('knowledge', filtered, query.limit, toKnowledgeView);
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
  const rows = await findKnowledgeCandidates(db, realmId, audience, wanted, now, 200);
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
  const forgotten = { at: nowIso(rt), by: principal.identityId };
  const changed = await inTransaction(rt.engine, (trx) =>
    forgetKnowledgeItems(trx, realmId, { id: id.toLowerCase() }, forgotten),
  );
  if (changed !== 1) throw RuntimeErrors.notFound('Knowledge item', id);
  await rt.realms.invalidate(realmId);
}

/** Whether the realm has any knowledge (cached), so turns skip retrieval when there is none. */
export async function realmHasKnowledge(rt: RuntimeContext, realmId: string): Promise<boolean> {
  return rt.realms.get(realmId, 'knowledge-any', () => realmHasKnowledgeItems(rt.db, realmId));
}
