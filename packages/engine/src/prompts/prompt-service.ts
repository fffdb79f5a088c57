import {
  type Executor,
  fromJsonColumn,
  isUniqueViolation,
  lockForTransaction,
  toBoolean,
  toIsoString,
} from '@keel/core';
import type { Selectable } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import { checkRealmField, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import type { PromptTable } from '../runtime/db-tables.ts';
import { idPage } from '../runtime/id-page.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { templateProblems } from './render.ts';

type PromptRow = Selectable<PromptTable>;

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

function checkTemplate(content: string, variables: string[]) {
  if (new Set(variables).size !== variables.length) throw RuntimeErrors.invalid('variables must not repeat a name');
  const problems = templateProblems(content, variables);
  if (problems.length > 0) throw RuntimeErrors.invalid(problems.join('; '));
}

async function findPromptRow(db: Executor<EngineDb>, realmId: string, id: string) {
  return db
    .selectFrom('prompt')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
}

/** Agents whose system prompt is a version of this key (they run its active version). */
async function agentsUsingKey(db: Executor<EngineDb>, realmId: string, key: string): Promise<number> {
  const row = await db
    .selectFrom('agent_config as a')
    .innerJoin('prompt as p', 'p.id', 'a.system_prompt_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('a.realm_id', '=', realmId)
    .where('p.key', '=', key)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function activateRow(db: Executor<EngineDb>, row: PromptRow, now: string) {
  await db
    .updateTable('prompt')
    .set({ is_active: false, updated_at: now })
    .where('realm_id', '=', row.realm_id)
    .where('key', '=', row.key)
    .where('id', '!=', row.id)
    .where('is_active', '=', true)
    .execute();
  await db
    .updateTable('prompt')
    .set({ is_active: true, activated_at: row.activated_at ?? now, updated_at: now })
    .where('id', '=', row.id)
    .execute();
}

/** A new version of the prompt `key` (version = latest + 1); active at once only when `is_active` is true. */
export async function createPrompt(rt: RuntimeContext, principal: RuntimePrincipal, input: PromptInput) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const variables = input.variables ?? [];
  checkTemplate(input.content, variables);
  const now = nowIso(rt);
  for (let attempt = 0; ; attempt++) {
    try {
      const row = await rt.db.transaction().execute(async (trx) => {
        // Versions of one key are numbered one at a time (concurrent creators wait here, then see the new max).
        await lockForTransaction(trx, `prompt|${realmId}|${input.key}`);
        const latest = await trx
          .selectFrom('prompt')
          .select((eb) => eb.fn.max('version').as('v'))
          .where('realm_id', '=', realmId)
          .where('key', '=', input.key)
          .executeTakeFirst();
        const created: PromptRow = {
          id: newId(),
          realm_id: realmId,
          key: input.key,
          version: Number(latest?.v ?? 0) + 1,
          name: input.name,
          content: input.content,
          variables: JSON.stringify(variables),
          is_active: false,
          activated_at: null,
          created_at: now,
          updated_at: now,
        };
        await trx.insertInto('prompt').values(created).execute();
        if (input.is_active) await activateRow(trx, created, now);
        return (await findPromptRow(trx, realmId, created.id))!;
      });
      await rt.realms.invalidate(realmId);
      return toPromptView(row);
    } catch (error) {
      // Two versions of one key created at once: the unique (realm, key, version) index decides; take the next.
      if (!isUniqueViolation(error) || attempt >= 3) throw error;
    }
  }
}

export async function listPrompts(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined; key?: string | undefined; is_active?: boolean | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  let q = rt.db.selectFrom('prompt').selectAll().where('realm_id', '=', realmId);
  if (query.cursor) q = q.where('id', '<', query.cursor);
  if (query.key) q = q.where('key', '=', query.key);
  if (query.is_active !== undefined) q = q.where('is_active', '=', query.is_active);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  return idPage(rows, query.limit, toPromptView);
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
  await rt.db.transaction().execute(async (trx) => {
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
    await trx
      .updateTable('prompt')
      .set({ name: input.name, content: input.content, variables: JSON.stringify(variables), updated_at: now })
      .where('id', '=', row.id)
      .execute();
    if (input.is_active === true && !toBoolean(row.is_active)) await activateRow(trx, row, now);
    if (input.is_active === false && toBoolean(row.is_active)) {
      if ((await agentsUsingKey(trx, realmId, row.key)) > 0)
        throw RuntimeErrors.inUse(
          `Agents run prompt ${row.key}: activate another version instead of deactivating this one`,
        );
      await trx.updateTable('prompt').set({ is_active: false, updated_at: now }).where('id', '=', row.id).execute();
    }
  });
  await rt.realms.invalidate(realmId);
  return getPrompt(rt, principal, id);
}

/** Makes this version the active one of its key (the others of the key become inactive). */
export async function activatePrompt(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  await rt.db.transaction().execute(async (trx) => {
    const row = await findPromptRow(trx, realmId, id);
    if (!row) throw RuntimeErrors.notFound('Prompt', id);
    await activateRow(trx, row, nowIso(rt));
  });
  await rt.realms.invalidate(realmId);
  return getPrompt(rt, principal, id);
}

/** Deletes a version no agent references and that is not the active version of a key agents run. */
export async function deletePrompt(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  await rt.db.transaction().execute(async (trx) => {
    const row = await findPromptRow(trx, realmId, id);
    if (!row) throw RuntimeErrors.notFound('Prompt', id);
    const direct = await trx
      .selectFrom('agent_config')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('realm_id', '=', realmId)
      .where('system_prompt_id', '=', row.id)
      .executeTakeFirstOrThrow();
    if (Number(direct.n) > 0)
      throw RuntimeErrors.inUse(`Prompt ${row.id} is the system prompt of ${direct.n} agent(s)`);
    if (toBoolean(row.is_active) && (await agentsUsingKey(trx, realmId, row.key)) > 0)
      throw RuntimeErrors.inUse(`Prompt ${row.id} is the active version of ${row.key}, which agents run`);
    await trx.deleteFrom('prompt').where('id', '=', row.id).execute();
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
    const row = await rt.db
      .selectFrom('prompt as p')
      .innerJoin('prompt as active', (join) =>
        join.onRef('active.realm_id', '=', 'p.realm_id').onRef('active.key', '=', 'p.key'),
      )
      .select(['active.id', 'active.key', 'active.version', 'active.content', 'active.variables'])
      .where('p.realm_id', '=', realmId)
      .where('p.id', '=', id)
      .where('active.is_active', '=', true)
      .executeTakeFirst();
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
