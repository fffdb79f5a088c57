import { type App, sendIdempotent } from '@keel/core';
import { type Static, Type } from 'typebox';
import { IdempotencyHeaders } from '../http/schemas.ts';
import { principalOf } from '../identity/runtime-auth.ts';
import {
  component,
  JsonRecord,
  OneOf,
  PageQuery,
  page,
  ref,
  runtimeConfig,
  runtimeErrors,
  runtimeSecurity,
  Timestamp,
  Uuid,
} from '../runtime/http-schemas.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import {
  type AiUsageInput,
  aiUsageStats,
  exportUsage,
  listUsage,
  MAX_EXPORT_ROWS,
  MAX_SUMMARY_GROUPS,
  recordAiUsage,
  recordUsageEntry,
  toolUsageSummary,
  USAGE_SOURCES,
  USAGE_TYPES,
  type UsageEntryInput,
  usageTotals,
} from './usage-service.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Cost = Type.Record(Type.String({ pattern: '^[A-Z]{3}$' }), Type.String({ pattern: '^\\d+(\\.\\d+)?$' }), {
  description: 'Exact cost per currency as decimal text (up to 12 decimals)',
});

export const UsageRecordSchema = component(
  'RtUsageRecord',
  Type.Object({
    id: Type.String(),
    type: Type.String({ description: 'ai, tool or custom' }),
    source: Type.String({
      description:
        "chat or execute (recorded by the engine with the turn), flow (a durable flow execution's model or tool step, recorded with the step), tools (a REST tool call: execute, execute-parallel, aggregate, proxy), mcp (the public tool endpoint's execute tool), or api (reported by a client)",
    }),
    name: Nullable(Type.String({ description: 'The model (ai), the tool (tool) or the metric (custom)' })),
    provider_id: Nullable(Type.String()),
    agent_id: Nullable(Type.String()),
    tool_server_id: Nullable(Type.String()),
    session_id: Nullable(Type.String()),
    execution_id: Nullable(Type.String({ description: 'The turn that used it (chat and execute records)' })),
    flow_execution_id: Nullable(
      Type.String({ description: 'The durable flow execution whose step used it (flow records)' }),
    ),
    step_key: Nullable(Type.String({ description: 'That step (`<frame>/<node id>#<visit>`; flow records)' })),
    status: Nullable(
      Type.String({
        description:
          "The turn's execution status (chat and execute records); succeeded or failed for a tool call; succeeded for a flow's model call",
      }),
    ),
    input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    images: Type.Integer(),
    quantity: Type.Integer(),
    unit: Nullable(Type.String()),
    cost: Type.String({ description: 'Exact decimal text in `currency`' }),
    currency: Nullable(Type.String()),
    cost_source: Type.String({
      description:
        "provider_prices (computed by the engine from the provider's prices), caller (a tool or custom entry's own figure) or none",
    }),
    metadata: Nullable(JsonRecord()),
    occurred_at: Timestamp,
    created_at: Timestamp,
  }),
);
type UsageRecord = Static<typeof UsageRecordSchema>;

const TotalsSchema = {
  records: Type.Integer(),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  images: Type.Integer(),
  quantity: Type.Integer(),
  cost: Cost,
};
const Totals = Type.Object(TotalsSchema);

const WINDOW =
  "Window [from, to) on occurred_at: default the 30 days before now, at most 366 days (else 400). Sums are exact (integer pico-units added by the database) and kept apart per currency; a turn is one record (its execution id is unique) and a durable flow step's records are written with the step (a replayed step adds none), so nothing is counted twice.";

const WindowQuery = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive; default `to` − 30 days' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive; default now' })),
  agent_id: Type.Optional(Uuid()),
  provider_id: Type.Optional(Uuid()),
  source: Type.Optional(OneOf(USAGE_SOURCES)),
};
const FilterQuery = Type.Object({ ...WindowQuery, type: Type.Optional(OneOf(USAGE_TYPES)) });

