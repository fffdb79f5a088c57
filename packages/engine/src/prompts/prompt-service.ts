import { type Executor, fromJsonColumn, lockForTransaction, toBoolean, toIsoString } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import { checkRealmField, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import {
  activatePromptRow,
  countAgentsUsingPrompt,
  countAgentsUsingPromptKey,
  deletePromptRow,
  findActivePromptOfKey,
  findPromptRow,
  insertPrompt,
  latestPromptVersion,
  listPromptRows,
  type PromptRow,
  updatePromptRow,
} from './prompt-store.ts';
import { templateProblems } from './render.ts';

export interface PromptInput {
  realm_id?: string | undefined;
  name: string;
  key: string;
  content: string;
  variables?: string[] | undefined;
  is_active?: boolean | undefined;
}

/** The active version of a prompt key, as the runtime renders it. */
export interface ActivePrompt {
  id: string;
  key: string;
  version: number;
  content: string;
  variables: string[];
}

export function toPromptView(row: PromptRow) {
  return {
    id: row.id,
    realm_id: row.realm_id,
    key: row.key,
    version: row.version,
    name: row.name,
    content: row.content,
    variables: fromJsonColumn<string[]>(row.variables),
    is_active: toBoolean(row.is_active),
    activated_at: row.activated_at === null ? null : toIsoString(row.activated_at),
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
  };
}

export function checkTemplate(content: string, variables: string[]) {
  if (new Set(variables).size !== variables.length) throw RuntimeErrors.invalid('variables must not repeat a name');
  const problems = templateProblems(content, variables);
  if (problems.length > 0) throw RuntimeErrors.invalid(problems.join('; '));
}

/** A new version of the prompt `key` (version = latest + 1); active at once only when `is_active` is true. */
export async function createPrompt(rt: RuntimeContext, principal: RuntimePrincipal, input: PromptInput) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const variables = input.variables ?? [];
  checkTemplate(input.content, variables);
  const now = nowIso(rt);
  // Two versions of one key created at once: the unique (realm, key, version) index decides, and the write path
  // runs the loser again, which then takes the next version.
  const row = await inTransaction(rt.engine, async (trx) => {
    // Versions of one key are numbered one at a time (concurrent creators wait here, then see the new max).
    await lockForTransaction(trx, `prompt|${realmId}|${input.key}`);
    const created: PromptRow = {
      id: newId(),
      realm_id: realmId,
      key: input.key,
      version: (await latestPromptVersion(trx, realmId, input.key)) + 1,
      name: input.name,
      content: input.content,
      variables: JSON.stringify(variables),
      is_active: false,
      activated_at: null,
      created_at: now,
      updated_at: now,
    };
    await insertPrompt(trx, created);
    if (input.is_active) await activatePromptRow(trx, created, now);
    return (await findPromptRow(trx, realmId, created.id))!;
  });
  await rt.realms.invalidate(realmId);
  return toPromptView(row);
}

export async function listPrompts(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined; key?: string | undefined; is_active?: boolean | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const rows = await listPromptRows(
    rt.db,
    realmId,
    { afterId: cursorAfterId('prompts', query.cursor), key: query.key, isActive: query.is_active },
    query.limit + 1,
  );
  return idPage('prompts', rows, query.limit, toPromptView);
}

export async function getPrompt(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await findPromptRow(rt.db, realmId, id);
  if (!row) throw RuntimeErrors.notFound('Prompt', id);
  return toPromptView(row);
}

/**
 * Updates a version: the name always; content and variables only while it has never been active (versions
 * pinned to executions stay what they were). `is_active` true activates it, false deactivates it unless agents
 * run it.
 */
export async function updatePrompt(rt: RuntimeContext, principal: RuntimePrincipal, id: string, input: PromptInput) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const now = nowIso(rt);
  await inTransaction(rt.engine, async (trx) => {
    const row = await findPromptRow(trx, realmId, id);
    if (!row) throw RuntimeErrors.notFound('Prompt', id);
    if (input.key !== row.key) throw RuntimeErrors.invalid(`key cannot change (this version belongs to ${row.key})`);
    const variables = input.variables ?? [];
    const sameTemplate =
      input.content === row.content && JSON.stringify(variables) === JSON.stringify(fromJsonColumn(row.variables));
    if (!sameTemplate) {
      if (row.activated_at !== null) throw RuntimeErrors.promptImmutable(row.id);
      checkTemplate(input.content, variables);
    }
    await updatePromptRow(trx, row.id, {
      name: input.name,
      content: input.content,
      variables: JSON.stringify(variables),
      updated_at: now,
    });
    if (input.is_active === true && !toBoolean(row.is_active)) await activatePromptRow(trx, row, now);
    if (input.is_active === false && toBoolean(row.is_active)) {
      if ((await countAgentsUsingPromptKey(trx, realmId, row.key)) > 0)
        throw RuntimeErrors.inUse(
          `Agents run prompt ${row.key}: activate another version instead of deactivating this one`,
        );
      await updatePromptRow(trx, row.id, { is_active: false, updated_at: now });
    }
  });
  await rt.realms.invalidate(realmId);
  return getPrompt(rt, principal, id);
}

/** Makes this version the active one of its key (the others of the key become inactive). */
export async function activatePrompt(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  await inTransaction(rt.engine, async (trx) => {
    const row = await findPromptRow(trx, realmId, id);
    if (!row) throw RuntimeErrors.notFound('Prompt', id);
    await activatePromptRow(trx, row, nowIso(rt));
  });
  await rt.realms.invalidate(realmId);
  return getPrompt(rt, principal, id);
}

/** Deletes a version no agent references and that is not the active version of a key agents run. */
export async function deletePrompt(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  await inTransaction(rt.engine, async (trx) => {
    const row = await findPromptRow(trx, realmId, id);
    if (!row) throw RuntimeErrors.notFound('Prompt', id);
    const direct = await countAgentsUsingPrompt(trx, realmId, row.id);
    if (direct > 0) throw RuntimeErrors.inUse(`Prompt ${row.id} is the system prompt of ${direct} agent(s)`);
    if (toBoolean(row.is_active) && (await countAgentsUsingPromptKey(trx, realmId, row.key)) > 0)
      throw RuntimeErrors.inUse(`Prompt ${row.id} is the active version of ${row.key}, which agents run`);
    await deletePromptRow(trx, row.id);
  });
  await rt.realms.invalidate(realmId);
}

/** The active version of the key of prompt `id` (cached); undefined when the prompt or an active version is missing. */
export async function loadActivePrompt(
  rt: RuntimeContext,
  realmId: string,
  id: string,
): Promise<ActivePrompt | undefined> {
  return rt.realms.get(realmId, `prompt:${id}`, async () => {
    const row = await findActivePromptOfKey(rt.db, realmId, id);
    return row
      ? {
          id: row.id,
          key: row.key,
          version: row.version,
          content: row.content,
          variables: fromJsonColumn<string[]>(row.variables),
        }
      : undefined;
  });
}

export async function promptExists(db: Executor<EngineDb>, realmId: string, id: string): Promise<boolean> {
  return (await findPromptRow(db, realmId, id)) !== undefined;
}
