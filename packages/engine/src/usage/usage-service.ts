import { Readable } from 'node:stream';
import { checkIdempotencyKey, type Executor, fromJsonColumn, type IdempotentResponse, toIsoString } from '@keel/core';
import { stringify } from 'csv-stringify';
import { findAgentWithConfig } from '../agents/agent-store.ts';
import type { EngineDb } from '../db/schema.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { isUuid, newId } from '../ids.ts';
import { amountPicos, costPicos, picosText } from '../providers/pricing.ts';
import { findProviderRow } from '../providers/provider-store.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction, runWrite } from '../write.ts';
import {
  insertUsageRecord,
  insertUsageRecords,
  listUsageRecords,
  sumUsageRecords,
  type UsageFilter,
  type UsageGroup,
  type UsageRecordRow,
  type UsageSumRow,
} from './usage-store.ts';

export const USAGE_TYPES = ['ai', 'tool', 'custom'] as const;
/**
 * `chat` and `execute`: the engine's own turns; `flow`: a durable flow execution's model and tool steps; `tools`: REST
 * tool calls (execute, execute-parallel, aggregate, proxy); `mcp`: the public tool endpoint's execute tool; `api`:
 * reported by a client.
 */
export const USAGE_SOURCES = ['chat', 'execute', 'flow', 'tools', 'mcp', 'api'] as const;
export type UsageSource = (typeof USAGE_SOURCES)[number];
/** Default window of lists, summaries and exports: the 30 days before now; at most 366 days. */
const DEFAULT_WINDOW_MS = 30 * 86_400_000;
const MAX_WINDOW_MS = 366 * 86_400_000;
/** occurred_at may be at most 5 minutes ahead of the server's clock and at most 366 days back. */
const MAX_FUTURE_MS = 5 * 60_000;
/** One record's cost stays below 10^6 currency units (10^18 picos), so sums stay exact 64-bit integers. */
const MAX_RECORD_PICOS = 10n ** 18n;
/** Groups one summary answers at most (`truncated` beyond). */
export const MAX_SUMMARY_GROUPS = 1000;
/** Rows one export page reads; the export holds one page in memory at a time. */
const EXPORT_PAGE_ROWS = 500;
/** The most rows one export writes (`X-Export-Truncated` is not possible once streaming: the limit is documented). */
export const MAX_EXPORT_ROWS = 1_000_000;

export type UsageType = (typeof USAGE_TYPES)[number];

export interface UsageWindowQuery {
  from?: string | undefined;
  to?: string | undefined;
  type?: UsageType | undefined;
  source?: string | undefined;
  agent_id?: string | undefined;
  provider_id?: string | undefined;
}

