import { sha256Hex, toIsoString, withTransaction } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import { uuidv7 } from '../ids.ts';
import { MeasureErrors } from './measure-errors.ts';
import { deactivatePrompt, findPromptsByKeys, type PromptRow, pagePrompts, upsertPrompts } from './measure-store.ts';

/** Most prompts one import may carry, and most active prompts a run asks. */
export const MAX_PROMPTS_PER_IMPORT = 5000;
export const MAX_PROMPTS_PER_RUN = 10_000;

export interface PromptInput {
  text: string;
  topic?: string | undefined;
  locale?: string | undefined;
  intent?: string | undefined;
  persona?: string | undefined;
}

export function mapPrompt(row: PromptRow) {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    projectId: row.project_id === '' ? null : row.project_id,
    text: row.text,
    topic: row.topic,
    locale: row.locale,
    intent: row.intent,
    persona: row.persona,
    active: Number(row.active) === 1,
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}

const LOCALE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/;

/** The identity of a prompt: its locale and its whitespace-normalized text. */
export function promptKey(text: string, locale: string): string {
  return sha256Hex(`${locale.toLowerCase()}\n${text.trim().replace(/\s+/g, ' ')}`);
}

/**
 * Adds tracked prompts (all or none). A prompt is identified by its text and locale: importing it again updates its
 * topic, intent and persona and reactivates it, so an import can be repeated safely.
 */
export async function importPrompts(
  ctx: GeoContext,
  workspaceId: string,
  projectId: string,
  prompts: PromptInput[],
): Promise<{ created: number; updated: number; ids: string[] }> {
  if (prompts.length === 0) throw MeasureErrors.invalid('prompts: at least one prompt is needed');
  if (prompts.length > MAX_PROMPTS_PER_IMPORT)
    throw MeasureErrors.invalid(`prompts: at most ${MAX_PROMPTS_PER_IMPORT} per import`);
  const now = ctx.now().toISOString();
  const rows = new Map<string, ReturnType<typeof toRow>>();
  function toRow(prompt: PromptInput, index: number) {
    const text = prompt.text.trim();
    if (text.length === 0 || text.length > 4000)
      throw MeasureErrors.invalid(`prompts[${index}].text: 1 to 4000 characters`);
    const locale = prompt.locale?.trim() || 'en';
    if (!LOCALE.test(locale)) throw MeasureErrors.invalid(`prompts[${index}].locale: a BCP 47 tag such as en or de-DE`);
    const optional = (value: string | undefined, max: number, field: string) => {
      const v = value?.trim();
      if (!v) return null;
      if (v.length > max) throw MeasureErrors.invalid(`prompts[${index}].${field}: at most ${max} characters`);
      return v;
    };
    return {
      id: uuidv7(),
      workspace_id: workspaceId,
      project_id: projectId,
      prompt_key: promptKey(text, locale),
      text,
      topic: optional(prompt.topic, 200, 'topic'),
      locale,
      intent: optional(prompt.intent, 64, 'intent'),
      persona: optional(prompt.persona, 200, 'persona'),
      active: 1,
      created_at: now,
      updated_at: now,
    };
  }
  prompts.forEach((prompt, index) => {
    const row = toRow(prompt, index);
    rows.set(row.prompt_key, row);
  });
  return withTransaction(ctx.db, async (trx) => {
    const keys = [...rows.keys()];
    const before = new Set((await findPromptsByKeys(trx, workspaceId, projectId, keys)).map((r) => r.prompt_key));
    await upsertPrompts(trx, [...rows.values()]);
    const stored = await findPromptsByKeys(trx, workspaceId, projectId, keys);
    const idByKey = new Map(stored.map((r) => [r.prompt_key, r.id]));
    return {
      created: keys.filter((k) => !before.has(k)).length,
      updated: keys.filter((k) => before.has(k)).length,
      ids: keys.map((k) => idByKey.get(k)!),
    };
  });
}

/** One page of a project's prompts (oldest first, keyset). */
export async function listPrompts(
  ctx: GeoContext,
  workspaceId: string,
  projectId: string,
  limit: number,
  cursor: string | undefined,
) {
  const rows = await pagePrompts(ctx.db, {
    workspaceId,
    projectId,
    limit: limit + 1,
    afterId: decodeCursor('prm', cursor),
    activeOnly: true,
  });
  const page = pageOf('prm', rows, limit);
  return { items: page.rows.map(mapPrompt), nextCursor: page.next };
}

/** Stops tracking a prompt (kept for the runs that asked it). */
export async function removePrompt(ctx: GeoContext, workspaceId: string, promptId: string): Promise<void> {
  if (!(await deactivatePrompt(ctx.db, workspaceId, promptId.toLowerCase(), ctx.now().toISOString())))
    throw MeasureErrors.promptNotFound(promptId);
}

/**
 * Parses prompts from CSV: a header row naming `text` (or `prompt`) and optionally `topic`, `locale`, `intent`,
 * `persona`; RFC 4180 quoting (quoted fields may hold commas, quotes doubled, line breaks).
 */
export function parsePromptCsv(csv: string): PromptInput[] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  const text = csv.replace(/^\uFEFF/, '');
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      field = '';
      if (record.some((f) => f !== '')) records.push(record);
      record = [];
    } else field += c;
  }
  record.push(field);
  if (record.some((f) => f !== '')) records.push(record);
  if (quoted) throw MeasureErrors.invalid('CSV: a quoted field is not closed');
  const [header, ...body] = records;
  if (!header) throw MeasureErrors.invalid('CSV: empty');
  const names = header.map((h) => h.trim().toLowerCase());
  const column = (name: string) => names.indexOf(name);
  const textColumn = column('text') !== -1 ? column('text') : column('prompt');
  if (textColumn === -1) throw MeasureErrors.invalid('CSV: the header needs a `text` (or `prompt`) column');
  const get = (row: string[], name: string) => {
    const index = column(name);
    return index === -1 ? undefined : row[index];
  };
  return body.map((row) => ({
    text: row[textColumn] ?? '',
    topic: get(row, 'topic'),
    locale: get(row, 'locale'),
    intent: get(row, 'intent'),
    persona: get(row, 'persona'),
  }));
}