const OccurredAt = Type.Optional(
  Type.String({ format: 'date-time', description: 'Default now; at most 5 minutes ahead and 366 days back' }),
);
const Reference = Type.String({ minLength: 1, maxLength: 36, pattern: '^[A-Za-z0-9._:-]+$' });
const Meta = Type.Optional(
  JsonRecord({ maxProperties: 30, description: 'Integration data; no secrets or personal data' }),
);

const AiUsageBody = Type.Object(
  {
    provider_id: Uuid({ description: "A provider of the token's realm: its prices and currency give the cost" }),
    agent_id: Type.Optional(Uuid()),
    model: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: "Default: the provider's text model" }),
    ),
    session_id: Type.Optional(Reference),
    input_tokens: Type.Integer({ minimum: 0, maximum: 100_000_000 }),
    output_tokens: Type.Integer({ minimum: 0, maximum: 100_000_000 }),
    images: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    occurred_at: OccurredAt,
    metadata: Meta,
  },
  { additionalProperties: false },
);

const UsageEntryBody = Type.Object(
  {
    type: OneOf(['tool', 'custom'] as const, {
      description: 'tool (a tool call) or custom (any metered metric); AI usage goes to POST /api/v1/runtime/ai/usage',
    }),
    name: Type.String({ minLength: 1, maxLength: 255, description: 'The tool name or the metric' }),
    quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, default: 1 })),
    unit: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'Default `call` for tools' })),
    agent_id: Type.Optional(Uuid()),
    tool_server_id: Type.Optional(Uuid()),
    session_id: Type.Optional(Reference),
    cost: Type.Optional(
      Type.Number({ minimum: 0, maximum: 999_999, description: "The caller's own cost figure (≤ 6 decimals)" }),
    ),
    currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'Required with cost' })),
    occurred_at: OccurredAt,
    metadata: Meta,
  },
  { additionalProperties: false },
);

