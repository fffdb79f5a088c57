import type { Kysely } from 'kysely';

// Usage (issue 15): the chat and execute turns recorded before usage records existed become usage records, so the
// realm's totals keep their history. Each execution becomes at most one record (execution_id is unique), and a rerun
// skips executions that have one. Frozen: reads only the execution table's columns as they were on this date.

const PAGE = 500;
const PICO_DIGITS = 12;

/** Decimal text → integer pico-units text; null for anything that is not a plain non-negative decimal. */
function picos(cost: unknown): string | null {
  if (typeof cost !== 'string' || !/^\d{1,12}(\.\d{1,12})?$/.test(cost)) return null;
  const [whole = '0', fraction = ''] = cost.split('.');
  return (BigInt(whole) * 10n ** BigInt(PICO_DIGITS) + BigInt(fraction.padEnd(PICO_DIGITS, '0'))).toString();
}

function json(value: unknown): Record<string, any> | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'object') return value as Record<string, any>;
  try {
    return JSON.parse(String(value));
  } catch {
    return null;
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom('execution as e')
      .leftJoin('usage_record as u', 'u.execution_id', 'e.id')
      .select([
        'e.id',
        'e.realm_id',
        'e.agent_id',
        'e.session_id',
        'e.kind',
        'e.status',
        'e.usage',
        'e.pinned',
        'e.result',
        'e.created_by',
        'e.created_at',
      ])
      .where('e.id', '>', after)
      .where('e.usage', 'is not', null)
      .where('u.id', 'is', null)
      .orderBy('e.id')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) return;
    const records = [];
    for (const row of rows) {
      const usage = json(row.usage);
      const cost = picos(usage?.cost);
      if (!usage || cost === null || typeof usage.currency !== 'string') continue;
      const model = json(row.result)?.routing?.model;
      const providerId = json(row.pinned)?.provider_id;
      records.push({
        // The execution's own id keeps the record's id time-ordered and unique (UUIDv7 of the turn).
        id: row.id,
        realm_id: row.realm_id,
        type: 'ai',
        source: row.kind === 'execute' ? 'execute' : 'chat',
        name: typeof model === 'string' ? model.slice(0, 255) : null,
        provider_id: typeof providerId === 'string' ? providerId : null,
        agent_id: row.agent_id,
        tool_server_id: null,
        session_id: row.session_id,
        execution_id: row.id,
        status: row.status,
        input_tokens: Number(usage.input_tokens ?? 0),
        output_tokens: Number(usage.output_tokens ?? 0),
        images: 0,
        quantity: 1,
        unit: 'request',
        cost_picos: cost,
        currency: usage.currency.slice(0, 3),
        cost_source: 'provider_prices',
        metadata: null,
        occurred_at: row.created_at,
        created_by: row.created_by,
        created_at: row.created_at,
      });
    }
    if (records.length > 0) await db.insertInto('usage_record').values(records).execute();
    after = rows[rows.length - 1]!.id;
  }
}

/** Removes the backfilled records only (their id is their execution's id; later turns' records have their own). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('usage_record').whereRef('id', '=', 'execution_id').execute();
}
