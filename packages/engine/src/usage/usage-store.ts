import type { Executor } from '@keel/core';
import { type Insertable, type Selectable, sql } from 'kysely';
import type { EngineDb } from '../db/schema.ts';

type Timestamp = string | Date;

export interface UsageRecordTable {
  id: string;
  realm_id: string;
  /** `ai`, `tool` or `custom`. */
  type: string;
  /**
   * `chat`, `execute` (the engine's own turns), `flow` (a durable flow execution's step), `tools` (a REST tool
   * call), `mcp` (the public tool endpoint's execute tool) or `api` (reported by a client).
   */
  source: string;
  /** The model (ai), the tool (tool) or the metric (custom). */
  name: string | null;
  provider_id: string | null;
  agent_id: string | null;
  tool_server_id: string | null;
  session_id: string | null;
  /** A turn's execution (unique: counted once). */
  execution_id: string | null;
  /** A durable flow execution whose step used it (migration 2026_11_26_0080). */
  flow_execution_id: string | null;
  /** That step's key (`<frame>/<node id>#<visit>`). */
  step_key: string | null;
  status: string | null;
  input_tokens: number | string;
  output_tokens: number | string;
  images: number;
  quantity: number | string;
  unit: string | null;
  /** Exact cost in pico-units of `currency` (integer text when read). */
  cost_picos: string | number | bigint;
  currency: string | null;
  /** `provider_prices` or `caller`. */
  cost_source: string;
  metadata: unknown;
  occurred_at: Timestamp;
  created_by: string;
  created_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface EngineDb {
    usage_record: UsageRecordTable;
  }
}

export type UsageRecordRow = Omit<Selectable<UsageRecordTable>, 'cost_picos'> & { cost_picos: string };

/** Every column but cost_picos, which is read as exact integer text. */
const COLUMNS = [
  'id',
  'realm_id',
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
  'currency',
  'cost_source',
  'metadata',
  'occurred_at',
  'created_by',
  'created_at',
] as const;
const costText = sql<string>`cast(cost_picos as text)`.as('cost_picos');

export interface UsageFilter {
  from: string;
  to: string;
  type?: string | undefined;
  source?: string | undefined;
  agentId?: string | undefined;
  providerId?: string | undefined;
}

export async function insertUsageRecord(db: Executor<EngineDb>, row: Insertable<UsageRecordTable>): Promise<void> {
  await db.insertInto('usage_record').values(row).execute();
}

/** Inserts several records in one statement. */
export async function insertUsageRecords(
  db: Executor<EngineDb>,
  rows: readonly Insertable<UsageRecordTable>[],
): Promise<void> {
  if (rows.length > 0)
    await db
      .insertInto('usage_record')
      .values([...rows])
      .execute();
}

/** The realm's records matching `filter` (occurred_at in [from, to)), newest id first, before `afterId`, at most `limit`. */
export function listUsageRecords(
  db: Executor<EngineDb>,
  realmId: string,
  filter: UsageFilter & { afterId?: string | undefined },
  limit: number,
) {
  let q = db
    .selectFrom('usage_record')
    .select([...COLUMNS, costText])
    .where('realm_id', '=', realmId)
    .where('occurred_at', '>=', filter.from)
    .where('occurred_at', '<', filter.to);
  if (filter.afterId) q = q.where('id', '<', filter.afterId);
  if (filter.type) q = q.where('type', '=', filter.type);
  if (filter.source) q = q.where('source', '=', filter.source);
  if (filter.agentId) q = q.where('agent_id', '=', filter.agentId);
  if (filter.providerId) q = q.where('provider_id', '=', filter.providerId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** The columns a usage total can be grouped by. */
export type UsageGroup = 'agent_id' | 'provider_id' | 'name' | 'status' | 'tool_server_id';

export interface UsageSumRow {
  /** The grouping columns' values, in the order asked. */
  keys: (string | null)[];
  currency: string | null;
  records: number;
  input_tokens: number;
  output_tokens: number;
  images: number;
  quantity: number;
  /** Exact integer text. */
  cost_picos: string;
}

/**
 * Sums of the realm's records matching `filter`, grouped by `groups` and currency (at most `limit` groups, largest
 * record count first). Exact: the database adds the integer pico-units and hands the sum back as text.
 */
export async function sumUsageRecords(
  db: Executor<EngineDb>,
  realmId: string,
  filter: UsageFilter,
  groups: readonly UsageGroup[],
  limit: number,
): Promise<UsageSumRow[]> {
  let q = db
    .selectFrom('usage_record')
    .select([
      'currency',
      (eb) => eb.fn.countAll<number | string>().as('records'),
      sql<string>`cast(sum(input_tokens) as text)`.as('input_tokens'),
      sql<string>`cast(sum(output_tokens) as text)`.as('output_tokens'),
      sql<string>`cast(sum(images) as text)`.as('images'),
      sql<string>`cast(sum(quantity) as text)`.as('quantity'),
      sql<string>`cast(sum(cost_picos) as text)`.as('cost_picos'),
    ])
    .where('realm_id', '=', realmId)
    .where('occurred_at', '>=', filter.from)
    .where('occurred_at', '<', filter.to);
  for (const group of groups) q = q.select(sql<string | null>`${sql.ref(group)}`.as(`g_${group}`));
  if (filter.type) q = q.where('type', '=', filter.type);
  if (filter.source) q = q.where('source', '=', filter.source);
  if (filter.agentId) q = q.where('agent_id', '=', filter.agentId);
  if (filter.providerId) q = q.where('provider_id', '=', filter.providerId);
  const rows = (await q
    .groupBy([...groups, 'currency'])
    .orderBy(sql`count(*)`, 'desc')
    .limit(limit)
    .execute()) as unknown as Record<string, string | number | null>[];
  return rows.map((row) => ({
    keys: groups.map((group) => (row[`g_${group}`] ?? null) as string | null),
    currency: row.currency as string | null,
    records: Number(row.records),
    input_tokens: Number(row.input_tokens ?? 0),
    output_tokens: Number(row.output_tokens ?? 0),
    images: Number(row.images ?? 0),
    quantity: Number(row.quantity ?? 0),
    cost_picos: String(row.cost_picos ?? '0'),
  }));
}