export function registerUsageRoutes(app: App, rt: RuntimeContext): void {
  const base = { tags: ['usage'], security: runtimeSecurity };
  const RecordRef = ref<UsageRecord>('RtUsageRecord');
  app.post(
    '/api/v1/runtime/ai/usage',
    {
      schema: {
        ...base,
        summary: 'Record runtime AI usage',
        description:
          "Operator role or stronger. For model calls made outside the engine's own turns (chat and execute record theirs with the turn). The cost is never taken from the caller (a `cost` or `currency` field sent is dropped like any unknown field): it is computed exactly from the realm provider's prices per million input and output tokens and per image, in the provider's currency, when the record is written. An unknown or foreign provider or agent is a 404. `Idempotency-Key` (optional, 24 h): the same key and body answer the first record with `Idempotent-Replayed: true`, another body is a 409.",
        headers: IdempotencyHeaders,
        body: AiUsageBody,
        response: { 201: RecordRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await recordAiUsage(rt, principalOf(request), request.body as AiUsageInput, request.headers['idempotency-key']),
      ),
  );
  app.get(
    '/api/v1/runtime/ai/usage/stats',
    {
      schema: {
        ...base,
        summary: 'Provider and agent statistics',
        description: `Any role. AI usage (turns and reported usage) per provider, with each model's share, and per agent. ${WINDOW} At most ${MAX_SUMMARY_GROUPS} groups per list (\`truncated\`).`,
        querystring: Type.Object(WindowQuery),
        response: {
          200: Type.Object({
            realm_id: Type.String(),
            from: Timestamp,
            to: Timestamp,
            providers: Type.Array(
              Type.Object({
                provider_id: Nullable(Type.String()),
                ...TotalsSchema,
                average_tokens_per_record: Type.Number(),
                models: Type.Array(Type.Object({ model: Nullable(Type.String()), ...TotalsSchema })),
              }),
            ),
            agents: Type.Array(Type.Object({ agent_id: Nullable(Type.String()), ...TotalsSchema })),
            truncated: Type.Boolean(),
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) => aiUsageStats(rt, principalOf(request), request.query),
  );
  app.get(
    '/api/v1/usages',
    {
      schema: {
        ...base,
        summary: 'List usage entries',
        description: `Any role. Newest first; filters \`type\`, \`source\`, \`agent_id\`, \`provider_id\`. ${WINDOW}`,
        querystring: Type.Object({ ...PageQuery, ...FilterQuery.properties }),
        response: { 200: page(RecordRef), ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request) => listUsage(rt, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    '/api/v1/usages',
    {
      schema: {
        ...base,
        summary: 'Record a usage entry',
        description:
          "Operator role or stronger. A tool call or a custom metric. `cost` with `currency` is the caller's own figure (e.g. a paid API behind a tool) and is marked `cost_source: caller`; without it the entry costs nothing. AI usage is recorded through POST /api/v1/runtime/ai/usage, where the engine prices it. An unknown or foreign agent is a 404. `Idempotency-Key` as on every write.",
        headers: IdempotencyHeaders,
        body: UsageEntryBody,
        response: { 201: RecordRef, ...runtimeErrors },
      },
      config: runtimeConfig,
    },
    async (request, reply) =>
      sendIdempotent(
        request,
        reply,
        await recordUsageEntry(
          rt,
          principalOf(request),
          request.body as UsageEntryInput,
          request.headers['idempotency-key'],
        ),
      ),
  );
  app.get(
    '/api/v1/usages/summary',
    {
      schema: {
        ...base,
        summary: 'Realm and agent totals',
        description: `Any role. Totals of every usage type for the realm, records per turn status, and per agent. ${WINDOW}`,
        querystring: FilterQuery,
        response: {
          200: Type.Object({
            realm_id: Type.String(),
            from: Timestamp,
            to: Timestamp,
            totals: Totals,
            by_status: Type.Record(Type.String(), Type.Integer()),
            agents: Type.Array(Type.Object({ agent_id: Type.String(), ...TotalsSchema })),
            truncated: Type.Boolean(),
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) => usageTotals(rt, principalOf(request), request.query),
  );
  app.get(
    '/api/v1/usages/tools/summary',
    {
      schema: {
        ...base,
        summary: 'Tool usage and cost',
        description: `Any role. Tool entries per tool name and tool server: records, quantity (calls) and cost per currency. ${WINDOW}`,
        querystring: Type.Object(WindowQuery),
        response: {
          200: Type.Object({
            realm_id: Type.String(),
            from: Timestamp,
            to: Timestamp,
            totals: Type.Object({ records: Type.Integer(), quantity: Type.Integer(), cost: Cost }),
            tools: Type.Array(
              Type.Object({
                tool_name: Nullable(Type.String()),
                tool_server_id: Nullable(Type.String()),
                records: Type.Integer(),
                quantity: Type.Integer(),
                cost: Cost,
              }),
            ),
            truncated: Type.Boolean(),
          }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request) => toolUsageSummary(rt, principalOf(request), request.query),
  );
  app.post(
    '/api/v1/usages/export',
    {
      schema: {
        ...base,
        summary: 'Export usage as CSV or JSON',
        description: `Any role (an export writes nothing). The records of the window, newest first, streamed as they are read (pages of 500, so memory stays flat), with \`Content-Disposition: attachment\`. CSV: a header row, then one row per record (columns id, occurred_at, type, source, name, provider_id, agent_id, tool_server_id, session_id, execution_id, flow_execution_id, step_key, status, input_tokens, output_tokens, images, quantity, unit, cost, currency, cost_source); cells that a spreadsheet would run as formulas are escaped. JSON: \`{realm_id, from, to, data: [records]}\`. At most ${MAX_EXPORT_ROWS.toLocaleString('en')} records per export: narrow the window for more. ${WINDOW}`,
        body: Type.Object(
          { format: OneOf(['csv', 'json'] as const, { default: 'csv' }), ...FilterQuery.properties },
          { additionalProperties: false },
        ),
        response: {
          200: Type.String({ description: 'The export (text/csv or application/json), streamed' }),
          ...runtimeErrors,
        },
      },
      config: runtimeConfig,
    },
    async (request, reply) => {
      const { contentType, filename, body } = exportUsage(rt, principalOf(request), {
        ...request.body,
        format: request.body.format ?? 'csv',
      });
      return reply
        .header('content-type', contentType)
        .header('content-disposition', `attachment; filename="${filename}"`)
        .header('cache-control', 'no-store')
        .send(body as never);
    },
  );
}