export interface AiUsageInput {
  provider_id: string;
  agent_id?: string | undefined;
  model?: string | undefined;
  session_id?: string | undefined;
  input_tokens: number;
  output_tokens: number;
  images?: number | undefined;
  occurred_at?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface UsageEntryInput {
  type: 'tool' | 'custom';
  name: string;
  quantity?: number | undefined;
  unit?: string | undefined;
  agent_id?: string | undefined;
  tool_server_id?: string | undefined;
  session_id?: string | undefined;
  cost?: number | undefined;
  currency?: string | undefined;
  occurred_at?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** The API shape of one usage record. */
export function toUsageView(row: UsageRecordRow) {
  return {
    id: row.id,
    type: row.type,
    source: row.source,
    name: row.name,
    provider_id: row.provider_id,
    agent_id: row.agent_id,
    tool_server_id: row.tool_server_id,
    session_id: row.session_id,
    execution_id: row.execution_id,
    flow_execution_id: row.flow_execution_id,
    step_key: row.step_key,
    status: row.status,
    input_tokens: Number(row.input_tokens),
    output_tokens: Number(row.output_tokens),
    images: Number(row.images),
    quantity: Number(row.quantity),
    unit: row.unit,
    cost: picosText(BigInt(row.cost_picos)),
    currency: row.currency,
    cost_source: row.cost_source,
    metadata: fromJsonColumn<Record<string, unknown> | null>(row.metadata) ?? null,
    occurred_at: toIsoString(row.occurred_at),
    created_at: toIsoString(row.created_at),
  };
}
export type UsageView = ReturnType<typeof toUsageView>;

function isoOrThrow(value: string, field: string): number {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw RuntimeErrors.invalid(`${field} must be an ISO 8601 date-time`);
  return time;
}

/** The [from, to) window of a query: default the 30 days before now, at most 366 days, from before to. */
function windowOf(rt: RuntimeContext, query: { from?: string | undefined; to?: string | undefined }) {
  const to = query.to === undefined ? rt.clock() + 1 : isoOrThrow(query.to, 'to');
  const from = query.from === undefined ? to - DEFAULT_WINDOW_MS : isoOrThrow(query.from, 'from');
  if (from >= to) throw RuntimeErrors.invalid('from must be before to');
  if (to - from > MAX_WINDOW_MS) throw RuntimeErrors.invalid('the window from..to spans at most 366 days');
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}

function filterOf(rt: RuntimeContext, query: UsageWindowQuery): UsageFilter {
  return {
    ...windowOf(rt, query),
    type: query.type,
    source: query.source,
    agentId: query.agent_id?.toLowerCase(),
    providerId: query.provider_id?.toLowerCase(),
  };
}

function occurredAt(rt: RuntimeContext, value: string | undefined): string {
  if (value === undefined) return nowIso(rt);
  const time = isoOrThrow(value, 'occurred_at');
  const now = rt.clock();
  if (time > now + MAX_FUTURE_MS || time < now - MAX_WINDOW_MS)
    throw RuntimeErrors.invalid('occurred_at must be at most 5 minutes ahead and at most 366 days back');
  return new Date(time).toISOString();
}

function checkedPicos(picos: bigint): string {
  if (picos >= MAX_RECORD_PICOS)
    throw RuntimeErrors.invalid('one usage record costs less than 1,000,000 currency units');
  return picos.toString();
}

async function checkAgent(db: Executor<EngineDb>, realmId: string, agentId: string | undefined) {
  if (agentId === undefined) return null;
  if (!isUuid(agentId) || !(await findAgentWithConfig(db, realmId, agentId)))
    throw RuntimeErrors.notFound('Agent', agentId);
  return agentId.toLowerCase();
}

type UsageRow = Omit<UsageRecordRow, 'metadata'> & { metadata: string | null };

/** A new record: `fields` over the defaults (no references, no tokens, quantity 1, no cost). */
function usageRow(
  fields: Pick<UsageRow, 'realm_id' | 'type' | 'source' | 'occurred_at' | 'created_by' | 'created_at'> &
    Partial<UsageRow>,
): UsageRow {
  return {
    id: newId(),
    name: null,
    provider_id: null,
    agent_id: null,
    tool_server_id: null,
    session_id: null,
    execution_id: null,
    flow_execution_id: null,
    step_key: null,
    status: null,
    input_tokens: 0,
    output_tokens: 0,
    images: 0,
    quantity: 1,
    unit: null,
    cost_picos: '0',
    currency: null,
    cost_source: 'none',
    metadata: null,
    ...fields,
  };
}

function idempotency(principal: RuntimePrincipal, operation: string, rawKey: unknown, payload: unknown) {
  const key = checkIdempotencyKey(rawKey, false);
  return key === undefined ? undefined : { scope: `${principal.keyId}|${operation}`, key, payload };
}

/**
 * Records AI usage reported by a client (operator+). The cost is never the caller's: it is computed exactly from the
 * realm provider's prices and currency at the time of recording. An unknown or foreign provider or agent is a 404.
 */
export async function recordAiUsage(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: AiUsageInput,
  idempotencyKey: unknown,
): Promise<IdempotentResponse<UsageView>> {
  const realmId = requirePermission(principal, 'runtime:run');
  const request = idempotency(principal, 'POST /api/v1/runtime/ai/usage', idempotencyKey, input);
  const at = occurredAt(rt, input.occurred_at);
  return runWrite(rt.engine, request, async (trx) => {
    const provider = isUuid(input.provider_id) ? await findProviderRow(trx, realmId, input.provider_id) : undefined;
    if (!provider) throw RuntimeErrors.notFound('Provider', input.provider_id);
    const agentId = await checkAgent(trx, realmId, input.agent_id);
    const picos = costPicos(
      {
        input: provider.input_price_per_million,
        output: provider.output_price_per_million,
        image: provider.image_price,
      },
      { inputTokens: input.input_tokens, outputTokens: input.output_tokens, images: input.images ?? 0 },
    );
    const row = usageRow({
      realm_id: realmId,
      type: 'ai',
      source: 'api',
      name: input.model ?? provider.text_model,
      provider_id: provider.id,
      agent_id: agentId,
      session_id: input.session_id ?? null,
      input_tokens: input.input_tokens,
      output_tokens: input.output_tokens,
      images: input.images ?? 0,
      unit: 'request',
      cost_picos: checkedPicos(picos),
      currency: provider.currency,
      cost_source: 'provider_prices',
      metadata: input.metadata ? JSON.stringify(input.metadata) : null,
      occurred_at: at,
      created_by: principal.identityId,
      created_at: nowIso(rt),
    });
    await insertUsageRecord(trx, row);
    return { statusCode: 201, body: toUsageView(row) };
  });
}

/**
 * Records a tool or custom usage entry (operator+). Its cost, when sent, is the caller's own figure (say a paid
 * third-party API behind a tool) and is marked `cost_source: caller`; AI usage goes through POST /runtime/ai/usage.
 */
export async function recordUsageEntry(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: UsageEntryInput,
  idempotencyKey: unknown,
): Promise<IdempotentResponse<UsageView>> {
  const realmId = requirePermission(principal, 'runtime:run');
  if ((input.cost === undefined) !== (input.currency === undefined))
    throw RuntimeErrors.invalid('cost and currency go together');
  const picos = input.cost === undefined ? 0n : amountPicos(input.cost);
  const request = idempotency(principal, 'POST /api/v1/usages', idempotencyKey, input);
  const at = occurredAt(rt, input.occurred_at);
  return runWrite(rt.engine, request, async (trx) => {
    const agentId = await checkAgent(trx, realmId, input.agent_id);
    const row = usageRow({
      realm_id: realmId,
      type: input.type,
      source: 'api',
      name: input.name,
      agent_id: agentId,
      tool_server_id: input.tool_server_id?.toLowerCase() ?? null,
      session_id: input.session_id ?? null,
      quantity: input.quantity ?? 1,
      unit: input.unit ?? (input.type === 'tool' ? 'call' : null),
      cost_picos: checkedPicos(picos),
      currency: input.currency?.toUpperCase() ?? null,
      cost_source: input.cost === undefined ? 'none' : 'caller',
      metadata: input.metadata ? JSON.stringify(input.metadata) : null,
      occurred_at: at,
      created_by: principal.identityId,
      created_at: nowIso(rt),
    });
    await insertUsageRecord(trx, row);
    return { statusCode: 201, body: toUsageView(row) };
  });
}

export interface TurnUsage {
  realmId: string;
  executionId: string;
  kind: string;
  status: string;
  agentId: string;
  sessionId: string | null;
  providerId: string | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  costPicos: bigint;
  currency: string;
  createdBy: string;
  at: string;
}

/**
 * The usage record of a chat or execute turn, written in the turn's own transaction (execution ids are unique in
 * the table, so a turn is counted once; summaries read only this table, never the execution rows).
 */
export async function recordTurnUsage(trx: Executor<EngineDb>, turn: TurnUsage): Promise<void> {
  await insertUsageRecord(
    trx,
    usageRow({
      realm_id: turn.realmId,
      type: 'ai',
      source: turn.kind === 'execute' ? 'execute' : 'chat',
      name: turn.model?.slice(0, 255) ?? null,
      provider_id: turn.providerId,
      agent_id: turn.agentId,
      session_id: turn.sessionId,
      execution_id: turn.executionId,
      status: turn.status,
      input_tokens: turn.inputTokens,
      output_tokens: turn.outputTokens,
      unit: 'request',
      cost_picos: turn.costPicos.toString(),
      currency: turn.currency,
      cost_source: 'provider_prices',
      occurred_at: turn.at,
      created_by: turn.createdBy,
      created_at: turn.at,
    }),
  );
}

/** What one model call or tool call used, as the engine meters it (priced like a chat turn for model calls). */
export type MeteredUse =
  | {
      type: 'ai';
      providerId: string;
      model: string | null;
      agentId: string | null;
      inputTokens: number;
      outputTokens: number;
      costPicos: bigint;
      currency: string;
    }
  | {
      type: 'tool';
      toolName: string;
      /** The server that answered (or the last one tried); null when no server was reached. */
      serverId: string | null;
      agentId: string | null;
      ok: boolean;
      /** Attempts of the call (retries and fallbacks), when known. */
      attempts?: number | undefined;
    };

/** Where a metered use happened and for whom. */
export interface UseContext {
  realmId: string;
  source: UsageSource;
  sessionId: string | null;
  createdBy: string;
  at: string;
  flowExecutionId?: string | undefined;
  stepKey?: string | undefined;
}

/** The usage record of a metered model or tool call. */
export function meteredRecord(use: MeteredUse, context: UseContext): UsageRow {
  const common = {
    realm_id: context.realmId,
    source: context.source,
    agent_id: use.agentId,
    session_id: context.sessionId,
    flow_execution_id: context.flowExecutionId ?? null,
    step_key: context.stepKey ?? null,
    occurred_at: context.at,
    created_by: context.createdBy,
    created_at: context.at,
  };
  if (use.type === 'ai')
    return usageRow({
      ...common,
      type: 'ai',
      name: use.model?.slice(0, 255) ?? null,
      provider_id: use.providerId,
      status: 'succeeded',
      input_tokens: use.inputTokens,
      output_tokens: use.outputTokens,
      unit: 'request',
      cost_picos: use.costPicos.toString(),
      currency: use.currency,
      cost_source: 'provider_prices',
    });
  return usageRow({
    ...common,
    type: 'tool',
    name: use.toolName.slice(0, 255),
    tool_server_id: use.serverId,
    status: use.ok ? 'succeeded' : 'failed',
    unit: 'call',
    metadata: use.attempts === undefined ? null : JSON.stringify({ attempts: use.attempts }),
  });
}

/** Writes metered uses in `trx` (a flow step's transaction), one statement. */
export async function recordMetered(
  trx: Executor<EngineDb>,
  uses: readonly { use: MeteredUse; context: UseContext }[],
): Promise<void> {
  await insertUsageRecords(
    trx,
    uses.map(({ use, context }) => meteredRecord(use, context)),
  );
}

/**
 * Writes the usage records of REST and public-endpoint tool calls in their own transaction (those calls have no
 * record of their own to share one with); a failure to record is logged, never turned into a failed call.
 */
export async function recordToolCalls(
  rt: RuntimeContext,
  uses: readonly { use: MeteredUse; context: UseContext }[],
): Promise<void> {
  if (uses.length === 0) return;
  await inTransaction(rt.engine, (trx) => recordMetered(trx, uses)).catch((error: unknown) =>
    rt.log.warn({ err: error }, 'tool usage records not stored'),
  );
}

/** A page of the realm's usage records (any role), newest first, filtered by window, type, source, agent, provider. */
export async function listUsage(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: UsageWindowQuery & { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const rows = await listUsageRecords(
    rt.db,
    realmId,
    { ...filterOf(rt, query), afterId: cursorAfterId('usages', query.cursor) },
    query.limit + 1,
  );
  return idPage('usages', rows, query.limit, toUsageView);
}

interface Totals {
  records: number;
  input_tokens: number;
  output_tokens: number;
  images: number;
  quantity: number;
  cost: Record<string, string>;
}

/** Folds per-currency sum rows into totals per key (cost as exact decimal text per currency). */
function fold(rows: readonly UsageSumRow[], keyOf: (row: UsageSumRow) => string): Map<string, Totals> {
  const out = new Map<string, Totals & { picos: Map<string, bigint> }>();
  for (const row of rows) {
    const key = keyOf(row);
    let totals = out.get(key);
    if (!totals) {
      totals = { records: 0, input_tokens: 0, output_tokens: 0, images: 0, quantity: 0, cost: {}, picos: new Map() };
      out.set(key, totals);
    }
    totals.records += row.records;
    totals.input_tokens += row.input_tokens;
    totals.output_tokens += row.output_tokens;
    totals.images += row.images;
    totals.quantity += row.quantity;
    if (row.currency !== null)
      totals.picos.set(row.currency, (totals.picos.get(row.currency) ?? 0n) + BigInt(row.cost_picos));
  }
  const result = new Map<string, Totals>();
  for (const [key, { picos, ...totals }] of out)
    result.set(key, {
      ...totals,
      cost: Object.fromEntries([...picos].sort(([a], [b]) => a.localeCompare(b)).map(([c, p]) => [c, picosText(p)])),
    });
  return result;
}

async function grouped(rt: RuntimeContext, realmId: string, filter: UsageFilter, groups: readonly UsageGroup[]) {
  const rows = await sumUsageRecords(rt.db, realmId, filter, groups, MAX_SUMMARY_GROUPS + 1);
  return { rows: rows.slice(0, MAX_SUMMARY_GROUPS), truncated: rows.length > MAX_SUMMARY_GROUPS };
}

const EMPTY: Totals = { records: 0, input_tokens: 0, output_tokens: 0, images: 0, quantity: 0, cost: {} };

/** Realm and per-agent totals over a window (any role): records, tokens, quantity, exact cost per currency. */
export async function usageTotals(rt: RuntimeContext, principal: RuntimePrincipal, query: UsageWindowQuery) {
  const realmId = requirePermission(principal, 'config:read');
  const filter = filterOf(rt, query);
  const [realm, agents] = await Promise.all([
    sumUsageRecords(rt.db, realmId, filter, ['status'], MAX_SUMMARY_GROUPS),
    grouped(rt, realmId, filter, ['agent_id']),
  ]);
  const byStatus: Record<string, number> = {};
  for (const row of realm) if (row.keys[0] !== null) byStatus[row.keys[0]] = (byStatus[row.keys[0]] ?? 0) + row.records;
  return {
    realm_id: realmId,
    from: filter.from,
    to: filter.to,
    totals: fold(realm, () => 'realm').get('realm') ?? EMPTY,
    by_status: byStatus,
    agents: [...fold(agents.rows, (row) => row.keys[0] ?? '')]
      .filter(([agentId]) => agentId !== '')
      .map(([agentId, totals]) => ({ agent_id: agentId, ...totals })),
    truncated: agents.truncated,
  };
}

/** AI usage statistics (any role): per provider (with its models) and per agent, over a window. */
export async function aiUsageStats(rt: RuntimeContext, principal: RuntimePrincipal, query: UsageWindowQuery) {
  const realmId = requirePermission(principal, 'config:read');
  const filter = { ...filterOf(rt, query), type: 'ai' };
  const [providers, agents] = await Promise.all([
    grouped(rt, realmId, filter, ['provider_id', 'name']),
    grouped(rt, realmId, filter, ['agent_id']),
  ]);
  const models = new Map<string, { model: string | null; totals: Totals }[]>();
  for (const [key, totals] of fold(providers.rows, (row) => JSON.stringify(row.keys))) {
    const [providerId, model] = JSON.parse(key) as [string | null, string | null];
    const list = models.get(providerId ?? '') ?? [];
    list.push({ model, totals });
    models.set(providerId ?? '', list);
  }
  const providerTotals = fold(providers.rows, (row) => row.keys[0] ?? '');
  return {
    realm_id: realmId,
    from: filter.from,
    to: filter.to,
    providers: [...providerTotals].map(([providerId, totals]) => ({
      provider_id: providerId === '' ? null : providerId,
      ...totals,
      average_tokens_per_record:
        totals.records === 0
          ? 0
          : Math.round(((totals.input_tokens + totals.output_tokens) / totals.records) * 100) / 100,
      models: (models.get(providerId) ?? []).map(({ model, totals: t }) => ({ model, ...t })),
    })),
    agents: [...fold(agents.rows, (row) => row.keys[0] ?? '')].map(([agentId, totals]) => ({
      agent_id: agentId === '' ? null : agentId,
      ...totals,
    })),
    truncated: providers.truncated || agents.truncated,
  };
}

/** Tool usage and cost (any role): per tool name and tool server, over a window. */
export async function toolUsageSummary(rt: RuntimeContext, principal: RuntimePrincipal, query: UsageWindowQuery) {
  const realmId = requirePermission(principal, 'config:read');
  const filter = { ...filterOf(rt, query), type: 'tool' };
  const tools = await grouped(rt, realmId, filter, ['name', 'tool_server_id']);
  const totals = fold(tools.rows, () => 'all').get('all') ?? EMPTY;
  return {
    realm_id: realmId,
    from: filter.from,
    to: filter.to,
    totals: { records: totals.records, quantity: totals.quantity, cost: totals.cost },
    tools: [...fold(tools.rows, (row) => JSON.stringify(row.keys))].map(([key, t]) => {
      const [name, serverId] = JSON.parse(key) as [string | null, string | null];
      return { tool_name: name, tool_server_id: serverId, records: t.records, quantity: t.quantity, cost: t.cost };
    }),
    truncated: tools.truncated,
  };
}

const EXPORT_COLUMNS = [
  'id',
  'occurred_at',
  'type',
  'source',
  'name',
  'provider_id',
  'agent_id',
  'tool_server_id',
  'session_id',
  'execution_id',
  'flow_execution_id',
  'step_key',
  'status',
  'input_tokens',
  'output_tokens',
  'images',
  'quantity',
  'unit',
  'cost',
  'currency',
  'cost_source',
] as const;

/**
 * The realm's usage records of a window as CSV or JSON (any role), newest first, streamed: the records are read
 * in keyset pages of 500 while the client consumes the stream, so memory stays flat however many rows there are.
 * The window and filters are checked before the first byte is sent (a bad query is a 400, not a broken stream).
 */
export function exportUsage(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: UsageWindowQuery & { format: 'csv' | 'json' },
): { contentType: string; filename: string; body: Readable } {
  const realmId = requirePermission(principal, 'config:read');
  const filter = filterOf(rt, query);
  async function* pages() {
    let afterId: string | undefined;
    let written = 0;
    while (written < MAX_EXPORT_ROWS) {
      const rows = await listUsageRecords(rt.db, realmId, { ...filter, afterId }, EXPORT_PAGE_ROWS);
      if (rows.length === 0) return;
      const views = rows.slice(0, MAX_EXPORT_ROWS - written).map(toUsageView);
      written += views.length;
      yield views;
      if (rows.length < EXPORT_PAGE_ROWS) return;
      afterId = rows[rows.length - 1]!.id;
    }
  }
  const stamp = filter.to.slice(0, 10);
  if (query.format === 'csv') {
    const csv = stringify({ header: true, columns: [...EXPORT_COLUMNS], escape_formulas: true });
    const body = Readable.from(
      (async function* () {
        for await (const views of pages()) for (const view of views) yield view;
      })(),
      { objectMode: true },
    );
    body.on('error', (error) => csv.destroy(error));
    return { contentType: 'text/csv; charset=utf-8', filename: `usage-${stamp}.csv`, body: body.pipe(csv) };
  }
  return {
    contentType: 'application/json; charset=utf-8',
    filename: `usage-${stamp}.json`,
    body: Readable.from(
      (async function* () {
        yield `{"realm_id":${JSON.stringify(realmId)},"from":"${filter.from}","to":"${filter.to}","data":[`;
        let first = true;
        for await (const views of pages())
          for (const view of views) {
            yield `${first ? '' : ','}${JSON.stringify(view)}`;
            first = false;
          }
        yield ']}';
      })(),
      { objectMode: false },
    ),
  };
}

/** The `engine_usage_summary` MCP tool: `usageTotals` over the last `days` days (1–90, default 30). */
export async function usageSummary(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: { days?: number | undefined },
) {
  const days = input.days ?? 30;
  const to = rt.clock() + 1;
  const totals = await usageTotals(rt, principal, {
    from: new Date(to - days * 86_400_000).toISOString(),
    to: new Date(to).toISOString(),
    type: 'ai',
  });
  const executions = (t: Totals) => ({ ...t, executions: t.records });
  return {
    ...totals,
    days,
    since: totals.from,
    totals: executions(totals.totals),
    agents: totals.agents.map((agent) => executions(agent) as typeof agent & { executions: number }),
  };
}
